-- Collaborations, against the real hydra binary and a throwaway repository
-- with two scripted agents: bob builds (iteration 1 writes cart.sh, the
-- refine of iteration 2 handles the empty cart and fixes most of add()), rita
-- reviews (she asks for the empty cart on iteration 1 and approves iteration
-- 2 with "LGTM"). :HydraCollab starts it, its buffer follows the iterations
-- live, the reviews open whole, :HydraDiff and :HydraMerge take an iteration
-- (builder@N), and the race list and the view read again later show it from
-- hydra/status. The steps depend on each other, in order.

local H = require('helpers')
local collab = require('hydra.collab')
local diff = require('hydra.diff')
local race = require('hydra.race')
local ui = require('hydra.ui')

local find, index_of, line_with, no_line_with = H.find, H.index_of, H.line_with, H.no_line_with

local TASK = 'add a cart total'

-- cart.sh as bob writes it in each iteration.
local CART = {
  { '# The cart.', '', 'total() {', '  echo $(( $1 + $2 ))', '}' },
  { '# The cart.', '', 'total() {', '  [ $# -eq 0 ] && { echo 0; return; }', '  echo $(( $1 + $2 ))', '}' },
}

-- hydra.toml's agents and [collaboration] for the specs; bob's iteration 2
-- waits for `gate`.
local function collaboration_toml(gate)
  return {
    '[agents.bob]',
    'adapter = "command"',
    'binary = "' .. H.fixtures .. '/collab-builder.sh"',
    'env = { SPEC_GATE = "' .. gate .. '" }',
    '',
    '[agents.rita]',
    'adapter = "command"',
    'binary = "' .. H.fixtures .. '/collab-reviewer.sh"',
    '',
    '[collaboration]',
    'builder = "bob"',
    'reviewer = "rita"',
    'max_iterations = 3',
    -- Iteration 2 scores above auto_merge_minimum, the default target: no
    -- iteration scores 100 (a test still fails), so rita's approval stops it.
    'until_score = 100',
  }
end

-- The line of the view that is about `iteration` (its scores), 1-based.
local function iteration_line(lines, n)
  for i, l in ipairs(lines) do
    if l:find('^  iteration ' .. n .. '  builder@' .. n) then
      return i
    end
  end
  error('no line for iteration ' .. n .. ' in:\n' .. table.concat(lines, '\n'))
end

local function focus(buf)
  local wins = vim.fn.win_findbuf(buf)
  assert.is_true(#wins > 0, 'the buffer is shown')
  vim.api.nvim_set_current_win(wins[1])
end

local function press(keys)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(keys, true, false, true), 'x', false)
end

