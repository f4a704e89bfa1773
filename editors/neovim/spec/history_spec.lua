-- Races this Neovim never watched: raced in another Neovim that has quit
-- since (an editor restart), then looked at here from what hydra recorded:
-- output buffers and :HydraLog from hydra/agentEvents, the raw log, an agent
-- that failed marked as unable to win and never offered for merging, and a
-- race every agent failed said to have no winner.

local H = require('helpers')
local race = require('hydra.race')
local ui = require('hydra.ui')

local find, index_of, line_with, open_scores = H.find, H.index_of, H.line_with, H.open_scores

-- Starts the races in another Neovim, waits until hydra has scored them
-- there, and quits it. Returns the race ids by task.
local function race_elsewhere(root, races)
  local nvim = assert(os.getenv('HYDRA_NVIM'), 'HYDRA_NVIM is not set (run scripts/test.sh)')
  local job = vim.fn.jobstart({ nvim, '--embed', '--headless', '--clean', '-n', '-i', 'NONE' }, { rpc = true, cwd = root })
  assert.is_true(job > 0)
  vim.rpcrequest(
    job,
    'nvim_exec_lua',
    [[
      local plugin, bin, root, races = ...
      vim.opt.runtimepath:prepend(plugin)
      vim.cmd('runtime plugin/hydra.lua')
      require('hydra').setup({ server = { cmd = { bin, 'serve' } }, window = { layout = 'none', scores_on_finish = false } })
      _G.spec_races = {}
      for task, agents in pairs(races) do
        require('hydra').race({ root = root, agents = agents, task = task, callback = function(err, r)
          _G.spec_races[task] = r and r.id or ('error: ' .. err.message)
        end })
      end
    ]],
    { H.plugin_dir, H.hydra_bin, root, races }
  )
  local finished = [[
    local race, protocol = require('hydra.race'), require('hydra.protocol')
    local n = 0
    for _, id in pairs(_G.spec_races) do
      local r = race.races[id]
      if r and r.rankings ~= nil and protocol.finished_race_states[r.state] then
        n = n + 1
      end
    end
    return n
  ]]
  local want = vim.tbl_count(races)
  for _ = 1, 600 do
    if vim.rpcrequest(job, 'nvim_exec_lua', finished, {}) == want then
      break
    end
    vim.wait(100)
  end
  local ids = vim.rpcrequest(job, 'nvim_exec_lua', 'return _G.spec_races', {})
  assert.are.equal(want, vim.rpcrequest(job, 'nvim_exec_lua', finished, {}), 'the races finished: ' .. vim.inspect(ids))
  vim.rpcnotify(job, 'nvim_command', 'qall!')
  assert.are.same({ 0 }, vim.fn.jobwait({ job }, 20000))
  return ids
end

