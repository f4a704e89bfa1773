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

  it(':HydraRace asks for the task, then for all the agents in one question', function()
    local _, known = H.request(root, 'hydra/agents')
    local unavailable
    for _, a in ipairs(known.agents) do
      if not a.available then
        unavailable = unavailable or a
      end
    end
    assert.is_not_nil(unavailable, 'hydra/agents lists an agent that is not installed here')
    local listed = {}
    H.answer_inputs({
      'make add() add',
      function(opts)
        -- The list, numbered, available agents first; what cannot race is marked.
        for line in opts.prompt:gmatch('[^\n]+') do
          local n, name, rest = line:match('^%s*(%d+)  (%S+)%s*(.*)$')
          if n then
            listed[tonumber(n)] = { name = name, rest = rest }
          end
        end
        for n, item in ipairs(listed) do
          if item.name == unavailable.name then
            return n .. ' fixer'
          end
        end
        error('the prompt does not list ' .. unavailable.name .. ':\n' .. opts.prompt)
      end,
      function()
        return 'fixer'
      end,
    })
    H.answer_selects({})
    local previous = race.latest_id(root)
    vim.cmd('HydraRace')
    local r = next_race(root, previous)
    assert.are.same({ 'fixer' }, r.order)
    assert.are.equal('make add() add', r.task)
    assert.are.equal(3, #H.inputs, 'the task, the agents, the agents again after the refusal')
    assert.are.equal('Task for the agents: ', H.inputs[1])

    -- Every agent hydra/agents knows is listed once, available ones first.
    assert.are.equal(#known.agents, #listed)
    local available = {}
    for _, a in ipairs(known.agents) do
      available[a.name] = a.available
    end
    local seen_unavailable = false
    for n, item in ipairs(listed) do
      if available[item.name] then
        assert.is_false(seen_unavailable, item.name .. ' is available but listed after an unavailable agent')
      else
        seen_unavailable = true
        assert.truthy(find(item.rest, 'not available'), item.rest)
      end
      -- The default answer: hydra.toml's agents (all available here).
      assert.are.equal(vim.tbl_contains(H.agent_names, item.name), vim.tbl_contains(vim.split(H.input_opts[2].default, ' '), tostring(n)))
    end
    -- An agent that is not available cannot be picked: the question comes
    -- back with the answer to fix, and says why.
    local warning = H.wait_message(unavailable.name .. ' is not available', vim.log.levels.WARN)
    assert.truthy(find(warning, (unavailable.problem:gsub(' %(.*$', ''))), warning)
    assert.truthy(H.input_opts[3].default:find(' fixer$'), H.input_opts[3].default)
    H.wait_race(r.id)
  end)

  it('reads the agents picked by number or name, once or more', function()
    local agents = {
      { name = 'fixer', available = true },
      { name = 'breaker', available = true },
      { name = 'claude', available = false, problem = "'claude' not found on PATH" },
    }
    local hydra = require('hydra')
    assert.are.same({ 'fixer', 'breaker', 'fixer' }, hydra.parse_agent_choice('1, breaker 1', agents))
    local names, problem = hydra.parse_agent_choice('3 7 codex', agents)
    assert.is_nil(names)
    assert.are.equal(
      "claude is not available: 'claude' not found on PATH; no agent '7' in the list; no agent 'codex' in the list",
      problem
    )
    assert.are.same({ nil, 'no agent chosen' }, { hydra.parse_agent_choice(' , ', agents) })
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
    local err = H.request(root, 'hydra/race', { task = 'x', agents = { 'nobody' } })
    assert.is_not_nil(err)
    vim.cmd('HydraRace nobody -- do it')
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the error')
    local errors = H.take_errors()
    assert.are.equal(1, #errors)
    assert.truthy(find(errors[1], err.message), errors[1])

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
    vim.cmd('HydraStatus')
    H.wait(function()
      local buf = H.find_buffer('hydra://' .. root .. '/status')
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf
    end, 'the race list')
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

  it('writes a chatty agent to its buffer in batches, every line in order', function()
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
    local expected, at = 1, 1
    while at <= #lines and expected <= 2000 do
      if lines[at] == 'chatty: line ' .. expected then
        expected = expected + 1
      end
      at = at + 1
    end
    assert.are.equal(2001, expected, 'every line, in order')
    -- 2000 lines, a handful of updates: hydra sends batches and the plugin
    -- writes what arrived in one update per tick.
    assert.is_true(updates < 100, updates .. ' buffer updates')
  end)
end)
