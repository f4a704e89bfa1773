-- A race gives one result: once merged it shows as merged (which agent, into
-- which branch) and offers no second merge. Against the real hydra binary:
-- a race merged from this Neovim, one merged by another client while its
-- scoreboard was open, one hydra merged by itself (auto_merge), and one whose
-- auto-merge hydra could not make; then what the scoreboard says of merging
-- by itself, from hand-made hydra/scores answers.

local H = require('helpers')
local S = require('scores_by_hand')
local race = require('hydra.race')
local ui = require('hydra.ui')

local find, line_with, no_line_with, open_scores = H.find, H.line_with, H.no_line_with, H.open_scores

-- The line of the scoreboard in the current window that ranks `agent`.
local function rank_line(agent)
  for i, l in ipairs(H.buffer_lines(0)) do
    if l:find('^  #%d+  ' .. agent .. ' ') then
      return i
    end
  end
  error('no line for ' .. agent .. ' in:\n' .. H.buffer_text(0))
end

local function head(root)
  return H.git(root, 'rev-parse', 'HEAD')[1]
end

-- Prepares the describe block it is called in: a fresh repository with
-- `scoring` lines in its hydra.toml and the plugin, the scoreboard opening
-- when a race ends or not; everything undone after. Returns a table whose
-- `root` is the repository once the block runs.
local function racing(scores_on_finish, scoring)
  local state = {}
  setup(function()
    state.root = H.prepare({ layout = 'none', scores_on_finish = scores_on_finish }, nil, scoring)
  end)
  teardown(H.clean_up)
  after_each(H.checked)
  return state
end