describe('races from before a restart', function()
  local root, raced, crashed

  setup(function()
    root = H.prepare({ scores_on_finish = false })
    local ids = race_elsewhere(root, {
      ['make add() add'] = { 'fixer', 'replay', 'crasher' },
      ['crash'] = { 'crasher' },
    })
    raced, crashed = ids['make add() add'], ids['crash']
    assert.truthy(raced:match('^%d+%-%d+%-%x+$'), raced)
    assert.truthy(crashed:match('^%d+%-%d+%-%x+$'), crashed)
    assert.is_nil(race.races[raced], 'this Neovim never saw the race')
  end)

  teardown(H.clean_up)
  after_each(H.checked)

  it(':HydraLog shows what the agent did, read from the events hydra stored', function()
    vim.cmd('HydraLog ' .. raced .. ' replay')
    local hydra = require('hydra')
    local buf
    H.wait(function()
      buf = H.find_buffer(hydra.log_key(raced, 'replay'))
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf
    end, 'the transcript')
    assert.are.equal('hydra: replay log (race ' .. raced .. ')', vim.fn.pathshorten(vim.fn.bufname(buf)))
    local lines = H.buffer_lines(buf)
    -- Its words, its tools, the files it changed and its summary, each marked.
    assert.is_not_nil(index_of(lines, "I'll create the file."), table.concat(lines, '\n'))
    for text, group in pairs({
      ['→ Write /WORK/repo/hello.txt'] = 'HydraToolCall',
      ['  ← Bash: hello fake model ?? hello.txt'] = 'HydraToolResult',
      ['✎ add /WORK/repo/hello.txt'] = 'HydraFileChange',
      ['■ done · 4 turns · tokens: 400 in, 80 out, 0 cached · $0.0040'] = 'HydraSummary',
    }) do
      local at = index_of(lines, text)
      assert.is_not_nil(at, text .. ' in:\n' .. table.concat(lines, '\n'))
      assert.are.equal(group, H.highlight_at(buf, ui.ns, at - 1, 0), text)
    end
    -- The events, not the JSON they were read from; what no event holds is in the raw log.
    for _, l in ipairs(lines) do
      assert.is_false(race.looks_like_json(l), l)
    end
    assert.is_nil(index_of(lines, 'warning: this line is not JSON'))
    local _, stored = H.request(root, 'hydra/agentEvents', { raceId = raced, agentId = 'replay' })
    assert.is_true(stored.total > 0)
  end)

  it(':HydraLog ... raw shows the log as the agent printed it', function()
    vim.cmd('HydraLog ' .. raced .. ' replay raw')
    local hydra = require('hydra')
    local buf
    H.wait(function()
      buf = H.find_buffer(hydra.log_key(raced, 'replay', true))
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf
    end, 'the raw log')
    assert.are.equal('hydra: replay raw log (race ' .. raced .. ')', vim.fn.pathshorten(vim.fn.bufname(buf)))
    local lines = H.buffer_lines(buf)
    assert.truthy(race.looks_like_json(lines[1]), lines[1])
    assert.is_not_nil(index_of(lines, 'warning: this line is not JSON'))
  end)

  it("fills an old race's output buffers from what hydra recorded, and marks the agent that cannot win", function()
    local r
    race.lookup(root, raced, function(err, found)
      assert.is_nil(err)
      r = found
    end)
    H.wait(function()
      return r ~= nil
    end, 'the race')
    race.show(r, 'tab')
    local replay = H.find_buffer(race.output_key(raced, 'replay'))
    local crasher = H.find_buffer(race.output_key(raced, 'crasher'))
    local fixer = H.find_buffer(race.output_key(raced, 'fixer'))
    H.wait(function()
      race.flush()
      return find(H.buffer_text(crasher), 'quota exceeded') and find(H.buffer_text(replay), '■ completed')
        and find(H.buffer_text(fixer), '■ completed')
    end, 'the recorded output')
    H.wait(function()
      return find(H.buffer_lines(crasher)[1], 'cannot win')
    end, "the header's mark")

    -- The replay's transcript, from its events.
    local replay_lines = H.buffer_lines(replay)
    assert.is_not_nil(index_of(replay_lines, '→ Write /WORK/repo/hello.txt'))
    assert.is_not_nil(index_of(replay_lines, "I'll create the file."))
    -- A plain command's output is its log; then how it ended, and why.
    local lines = H.buffer_lines(crasher)
    assert.are.equal('hydra · crasher · failed · failed: cannot win · race completed', lines[1])
    local note = index_of(lines, 'crash: the model refused: quota exceeded')
    assert.is_not_nil(note, table.concat(lines, '\n'))
    local ns = vim.api.nvim_create_namespace('hydra-output')
    assert.are.equal('HydraStderr', H.highlight_at(crasher, ns, note - 1, 0))
    assert.is_not_nil(index_of(lines, 'crash: fixing add()'))
    local ended = line_with(lines, '■ failed · exit 3')
    assert.are.equal('HydraError', H.highlight_at(crasher, ns, ended - 1, 0))
    assert.are.equal('exited with code 3: crash: the model refused: quota exceeded', lines[ended + 1])
    assert.are.equal('hydra · fixer · completed · race completed', H.buffer_lines(fixer)[1])
    assert.is_not_nil(index_of(H.buffer_lines(fixer), 'fix: done'))
  end)

  it(':HydraScores marks the agent that failed, shows its error, and m does not merge it', function()
    local buf = open_scores(raced)
    local _, scores = H.request(root, 'hydra/scores', { raceId = raced })
    -- crasher's work passes the checks, but it failed: ranked after the agents that can win.
    local last = scores.rankings[#scores.rankings]
    assert.are.same({ 'crasher', false, 'failed' }, { last.agentId, last.eligible, last.ineligible })
    assert.are.equal('fixer', scores.winner)
    local lines = H.buffer_lines(buf)
    local at = line_with(lines, '  #' .. last.rank .. '  crasher ')
    assert.truthy(find(lines[at], '(failed: cannot win)'), lines[at])
    assert.are.equal('      exited with code 3: crash: the model refused: quota exceeded', lines[at + 1])
    assert.are.equal('HydraError', H.highlight_at(buf, ui.ns, at, 6))
    assert.is_not_nil(index_of(lines, 'Winner: fixer (branch: ' .. race.races[raced].agents.fixer.branch .. ')'))

    -- m on its line says why not, and asks nothing.
    H.answer_selects({})
    vim.api.nvim_win_set_cursor(0, { at, 0 })
    vim.api.nvim_feedkeys('m', 'x', false)
    H.wait_message('hydra: crasher cannot be merged (failed: cannot win)', vim.log.levels.WARN)
    assert.are.equal(0, #H.selects)
  end)

  it(":HydraMerge of an agent that failed shows hydra's refusal and changes nothing", function()
    local head = H.git(root, 'rev-parse', 'HEAD')[1]
    local merge_err = H.refused_merge({ race = raced, agent = 'crasher' })
    assert.are.same({ -32015, 'ineligible', 'failed' }, { merge_err.code, merge_err.data.reason, merge_err.data.ineligible })
    local errors = H.take_errors()
    assert.are.equal(1, #errors, table.concat(errors, '\n'))
    assert.truthy(find(errors[1], 'crasher') and find(errors[1], merge_err.message), errors[1])
    assert.are.equal(0, #H.selects)
    assert.are.equal(head, H.git(root, 'rev-parse', 'HEAD')[1])
  end)

  it('says a race every agent failed has no winner, and has nothing to merge', function()
    local buf = open_scores(crashed)
    local lines = H.buffer_lines(buf)
    local at = index_of(lines, 'All agents failed: no winner (none finished with a change that could be merged).')
    assert.is_not_nil(at, table.concat(lines, '\n'))
    assert.are.equal('HydraScorePoor', H.highlight_at(buf, ui.ns, at - 1, 0))
    assert.is_false(find(H.buffer_text(buf), 'Winner:'))
    vim.api.nvim_feedkeys('q', 'x', false)

    H.answer_selects({})
    local head = H.git(root, 'rev-parse', 'HEAD')[1]
    require('hydra').merge({ race = crashed })
    H.wait_message('hydra: race ' .. crashed .. ': All agents failed: no winner to merge', vim.log.levels.WARN)
    assert.are.equal(head, H.git(root, 'rev-parse', 'HEAD')[1])

    H.open_status(root)
    local row = H.buffer_lines(0)[line_with(H.buffer_lines(0), crashed)]
    assert.truthy(find(row, 'All agents failed: no winner'), row)
    vim.api.nvim_feedkeys('q', 'x', false)
  end)
end)
