-- The other commands, each against the real hydra binary: asking for the
-- task and the agents, cancelling, the race list, a merge that would
-- conflict, errors the server returns, and batched output.

local H = require('helpers')
local race = require('hydra.race')

local function find(haystack, needle)
  return haystack:find(needle, 1, true) ~= nil
end

-- Waits for a race newer than `previous` to start in `root`; returns it.
local function next_race(root, previous)
  H.wait(function()
    local id = race.latest_id(root)
    return id ~= nil and id ~= previous
  end, 'a new race to start')
  return race.races[race.latest_id(root)]
end

describe('commands', function()
  local root

  setup(function()
    H.capture_notifications()
    root = H.make_repo({ SPEC_LINES = '2000' })
    vim.cmd('cd ' .. vim.fn.fnameescape(root))
  end)

  before_each(function()
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } }, window = { scores_on_finish = false } })
  end)

  after_each(function()
    H.assert_no_errors()
    H.restore_ui()
    H.reset_windows()
  end)

  teardown(function()
    H.stop_servers()
    H.restore_notifications()
  end)

  it(':HydraRace lets the user pick the agents in one list, then asks for the task', function()
    local unavailable, known = H.unavailable_agent(root)
    local picker = require('hydra.picker')
    H.answer_inputs({ 'make add() add' })
    H.answer_selects({})
    local previous = race.latest_id(root)
    vim.cmd('HydraRace')
    local buf
    H.wait(function()
      buf = H.find_buffer(picker.key(root))
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf
    end, 'the list of agents')
    local win = vim.api.nvim_get_current_win()
    assert.are_not.equal('', vim.api.nvim_win_get_config(win).relative, 'a floating window')
    assert.truthy(find(vim.wo[win].winhighlight, 'NormalFloat:HydraFloat'), vim.wo[win].winhighlight)
    assert.are.same({}, H.inputs, 'the agents come first')

    -- The list: "  [x] name  about", one line per agent.
    local function listed()
      local out = {}
      for i, l in ipairs(H.buffer_lines(buf)) do
        local box, name, rest = l:match('^  (%[.%]) (%S+)%s*(.*)$')
        if box then
          table.insert(out, { line = i, box = box, name = name, rest = rest })
        end
      end
      return out
    end
    local function item(name)
      for _, i in ipairs(listed()) do
        if i.name == name then
          return i
        end
      end
      error('no line for ' .. name .. ' in:\n' .. H.buffer_text(buf))
    end
    local function press(name, keys)
      vim.api.nvim_win_set_cursor(win, { item(name).line, 0 })
      vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'x', false)
    end

    -- Every agent hydra/agents knows, once, the available ones first and
    -- picked when hydra.toml defines them; the others marked with why not.
    local items = listed()
    assert.are.equal(#known.agents, #items)
    local seen_unavailable = false
    for _, i in ipairs(items) do
      if i.box == '[-]' then
        seen_unavailable = true
        assert.truthy(find(i.rest, 'not available: '), i.rest)
      else
        assert.is_false(seen_unavailable, i.name .. ' is available but listed after an unavailable agent')
        assert.are.equal(vim.tbl_contains(H.agent_names, i.name) and '[x]' or '[ ]', i.box, i.name)
      end
    end
    assert.are.equal(
      'not available: ' .. require('hydra.ui').short_problem(unavailable.problem),
      item(unavailable.name).rest
    )

    -- An agent that is not available cannot be picked: it says why.
    press(unavailable.name, '<Space>')
    local warning = H.wait_message(unavailable.name .. ' cannot race here', vim.log.levels.WARN)
    assert.are.equal('hydra: ' .. unavailable.name .. ' cannot race here: ' .. unavailable.problem, warning)
    assert.are.equal('[-]', item(unavailable.name).box)

    -- Nothing picked: <CR> says so and the list stays.
    for _, name in ipairs(H.agent_names) do
      press(name, name == 'breaker' and 'x' or '<Space>')
    end
    assert.are.equal('[ ]', item('fixer').box)
    press('fixer', '<CR>')
    H.wait_message('pick at least one agent', vim.log.levels.WARN)
    assert.are.equal(buf, vim.api.nvim_get_current_buf())

    -- fixer, twice: picked, once more, once more, once fewer.
    press('fixer', '<Space>')
    press('fixer', '+')
    press('fixer', '+')
    assert.are.equal('[3]', item('fixer').box)
    press('fixer', '-')
    assert.are.equal('[2]', item('fixer').box)
    press('fixer', '<CR>')
    assert.is_nil(H.find_buffer(picker.key(root)), 'the list closes')

    local r = next_race(root, previous)
    assert.are.same({ 'fixer-1', 'fixer-2' }, r.order)
    assert.are.equal('make add() add', r.task)
    assert.are.same({ 'Task for the agents: ' }, H.inputs)
    H.wait_race(r.id)
  end)

  it('says which agents it cannot race, and why, before anything starts', function()
    local unavailable = H.unavailable_agent(root)
    local short = require('hydra.ui').short_problem(unavailable.problem)
    local _, before = H.request(root, 'hydra/races', { limit = 500 })
    local tabs = vim.fn.tabpagenr('$')
    H.answer_inputs({})
    H.answer_selects({})
    local function refusal(command)
      vim.cmd(command)
      H.wait(function()
        return #H.messages(vim.log.levels.ERROR) > 0
      end, 'the refusal of ' .. command)
      local errors = H.take_errors()
      assert.are.equal(1, #errors, table.concat(errors, '\n'))
      return errors[1]
    end

    -- Without a task: before asking for one.
    assert.are.equal(
      "hydra: the race did not start: unknown agent 'fixr'; did you mean 'fixer'?; "
        .. unavailable.name
        .. ' cannot race here: '
        .. short,
      refusal('HydraRace fixr ' .. unavailable.name .. ' fixer')
    )
    assert.are.same({}, H.inputs, 'no task asked for')

    -- With one: hydra refuses the race as a whole, and says it the same way
    -- (its UnknownAgentName carries the suggestion, AgentUnavailable the problem).
    local err = H.request(root, 'hydra/race', { task = 'x', agents = { 'fixer', 'brekaer' } })
    assert.are.same({ -32012, 'breaker' }, { err.code, err.data.suggestion })
    assert.are.equal(
      "hydra: the race did not start: unknown agent 'brekaer'; did you mean 'breaker'?",
      refusal('HydraRace fixer brekaer -- make add() add')
    )
    err = H.request(root, 'hydra/race', { task = 'x', agents = { 'fixer', unavailable.name } })
    assert.are.same({ -32022, unavailable.problem }, { err.code, err.data.problem })
    assert.are.equal(
      'hydra: the race did not start: ' .. unavailable.name .. ' cannot race here: ' .. short,
      refusal('HydraRace fixer ' .. unavailable.name .. ' -- make add() add')
    )
    -- A name like none hydra knows.
    assert.are.equal(
      "hydra: the race did not start: unknown agent 'zzzzzz': hydra.toml has no [agents.zzzzzz] and no adapter has that name (:HydraRace <Tab> lists the names)",
      refusal('HydraRace zzzzzz')
    )

    -- Nothing started: no race, no window.
    local _, after = H.request(root, 'hydra/races', { limit = 500 })
    assert.are.equal(before.total, after.total)
    assert.are.equal(tabs, vim.fn.tabpagenr('$'))
    assert.are.same({}, H.inputs)
  end)

  it('suggests the agent a mistyped name looks like, by the rule hydra uses', function()
    local names = { 'claude', 'codex', 'opencode', 'claude-acp' }
    assert.are.equal('claude', race.closest_name('claud', names))
    assert.are.equal('claude', race.closest_name('Cluade', names))
    assert.are.equal('opencode', race.closest_name('open', names))
    assert.are.equal('codex', race.closest_name('codx', names))
    assert.is_nil(race.closest_name('gemini', names))
    assert.is_nil(race.closest_name('cl', names))
  end)

  it(':HydraRace races the default agents of setup() without asking', function()
    require('hydra').setup({
      server = { cmd = { H.hydra_bin, 'serve' } },
      agents = { 'breaker' },
      window = { layout = 'none', scores_on_finish = false },
    })
    H.answer_selects({})
    H.answer_inputs({})
    local previous = race.latest_id(root)
    vim.cmd('HydraRace -- break it')
    local r = next_race(root, previous)
    assert.are.same({ 'breaker' }, r.order)
    assert.are.equal(1, vim.fn.tabpagenr('$'), "layout 'none' opens no window")
    H.wait_race(r.id)
  end)

  it("reports the server's errors through vim.notify with the server's message", function()
    local errors
    local unknown = H.request(root, 'hydra/diff', { raceId = race.latest_id(root), agentId = 'nobody' })
    vim.cmd('HydraDiff nobody')
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the error')
    errors = H.take_errors()
    assert.are.equal(1, #errors)
    assert.truthy(find(errors[1], unknown.message), errors[1])
  end)

  it(':HydraCancel cancels one agent while the others run on', function()
    local previous = race.latest_id(root)
    vim.cmd('HydraRace sleeper fixer -- think hard')
    local r = next_race(root, previous)
    local sleeper = H.find_buffer(race.output_key(r.id, 'sleeper'))
    H.wait(function()
      return find(H.buffer_text(sleeper), 'sleep: thinking for a long time')
    end, 'the sleeper to think')

    -- Scores of a running race: hydra says why not, and the user reads it.
    local not_scored = H.request(root, 'hydra/scores', { raceId = r.id })
    vim.cmd('HydraScores')
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the error')
    local errors = H.take_errors()
    assert.are.equal(1, #errors)
    assert.truthy(find(errors[1], not_scored.message), errors[1])

    vim.cmd('HydraCancel sleeper')
    H.wait_message('hydra: cancelled sleeper of race ' .. r.id)
    local finished = H.wait_race(r.id)
    assert.are.equal('cancelled', finished.agents.sleeper.state)
    assert.are.equal('completed', finished.agents.fixer.state)
    assert.are.equal('completed', finished.state)
    race.flush()
    assert.truthy(find(H.buffer_text(sleeper), '■ cancelled'))
    assert.truthy(find(H.buffer_lines(sleeper)[1], 'sleeper · cancelled'))

    vim.cmd('HydraCancel')
    H.wait_message('hydra: nothing to cancel: race ' .. r.id .. ' had already finished')
  end)

  it(':HydraStatus lists the races and their agents', function()
    local _, status = H.request(root, 'hydra/status')
    H.open_status(root)
    local text = H.buffer_text(0)
    assert.is_true(#status.races >= 3)
    for _, summary in ipairs(status.races) do
      assert.truthy(find(text, summary.raceId .. '  ' .. summary.state), summary.raceId)
      for _, a in ipairs(summary.agents) do
        assert.truthy(text:find('\n    ' .. vim.pesc(a.agentId) .. '%s+' .. a.state), a.agentId)
      end
    end
  end)

  it(':HydraMerge lists the conflicts and changes nothing', function()
    local r = H.start_race(root, { 'fixer' }, 'make add() add')
    H.wait_race(r.id)
    -- Meanwhile the user fixed the same line differently.
    local lib = root .. '/lib.sh'
    H.write_file(lib, (H.read_file(lib):gsub('%$%(%( %$1 %- %$2 %)%)', '$(( $2 + $1 ))')))
    H.git(root, 'commit', '-q', '-am', 'add: add, the other way round')
    local head = H.git(root, 'rev-parse', 'HEAD')[1]
    local before = H.read_file(lib)

    H.answer_selects({})
    vim.cmd('HydraMerge fixer')
    local warning = H.wait_message('would conflict', vim.log.levels.WARN)
    assert.truthy(find(warning, 'lib.sh'), warning)
    assert.truthy(find(warning, 'nothing was changed'), warning)
    local qf = vim.fn.getqflist()
    assert.are.equal(1, #qf)
    assert.are.equal(vim.fn.resolve(lib), vim.fn.resolve(vim.api.nvim_buf_get_name(qf[1].bufnr)))
    assert.are.equal(head, H.git(root, 'rev-parse', 'HEAD')[1])
    assert.are.same({}, H.git(root, 'status', '--porcelain'))
    assert.are.equal(before, H.read_file(lib))
  end)

  it("renders a CLI's parsed stream readably: text, tool calls, file changes", function()
    local r = H.start_race(root, { 'replay' }, 'write hello')
    H.wait_race(r.id)
    race.flush()
    local buf = H.find_buffer(race.output_key(r.id, 'replay'))
    local lines = H.buffer_lines(buf)
    local ns = vim.api.nvim_create_namespace('hydra-output')
    local function line_of(text)
      for i, l in ipairs(lines) do
        if l == text then
          return i
        end
      end
      error('no line "' .. text .. '" in:\n' .. table.concat(lines, '\n'))
    end
    local function group_of(text)
      return H.highlight_at(buf, ns, line_of(text) - 1, 0)
    end
    -- The assistant's words, as they are.
    line_of("I'll create the file.")
    line_of('Done: created and edited hello.txt.')
    -- Tools called, their results, the files changed, each marked.
    assert.are.equal('HydraToolCall', group_of('→ Write /WORK/repo/hello.txt'))
    assert.are.equal('HydraToolCall', group_of('→ Bash cat hello.txt && git status --short'))
    assert.are.equal('HydraToolResult', group_of('  ← Bash: hello fake model ?? hello.txt'))
    assert.are.equal('HydraFileChange', group_of('✎ add /WORK/repo/hello.txt'))
    assert.are.equal('HydraFileChange', group_of('✎ update /WORK/repo/hello.txt'))
    assert.are.equal('HydraSummary', group_of('■ done · 4 turns · tokens: 400 in, 80 out, 0 cached · $0.0040'))
    -- The line the adapter could not read is shown as printed; no raw JSON is.
    line_of('warning: this line is not JSON')
    for _, l in ipairs(lines) do
      assert.is_false(race.looks_like_json(l), l)
    end
    -- The final message is said once, not again by the summary.
    local count = 0
    for _, l in ipairs(lines) do
      count = count + (l == 'Done: created and edited hello.txt.' and 1 or 0)
    end
    assert.are.equal(1, count)
  end)

  it('says when every agent failed that there is no winner, and why the agent failed', function()
    local r = H.start_race(root, { 'crasher' }, 'crash')
    H.wait_race(r.id)
    race.flush()
    -- No agent completed: hydra records the race itself as failed, scored all the same.
    H.wait_message('hydra: race ' .. r.id .. ' failed; All agents failed: no winner', vim.log.levels.WARN)
    local lines = H.buffer_lines(H.find_buffer(race.output_key(r.id, 'crasher')))
    assert.are.equal('hydra · crasher · failed · failed: cannot win · race failed · All agents failed: no winner', lines[1])
    local ended
    for i, l in ipairs(lines) do
      if l:find('^■ failed · exit 3') then
        ended = i
      end
    end
    assert.is_not_nil(ended, table.concat(lines, '\n'))
    assert.are.equal('exited with code 3: crash: the model refused: quota exceeded', lines[ended + 1])
  end)

  it('writes a chatty agent to its buffer in batches, every line in order or said to be left out', function()
    local r = H.start_race(root, { 'chatty' }, 'talk')
    local buf = H.find_buffer(race.output_key(r.id, 'chatty'))
    local updates = 0
    vim.api.nvim_buf_attach(buf, false, {
      on_lines = function()
        updates = updates + 1
      end,
    })
    H.wait_race(r.id)
    race.flush()
    local lines = H.buffer_lines(buf)
    -- On a busy machine hydra may leave lines out for a client that reads too
    -- slowly (docs/protocol.md, "Slow clients"): the buffer then says how many,
    -- where. Every line is either there, in order, or counted in such a note.
    local shown, left_out, last = 0, 0, 0
    for _, l in ipairs(lines) do
      local n = tonumber(l:match('^chatty: line (%d+)$'))
      if n then
        assert.is_true(n > last, 'line ' .. n .. ' after line ' .. last)
        last, shown = n, shown + 1
      end
      local dropped = tonumber(l:match('^… (%d+) line%(s%) left out here'))
      if dropped then
        left_out = left_out + dropped
      end
    end
    assert.is_true(shown > 0, 'no line shown')
    assert.are.equal(2000, shown + left_out, shown .. ' lines shown, ' .. left_out .. ' said to be left out')
    -- 2000 lines, a handful of updates: hydra sends batches and the plugin
    -- writes what arrived in one update per tick.
    assert.is_true(updates < 100, updates .. ' buffer updates')
  end)
end)