describe('a race merged from Neovim', function()
  local repo = racing(false)
  local root, r, merged_at

  setup(function()
    root = repo.root
    r = H.start_race(root, { 'fixer', 'breaker' }, 'make add() add')
    H.wait_race(r.id)
  end)

  it('is shown merged on the scoreboard right after m merged its winner there', function()
    local before = open_scores(r.id)
    line_with(H.buffer_lines(before), ' · m merge · ')
    H.answer_selects({
      function(items)
        return items[1]
      end,
    })
    vim.api.nvim_win_set_cursor(0, { rank_line('fixer'), 0 })
    vim.api.nvim_feedkeys('m', 'x', false)
    H.wait_message('hydra: merged ' .. r.agents.fixer.branch .. ' into main (fast-forward')
    assert.are.equal('Merge', H.selects[1].items[1])

    -- The scoreboard is back, saying what was merged, where and how.
    local key = 'hydra://' .. r.id .. '/scores'
    H.wait(function()
      local buf = H.find_buffer(key)
      return buf ~= nil and buf ~= before and vim.api.nvim_get_current_buf() == buf
    end, 'the scoreboard again')
    merged_at = head(root)
    local buf = vim.api.nvim_get_current_buf()
    local lines = H.buffer_lines(buf)
    local merged = 'Merged: fixer into main (fast-forward, now at ' .. merged_at:sub(1, 12) .. ')'
    local at = line_with(lines, merged)
    assert.are.equal(merged, lines[at])
    assert.are.equal('HydraMerged', H.highlight_at(buf, ui.ns, at - 1, 0))
    local fixer = lines[rank_line('fixer')]
    assert.truthy(fixer:find('  ✓ merged$'), fixer)
    assert.is_nil(lines[rank_line('breaker')]:find('merged', 1, true))
    -- Its branch is gone with the merge; the keys offer no merge any more.
    assert.is_not_nil(H.index_of(lines, 'Winner: fixer'), table.concat(lines, '\n'))
    no_line_with(lines, r.agents.fixer.branch)
    assert.are.equal('<CR> details · d diff · L log · q close  (on an agent\'s line)', lines[#lines])
    vim.api.nvim_feedkeys('q', 'x', false)
  end)

  it(':HydraStatus marks the race merged, and the agent that was', function()
    local _, status = H.request(root, 'hydra/status', { raceId = r.id })
    local merged = status.races[1].merged
    assert.are.same({ 'fixer', 'fastForward', 'main', merged_at }, { merged.agentId, merged.outcome, merged.targetBranch, merged.commit })

    H.open_status(root)
    local lines = H.buffer_lines(0)
    local row = line_with(lines, r.id)
    assert.truthy(find(lines[row], '  ✓ merged: fixer into main (fast-forward, now at ' .. merged_at:sub(1, 12) .. ')'), lines[row])
    assert.are.equal('HydraMerged', H.highlight_at(0, ui.ns, row - 1, #lines[row] - 2))
    local fixer, breaker = line_with(lines, '    fixer '), line_with(lines, '    breaker ')
    assert.truthy(lines[fixer]:find('  ✓ merged$'), lines[fixer])
    assert.is_nil(lines[breaker]:find('merged', 1, true), lines[breaker])
    vim.api.nvim_feedkeys('q', 'x', false)
  end)

  it('offers no second merge: m on the scoreboard and in the details says it was merged already', function()
    H.answer_selects({})
    local said = ui.merged_already_text(r.id, { agentId = 'fixer', outcome = 'fastForward', targetBranch = 'main', commit = merged_at })
    assert.are.equal(
      'hydra: race ' .. r.id .. ' was merged already: fixer into main (fast-forward, now at ' .. merged_at:sub(1, 12) .. '); it has nothing more to merge',
      said
    )
    open_scores(r.id)
    vim.api.nvim_win_set_cursor(0, { rank_line('breaker'), 0 })
    vim.api.nvim_feedkeys('m', 'x', false)
    assert.are.equal(said, H.wait_message('was merged already', vim.log.levels.WARN))

    H.notifications = {}
    open_scores(r.id)
    vim.api.nvim_win_set_cursor(0, { rank_line('fixer'), 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    local details = H.buffer_lines(0)
    assert.are.equal('✓ merged: fixer into main (fast-forward, now at ' .. merged_at:sub(1, 12) .. ')', details[2])
    no_line_with(details, 'm merge')
    vim.api.nvim_feedkeys('m', 'x', false)
    assert.are.equal(said, H.wait_message('was merged already', vim.log.levels.WARN))

    assert.are.equal(0, #H.selects)
    assert.are.equal(merged_at, head(root))
  end)

  it(":HydraMerge of its winner shows hydra's alreadyMerged message, once, and asks nothing", function()
    H.notifications = {}
    local merge_err = H.refused_merge({ race = r.id })
    assert.are.same({ -32015, 'alreadyMerged', 'fixer' }, { merge_err.code, merge_err.data.reason, merge_err.data.agentId })
    assert.truthy(find(merge_err.message, 'race ' .. r.id .. ' was merged already: fixer into main'), merge_err.message)
    assert.are.same({ 'hydra: ' .. merge_err.message }, H.take_errors())
    assert.are.equal(0, #H.selects)
    assert.are.equal(merged_at, head(root))
  end)
end)

describe('a race merged while its scoreboard was open', function()
  local repo = racing(true)

  it("shows hydra's refusal on m, then the scoreboard again, merged", function()
    local root = repo.root
    local r = H.start_race(root, { 'fixer' }, 'make add() add')
    H.wait_race(r.id)
    local key = 'hydra://' .. r.id .. '/scores'
    H.wait(function()
      return H.find_buffer(key) ~= nil and vim.api.nvim_get_current_buf() == H.find_buffer(key)
    end, 'the scoreboard the race opened')
    local stale = vim.api.nvim_get_current_buf()
    -- Merged by another client of hydra (hydra merge in a terminal, say).
    local err, result = H.request(root, 'hydra/merge', { raceId = r.id })
    assert.is_nil(err)
    assert.are.equal('fastForward', result.outcome)
    line_with(H.buffer_lines(stale), ' · m merge · ')

    H.notifications = {}
    H.answer_selects({})
    vim.api.nvim_win_set_cursor(0, { rank_line('fixer'), 0 })
    vim.api.nvim_feedkeys('m', 'x', false)
    H.wait(function()
      local buf = H.find_buffer(key)
      return buf ~= nil and buf ~= stale and vim.api.nvim_get_current_buf() == buf
    end, 'the scoreboard again')
    local errors = H.take_errors()
    assert.are.equal(1, #errors, table.concat(errors, '\n'))
    assert.truthy(find(errors[1], 'hydra: race ' .. r.id .. ' was merged already: fixer into main'), errors[1])
    assert.are.equal(0, #H.selects)
    line_with(H.buffer_lines(0), 'Merged: fixer into main (fast-forward, now at ' .. head(root):sub(1, 12) .. ')')
    vim.api.nvim_feedkeys('q', 'x', false)
  end)
end)

describe('a race hydra merged by itself', function()
  local repo = racing(true, { 'auto_merge = true' })

  it('says auto_merge merged the winner, and its scoreboard shows it merged by auto_merge', function()
    local root = repo.root
    local base = head(root)
    local r = H.start_race(root, { 'fixer' }, 'make add() add')
    H.wait_race(r.id)
    local now = head(root)
    assert.are_not.equal(base, now)
    local merged = 'fixer into main (fast-forward, now at ' .. now:sub(1, 12) .. ')'
    H.wait_message('hydra: race ' .. r.id .. ' completed; winner: fixer')
    assert.truthy(find(H.wait_message('; auto_merge merged ' .. merged, vim.log.levels.INFO), 'winner: fixer'))

    -- The scoreboard that opens as the race ends, and :HydraScores later.
    local key = 'hydra://' .. r.id .. '/scores'
    H.wait(function()
      return H.find_buffer(key) ~= nil
    end, 'the scoreboard')
    for _, open in ipairs({ function()
      return H.find_buffer(key)
    end, function()
      return open_scores(r.id)
    end }) do
      local lines = H.buffer_lines(open())
      assert.is_not_nil(H.index_of(lines, 'Merged: fixer into main (fast-forward, now at ' .. now:sub(1, 12) .. ', by auto_merge)'), table.concat(lines, '\n'))
      no_line_with(lines, 'good enough')
    end
    vim.api.nvim_feedkeys('q', 'x', false)
  end)

  it("says why auto_merge did not merge a winner good enough for it, which is still yours to merge", function()
    local gate = vim.fn.tempname()
    local gated = H.make_repo({ SPEC_GATE = gate }, { 'auto_merge = true' })
    local base = head(gated)
    local r = H.start_race(gated, { 'fixer' }, 'make add() add')
    -- Meanwhile the user edits the file the agent changes, and does not commit.
    H.write_file(gated .. '/lib.sh', H.read_file(gated .. '/lib.sh') .. '# mine\n')
    H.write_file(gate, '')
    H.wait_race(r.id)
    assert.are.equal(base, head(gated))
    local warning = H.wait_message('hydra: race ' .. r.id .. ' completed; winner: fixer', vim.log.levels.WARN)
    assert.truthy(find(warning, '; auto_merge did not merge fixer: '), warning)
    assert.truthy(find(warning, 'lib.sh'), warning)
    assert.truthy(find(warning, '; nothing was changed'), warning)

    local buf = open_scores(r.id)
    local lines = H.buffer_lines(buf)
    local at = line_with(lines, '(good enough to merge automatically, but auto_merge could not merge it)')
    assert.are.equal('HydraFlag', H.highlight_at(buf, ui.ns, at - 1, 0))
    no_line_with(lines, 'Merged:')
    line_with(lines, ' · m merge · ')
    vim.api.nvim_feedkeys('q', 'x', false)
  end)
end)

describe('what the scoreboard says of merging by itself', function()
  local function model(fields)
    return vim.tbl_extend('force', {
      raceId = '20261121-101500-a3f9',
      winner = 'careful',
      allFailed = false,
      autoMergeEligible = true,
      autoMergeEnabled = false,
      rankings = { S.ranking(1, 'careful', 97.1), S.ranking(2, 'sprawler', 60.0) },
    }, fields)
  end

  it('is nothing while auto_merge is off, however high the total', function()
    for _, m in ipairs({ model({}), model({ autoMergeEnabled = vim.NIL }), model({ autoMergeEligible = false }) }) do
      local lines = ui.scoreboard(m)
      no_line_with(lines, 'auto')
      no_line_with(lines, 'automatically')
    end
  end)

  it('says a winner below the minimum was not merged by itself, with auto_merge on', function()
    local lines = ui.scoreboard(model({ autoMergeEnabled = true, autoMergeEligible = false }))
    line_with(lines, '(below auto_merge_minimum: not merged automatically)')
    no_line_with(lines, 'good enough')
  end)

  it('names only the flags for a flagged winner, and only the merge for a merged race', function()
    local flagged = model({ autoMergeEnabled = true })
    flagged.rankings[1].flags = { '1 tool call denied' }
    local lines = ui.scoreboard(flagged)
    line_with(lines, '⚠ the winner is not for auto-merge: 1 tool call denied')
    no_line_with(lines, 'automatically')

    local merged = { agentId = 'careful', outcome = 'merged', targetBranch = 'main', commit = '4b1d9c0e7a2f3b5d6c8e', automatic = true }
    lines = ui.scoreboard(model({ autoMergeEnabled = true, merged = merged }))
    line_with(lines, 'Merged: careful into main (merge commit, now at 4b1d9c0e7a2f, by auto_merge)')
    no_line_with(lines, 'good enough')
  end)

  it('is what race.score_model carries from hydra/scores and the race', function()
    local r = { id = 'r', agents = {}, merged = { agentId = 'careful', outcome = 'upToDate', targetBranch = 'main' } }
    local m = race.score_model(r, model({ autoMergeEnabled = true }))
    assert.are.same({ true, 'careful' }, { m.autoMergeEnabled, m.merged.agentId })
    line_with(ui.scoreboard(m), 'Merged: careful into main (already up to date)')
  end)
end)