describe('collaborations', function()
  local root, gate, r, view, scores

  setup(function()
    gate = vim.fn.tempname()
    root = H.prepare({}, nil, nil, collaboration_toml(gate))
  end)

  teardown(H.clean_up)
  after_each(H.checked)

  it(":HydraCollab checks the agents it names before asking for the task", function()
    H.answer_inputs({})
    H.answer_selects({})
    vim.cmd('HydraCollab bobb rita')
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the refusal')
    assert.are.same(
      { "hydra: the collaboration did not start: unknown agent 'bobb'; did you mean 'bob'?" },
      H.take_errors()
    )
    assert.are.same({}, H.inputs, 'no task asked for')

    vim.cmd('HydraCollab bob rita bob -- too many')
    assert.are.equal(1, #H.take_errors())
    assert.is_nil(race.latest_id(root), 'nothing started')

    -- Completion offers the agents, as :HydraRace's does.
    local names = require('hydra').complete_agents('', 'HydraCollab ')
    assert.truthy(vim.tbl_contains(names, 'bob'), vim.inspect(names))
  end)

  it(':HydraCollab -- TASK runs [collaboration] and its buffer follows the iterations live', function()
    vim.cmd('HydraCollab -- ' .. TASK)
    H.wait(function()
      return race.latest_id(root) ~= nil
    end, 'the collaboration to start')
    r = race.races[race.latest_id(root)]
    assert.are.equal('collab', r.kind)
    assert.are.same({ builder = 'bob', reviewer = 'rita' }, {
      builder = r.collaboration.builder,
      reviewer = r.collaboration.reviewer,
    })
    H.wait_message('hydra: collaboration ' .. r.id .. ' started: bob builds, rita reviews')

    -- A tab: the view on top, where the cursor is, the agents' output below.
    view = H.find_buffer(collab.view_key(r.id))
    assert.is_not_nil(view)
    assert.are.equal(view, vim.api.nvim_get_current_buf())
    local shown = {}
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      shown[vim.api.nvim_win_get_buf(win)] = true
    end
    assert.is_true(shown[H.find_buffer(race.output_key(r.id, 'builder'))] == true)
    assert.is_true(shown[H.find_buffer(race.output_key(r.id, 'reviewer'))] == true)
    local first = H.buffer_lines(view)[1]
    assert.truthy(find(first, 'hydra · collaboration ' .. r.id), first)
    assert.are.equal('task: ' .. TASK, H.buffer_lines(view)[2])
    line_with(H.buffer_lines(view), 'builder: bob · reviewer: rita · up to 3 iterations · until 100.0 · approves with "LGTM"')

    -- Between the iterations (bob's refine waits at the gate): iteration 1
    -- scored and reviewed, iteration 2 in progress.
    H.wait(function()
      return r.iterations and r.iterations[1] and r.iterations[1].finished and r.phase ~= nil
    end, 'iteration 1 to be over', 60000)
    local lines = H.buffer_lines(view)
    local at = iteration_line(lines, 1)
    assert.truthy(lines[at]:find('%d+%.%d / 100    %[BUILD: ✓%]'), lines[at])
    assert.are.equal('      review: Please handle the empty cart', lines[at + 1])
    assert.truthy(find(lines[1], 'iteration 2: refining…'), lines[1])
    assert.truthy(find(lines[iteration_line(lines, 2)], 'refining…'), lines[iteration_line(lines, 2)])
    no_line_with(lines, 'Stopped:')

    H.write_file(gate, '')
    H.wait_race(r.id, 90000)
    H.wait_message(
      'hydra: collaboration ' .. r.id .. ' completed; stopped: the reviewer approved (its review contained "LGTM"); best: '
    )
    local err
    err, scores = H.request(root, 'hydra/scores', { raceId = r.id })
    assert.is_nil(err)
    assert.are.equal(2, #scores.rankings)
    assert.are.equal('builder@2', scores.winner)

    -- Two iterations, each with its total and breakdown as hydra scored it.
    lines = H.buffer_lines(view)
    for _, ranking in ipairs(scores.rankings) do
      local n = collab.iteration_of(ranking.agentId)
      local line = lines[iteration_line(lines, n)]
      assert.truthy(find(line, string.format('%5.1f / 100', ranking.total)), line)
      local col = line:find(string.format('%.1f', ranking.total), 1, true) - 1
      assert.are.equal(ui.score_group(ranking.total), H.highlight_at(view, ui.ns, iteration_line(lines, n) - 1, col))
      assert.truthy(find(line, '[BUILD: ✓]'), line)
      assert.truthy(find(line, '[TESTS: ' .. math.floor(ranking.breakdown.tests + 0.5) .. ']'), line)
      assert.truthy(find(line, '[DIFF: ' .. math.floor(ranking.breakdown.diffSize + 0.5) .. ']'), line)
    end
    assert.is_false(pcall(iteration_line, lines, 3))
    -- The reviews, the approval, the best iteration and why it stopped.
    local one, two = iteration_line(lines, 1), iteration_line(lines, 2)
    assert.are.equal('      review: Please handle the empty cart', lines[one + 1])
    assert.are.equal('      review: LGTM', lines[two + 1])
    assert.truthy(find(lines[two], '★ best') and find(lines[two], '✓ approved'), lines[two])
    assert.is_false(find(lines[one], '★ best') or find(lines[one], '✓ approved'), lines[one])
    assert.are.equal('HydraWinner', H.highlight_at(view, ui.ns, two - 1, #'  iteration 2  '))
    line_with(lines, 'Stopped: the reviewer approved (its review contained "LGTM")')
    no_line_with(lines, 'approved:')
    line_with(lines, string.format('Best: builder@2 (%.1f)', scores.rankings[1].total))
    assert.truthy(find(lines[1], 'completed'), lines[1])

    -- Each run of an agent is marked in its output buffer.
    race.flush()
    local builder = H.buffer_lines(H.find_buffer(race.output_key(r.id, 'builder')))
    local build, refine = index_of(builder, '── iteration 1: build ──'), nil
    for i, l in ipairs(builder) do
      if l:find('^── iteration 2: refine') then
        refine = i
      end
    end
    assert.is_not_nil(build, table.concat(builder, '\n'))
    assert.is_not_nil(refine, table.concat(builder, '\n'))
    assert.is_true(build < index_of(builder, 'builder: build of iteration 1'))
    assert.is_true(refine < index_of(builder, 'builder: refine of iteration 2'))
    local reviewer = H.buffer_lines(H.find_buffer(race.output_key(r.id, 'reviewer')))
    assert.is_not_nil(index_of(reviewer, '── iteration 1: review ──'), table.concat(reviewer, '\n'))
    assert.is_not_nil(index_of(reviewer, '── iteration 2: review ──'), table.concat(reviewer, '\n'))
    -- Its review is what it printed, which hydra repeats as its final
    -- message: said once.
    local said = 0
    for _, l in ipairs(reviewer) do
      said = said + (l == 'Please handle the empty cart' and 1 or 0)
    end
    assert.are.equal(1, said, table.concat(reviewer, '\n'))
  end)

  it('<CR> opens the whole review in a markdown buffer, <Tab> shows it in place', function()
    focus(view)
    vim.api.nvim_win_set_cursor(0, { iteration_line(H.buffer_lines(view), 1), 0 })
    press('<CR>')
    local review = H.find_buffer(collab.review_key(r.id, 1))
    assert.is_not_nil(review)
    assert.are.equal(review, vim.api.nvim_get_current_buf())
    assert.are.equal('markdown', vim.bo[review].filetype)
    assert.are.same({ '# Review of builder@1 by rita', '', 'Please handle the empty cart' }, H.buffer_lines(review))
    assert.are.equal('hydra: review of builder@1 (race ' .. r.id .. ')', vim.fn.pathshorten(vim.fn.bufname(review)))
    press('q')
    assert.are.equal(view, vim.api.nvim_get_current_buf())

    local lines = H.buffer_lines(view)
    vim.api.nvim_win_set_cursor(0, { iteration_line(lines, 1) + 1, 0 })
    press('<Tab>')
    lines = H.buffer_lines(view)
    local at = iteration_line(lines, 1)
    assert.are.same({ '      review: ', '        Please handle the empty cart' }, { lines[at + 1], lines[at + 2] })
    vim.api.nvim_win_set_cursor(0, { at + 2, 0 })
    press('<Tab>')
    lines = H.buffer_lines(view)
    assert.are.equal('      review: Please handle the empty cart', lines[iteration_line(lines, 1) + 1])
  end)

  it(":HydraDiff builder@1 shows iteration 1's version; completion offers the iterations", function()
    assert.are.same({ 'builder@1', 'builder@2' }, require('hydra').complete_race_agents('builder@'))
    local tabs = vim.fn.tabpagenr('$')
    vim.cmd('HydraDiff builder@1')
    H.wait(function()
      return vim.fn.tabpagenr('$') == tabs + 1 and vim.wo.diff
    end, 'the review of builder@1')
    local panel = H.find_buffer(diff.panel_key(r.id, { 'builder@1' }))
    assert.is_not_nil(panel)
    local files = vim.tbl_map(function(f)
      return f.path
    end, diff.review_of_panel(panel).files)
    assert.are.same({ 'cart.sh' }, files)
    local version = H.find_buffer(diff.agent_key(r.id, 'builder@1', 'cart.sh'))
    H.wait(function()
      return vim.deep_equal(H.buffer_lines(version), CART[1])
    end, "iteration 1's cart.sh")
    vim.cmd('tabclose')

    -- d on iteration 2's line in the view: its version.
    focus(view)
    vim.api.nvim_win_set_cursor(0, { iteration_line(H.buffer_lines(view), 2), 0 })
    press('d')
    H.wait(function()
      panel = H.find_buffer(diff.panel_key(r.id, { 'builder@2' }))
      return panel ~= nil and vim.fn.tabpagenr('$') == tabs + 1 and vim.wo.diff
    end, 'the review of builder@2')
    local review = diff.review_of_panel(panel)
    files = vim.tbl_map(function(f)
      return f.path
    end, review.files)
    table.sort(files)
    assert.are.same({ 'cart.sh', 'lib.sh' }, files)
    -- <CR> on cart.sh in the panel: iteration 2's version of it.
    focus(panel)
    vim.api.nvim_win_set_cursor(0, { line_with(H.buffer_lines(panel), 'cart.sh'), 0 })
    press('<CR>')
    H.wait(function()
      local buf = H.find_buffer(diff.agent_key(r.id, 'builder@2', 'cart.sh'))
      return buf ~= nil and vim.deep_equal(H.buffer_lines(buf), CART[2])
    end, "iteration 2's cart.sh")
    vim.cmd('tabclose')

    -- Two iterations compared: what the refine changed.
    vim.cmd('HydraDiff builder@1 builder@2')
    local left, right
    H.wait(function()
      left = H.find_buffer(diff.compare_key(r.id, 'builder@1', 'builder@2', 'cart.sh'))
      right = H.find_buffer(diff.compare_key(r.id, 'builder@2', 'builder@1', 'cart.sh'))
      return left ~= nil and right ~= nil and vim.deep_equal(H.buffer_lines(right), CART[2])
    end, 'iterations 1 and 2 compared')
    assert.are.same(CART[1], H.buffer_lines(left))
    vim.cmd('tabclose')
  end)

  it(':HydraStatus shows the collaboration: its agents, iterations, best one and why it stopped', function()
    local _, status = H.request(root, 'hydra/status', { raceId = r.id })
    local summary = status.races[1]
    assert.are.equal('collab', summary.kind)
    assert.are.equal(2, #summary.iterations)
    H.open_status(root)
    local lines = H.buffer_lines(0)
    local at = line_with(lines, r.id .. '  completed  collaboration: ' .. TASK)
    assert.truthy(lines[at + 1]:find('^    builder %(bob%)%s+completed'), lines[at + 1])
    assert.truthy(lines[at + 2]:find('^    reviewer %(rita%)%s+completed'), lines[at + 2])
    local best = string.format('(%.1f)', scores.rankings[1].total)
    -- Why it stopped in words, never the protocol's identifier.
    assert.are.equal(
      '    2 iterations of 3 at most · best: builder@2 ' .. best .. ' · stopped: the reviewer approved (its review contained "LGTM")',
      lines[at + 3]
    )
    press('q')
  end)

  it(':HydraIterations reads a collaboration this Neovim did not watch from hydra/status', function()
    H.reset_windows()
    -- As after a restart: nothing known of it here.
    race.races[r.id] = nil
    local buf
    require('hydra').iterations({
      race = r.id,
      callback = function(b)
        buf = b
      end,
    })
    H.wait(function()
      return buf ~= nil
    end, 'the view')
    assert.are_not.equal(view, buf)
    view = buf
    r = race.races[r.id]
    assert.are.equal(buf, vim.api.nvim_get_current_buf())
    local lines = H.buffer_lines(buf)
    local one, two = iteration_line(lines, 1), iteration_line(lines, 2)
    for i, ranking in ipairs(scores.rankings) do
      local line = lines[iteration_line(lines, collab.iteration_of(ranking.agentId))]
      assert.truthy(find(line, string.format('%5.1f / 100    [BUILD: ✓]', ranking.total)), i .. ': ' .. line)
    end
    assert.are.equal('      review: Please handle the empty cart', lines[one + 1])
    assert.are.equal('      review: LGTM', lines[two + 1])
    assert.truthy(find(lines[two], '★ best') and find(lines[two], '✓ approved'), lines[two])
    line_with(lines, 'Stopped: the reviewer approved')
    line_with(lines, 'Best: builder@2')
    no_line_with(lines, 'reviewing…')
  end)

  it(':HydraMerge builder@2 merges iteration 2 into your branch', function()
    -- A test still fails: the question may be a warning ("Merge anyway").
    H.answer_selects({
      function(items)
        for _, item in ipairs(items) do
          if vim.startswith(item, 'Merge') then
            return item
          end
        end
      end,
    })
    vim.cmd('HydraMerge builder@2')
    H.wait_message('hydra: merged ')
    assert.truthy(find(H.selects[1].opts.prompt, 'Merge builder@2 ('), H.selects[1].opts.prompt)
    assert.are.same(CART[2], H.lines_of(H.read_file(root .. '/cart.sh')))
    assert.truthy(find(H.read_file(root .. '/lib.sh'), 'if [ "$2" -lt 0 ]'))
    assert.are.same({}, H.git(root, 'status', '--porcelain'))
    -- The view says so.
    H.wait(function()
      return pcall(line_with, H.buffer_lines(view), 'Merged: builder@2 into main')
    end, 'the view to show the merge')
    local lines = H.buffer_lines(view)
    assert.truthy(find(lines[iteration_line(lines, 2)], '✓ merged'))
  end)

  it('c in its buffer cancels it between iterations: it ends cancelled, keeping iteration 1', function()
    -- bob's refine waits at the gate again.
    os.remove(gate)
    local started
    require('hydra').collab({
      task = 'cancel me',
      callback = function(err, c)
        assert.is_nil(err)
        started = c
      end,
    })
    H.wait(function()
      return started ~= nil
    end, 'the collaboration to start')
    H.wait(function()
      return started.iterations and started.iterations[1] and started.iterations[1].finished and started.phase ~= nil
    end, 'iteration 2 to start', 60000)
    local buf = H.find_buffer(collab.view_key(started.id))
    focus(buf)
    press('c')
    H.wait_message('hydra: cancelled collaboration ' .. started.id)
    H.wait_race(started.id)
    assert.are.equal('cancelled', started.state)
    H.wait_message('hydra: collaboration ' .. started.id .. ' cancelled')
    local lines = H.buffer_lines(buf)
    assert.truthy(find(lines[1], '· cancelled'), lines[1])
    assert.truthy(lines[iteration_line(lines, 1)]:find('%d+%.%d / 100'), lines[iteration_line(lines, 1)])
    assert.are.equal('      review: Please handle the empty cart', lines[iteration_line(lines, 1) + 1])
    no_line_with(lines, 'refining…')
    H.write_file(gate, '')
  end)

  it('takes maxIterations: one iteration is not reviewed, and stops at the most', function()
    local started
    require('hydra').collab({
      builder = 'bob',
      reviewer = 'rita',
      task = 'once',
      maxIterations = 1,
      callback = function(err, one)
        assert.is_nil(err)
        started = one
      end,
    })
    H.wait(function()
      return started ~= nil
    end, 'the collaboration to start')
    H.wait_race(started.id, 60000)
    local lines = H.buffer_lines(H.find_buffer(collab.view_key(started.id)))
    line_with(lines, 'up to 1 iteration ·')
    assert.are.equal('      not reviewed', lines[iteration_line(lines, 1) + 1])
    line_with(lines, 'Stopped: the last iteration allowed was done')
    assert.is_false(pcall(iteration_line, lines, 2))
    -- The reviewer it never needed is "not needed", not waiting for ever.
    local _, status = H.request(root, 'hydra/status', { raceId = started.id })
    local reviewer
    for _, a in ipairs(status.races[1].agents) do
      if a.agentId == 'reviewer' then
        reviewer = a
      end
    end
    assert.are.equal('notNeeded', reviewer.state)
    H.open_status(root)
    local list = H.buffer_lines(0)
    local at = line_with(list, started.id .. '  completed  collaboration: once')
    assert.truthy(list[at + 2]:find('^    reviewer %(rita%)%s+not needed'), list[at + 2])
    no_line_with(list, 'queued')
    press('q')
  end)
end)

describe('the collaboration buffer, drawn from hand-made records', function()
  local function record(fields)
    return vim.tbl_extend('force', {
      id = '20261126-101500-a3f9',
      root = '/nowhere',
      task = 'add a cart total\nwith tests',
      state = 'completed',
      kind = 'collab',
      agents = {},
      order = {},
      collaboration = { builder = 'claude', reviewer = 'codex', maxIterations = 3, untilScore = 85, approveMarker = 'LGTM' },
    }, fields)
  end

  it('shows a long review by its first line, unfolds it, and says how each run ended', function()
    local breakdown = { build = 100, tests = 40, lint = vim.NIL, diffSize = 95, speed = 100 }
    local r = record({
      winner = 'builder@1',
      stopReason = 'builderFailed',
      iterations = {
        [1] = {
          iteration = 1,
          total = 62.5,
          breakdown = breakdown,
          review = 'The empty cart crashes total().\n\n- handle it\n- test it\n',
          finished = true,
        },
        [2] = { iteration = 2, builderStatus = 'failed', resumed = true, reviewStatus = vim.NIL, finished = true },
      },
    })
    local lines, highlights, at = collab.render(r, {})
    assert.are.equal('task: add a cart total', lines[2])
    line_with(lines, 'builder: claude · reviewer: codex · up to 3 iterations · until 85.0 · approves with "LGTM"')
    local one = iteration_line(lines, 1)
    assert.are.equal(
      '  iteration 1  builder@1   62.5 / 100    [BUILD: ✓] [TESTS: 40]  [LINT: n/a] [DIFF: 95]  [SPEED: 100]  ★ best',
      lines[one]
    )
    assert.are.equal('HydraScoreFair', H.group_at(highlights, one, lines[one]:find('62.5', 1, true) - 1))
    assert.are.equal('      review: The empty cart crashes total().  (+3 lines: <Tab> shows them)', lines[one + 1])
    assert.are.same({ iteration = 1, part = 'review' }, at[one + 1])
    local two = iteration_line(lines, 2)
    assert.truthy(find(lines[two], '(resumed)') and find(lines[two], 'builder failed'), lines[two])
    assert.are.equal('      not reviewed', lines[two + 1])
    line_with(lines, 'Stopped: the builder failed')
    line_with(lines, 'Best: builder@1 (62.5)')

    lines = collab.render(r, { [1] = true })
    one = iteration_line(lines, 1)
    assert.are.same({
      '      review: ',
      '        The empty cart crashes total().',
      '        ',
      '        - handle it',
      '        - test it',
    }, { unpack(lines, one + 1, one + 5) })
  end)

  it('says what runs while it runs, and that a cancelled one has no best iteration', function()
    local r = record({
      state = 'running',
      phase = { iteration = 2, phase = 'review' },
      iterations = {
        [1] = { iteration = 1, total = 40, breakdown = { build = 100 }, review = 'Fix it', finished = true },
        [2] = { iteration = 2, phase = 'review' },
      },
    })
    local lines = collab.render(r, {})
    assert.truthy(find(lines[1], '· running · iteration 2: reviewing…'), lines[1])
    local two = iteration_line(lines, 2)
    assert.are.equal('  iteration 2  builder@2  reviewing…', lines[two])
    assert.are.equal('      review: codex is reviewing…', lines[two + 1])
    no_line_with(lines, 'Stopped:')

    r.state, r.phase, r.iterations[2] = 'cancelled', nil, nil
    lines = collab.render(r, {})
    assert.truthy(find(lines[1], '· cancelled'), lines[1])
    no_line_with(lines, 'Best:')
    no_line_with(lines, ui.all_failed)
    no_line_with(lines, ui.no_good_round)

    -- Every round scored too low: said of rounds, not of "all agents" (its builder completed).
    r.state, r.allFailed = 'completed', true
    lines = collab.render(r, {})
    line_with(lines, ui.no_good_round)
    no_line_with(lines, ui.all_failed)
  end)
end)
