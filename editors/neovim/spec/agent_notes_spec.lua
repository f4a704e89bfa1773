-- What the scoreboard, an agent's details and its output buffer say besides
-- the scores: tests fixed, broken and removed against the base, why hydra
-- would not merge an agent by itself (flags), the protected files it changed,
-- its warnings and the end of its stderr. Rendered from hand-made hydra/scores
-- answers and notifications shaped as docs/protocol.md documents them: no
-- server.

local H = require('helpers')
local S = require('scores_by_hand')
local concerns = require('hydra.concerns')
local hydra = require('hydra')
local race = require('hydra.race')
local ui = require('hydra.ui')

local names, ranking = S.names, S.ranking
local line_with, no_line_with, group_at, no_line_breaks = H.line_with, H.no_line_with, H.group_at, H.no_line_breaks

-- An agent's output is untrusted: a test name may hold anything, line breaks too.
local HOSTILE = '<img src=x onerror=alert(1)>\ninjected line'

local function model()
  return {
    raceId = '20261121-101500-a3f9',
    task = 'fix the flaky login test',
    winner = 'careful',
    allFailed = false,
    autoMergeEligible = false,
    branches = { careful = 'hydra/careful-a3f9', sprawler = 'hydra/sprawler-a3f9' },
    errors = {},
    rankings = {
      ranking(1, 'careful', 97.1, {
        flags = { '2 tool calls denied', 'changed protected files: tests/conftest.py' },
        protectedChanges = { 'tests/conftest.py' },
        protectedMode = 'restore',
        testChanges = { fixed = { 'tests/test_login.py::test_flaky', HOSTILE }, broken = {}, removed = {} },
      }),
      ranking(2, 'sprawler', 62.5, {
        testChanges = { fixed = {}, broken = names('tests/test_cart.py::test_', 8), removed = { 'tests/test_old.py::test_gone' } },
      }),
      ranking(3, 'quiet', 50.0, { testChanges = { fixed = {}, broken = {}, removed = {} } }),
    },
    agents = {
      careful = {
        state = 'completed',
        warnings = { 'permission denied: Write /etc/passwd' },
        deniedToolCalls = 2,
        stderrTail = 'warming up\nmodel said: quota exceeded\n',
      },
      sprawler = { state = 'completed', warnings = { 'left a process running: sleep 100 (ended by hydra)' } },
      quiet = { state = 'completed' },
    },
  }
end

-- The scoreboard of `m`, checked for line breaks: { lines, highlights, agent_at }.
local function scoreboard(m)
  local lines, highlights, agent_at = ui.scoreboard(m)
  no_line_breaks(lines)
  return { lines = lines, highlights = highlights, agent_at = agent_at }
end

-- The line of `board` holding `text`, which must belong to `agent`'s notes
-- and, when `group` is given, start at byte `col` in that group.
local function note(board, text, agent, group, col)
  local at = line_with(board.lines, text)
  assert.are.equal(agent, board.agent_at[at], text)
  if group then
    assert.are.equal(group, group_at(board.highlights, at, col), text)
  end
  return at
end

describe('agent notes', function()
  it('cap a list of names with "and N more", each name on one line', function()
    assert.are.equal('', ui.capped_list({}, 5))
    assert.are.equal('a, b', ui.capped_list({ 'a', 'b' }, 5))
    assert.are.equal('a, b and 3 more', ui.capped_list({ 'a', 'b', 'c', 'd', 'e' }, 2))
    assert.are.equal('<img src=x onerror=alert(1)> injected line', ui.capped_list({ HOSTILE }, 5))
  end)

  it('say why hydra would not merge an agent by itself, and only for a flagged one', function()
    assert.is_nil(ui.auto_merge_label(ranking(1, 'a', 90)))
    assert.is_nil(ui.auto_merge_label(ranking(1, 'a', 90, { flags = {} })))
    assert.is_nil(ui.auto_merge_label(nil))
    assert.are.equal(
      'not for auto-merge: 2 tool calls denied; changed protected files: tests/conftest.py',
      ui.auto_merge_label(model().rankings[1])
    )
    assert.are.equal('1 tool call denied', ui.denied_text(1))
    assert.are.equal('3 tool calls denied', ui.denied_text(3))
    assert.is_nil(ui.denied_text(0))
    assert.is_nil(ui.denied_text(vim.NIL))
  end)

  it('list flags, protected files, test changes and warnings, in that order', function()
    local m = model()
    local function texts(notes)
      return vim.tbl_map(function(pieces)
        return table.concat(vim.tbl_map(function(piece)
          return piece[1]
        end, pieces))
      end, notes)
    end
    assert.are.same({
      '⚠ not for auto-merge: 2 tool calls denied; changed protected files: tests/conftest.py',
      'protected files changed: tests/conftest.py (its checks ran with the base versions put back)',
      '2 fixed (fail → pass): tests/test_login.py::test_flaky, <img src=x onerror=alert(1)> injected line',
      '⚠ permission denied: Write /etc/passwd',
    }, texts(ui.agent_notes(m.rankings[1], m.agents.careful, 5)))
    assert.are.same({
      '8 broken (pass → fail): tests/test_cart.py::test_1, tests/test_cart.py::test_2, tests/test_cart.py::test_3 and 5 more',
      '1 removed (ran at the base, not now): tests/test_old.py::test_gone',
    }, texts(ui.agent_notes(m.rankings[2], {}, 3)))
    assert.are.same({}, ui.agent_notes(m.rankings[3], m.agents.quiet, 5))
    -- A hydra that sends no flags yet: the denials alone mark it.
    assert.are.same(
      { '⚠ not for auto-merge: 1 tool call denied' },
      texts(ui.agent_notes(ranking(1, 'a', 90), { deniedToolCalls = 1 }, 5))
    )
    -- Many warnings: the details and the output buffer have them all.
    assert.are.same(
      { '⚠ w1', '⚠ w2', '⚠ and 3 more warnings' },
      texts(ui.agent_notes(ranking(1, 'a', 90), { warnings = names('w', 5) }, 2))
    )
    -- Checked with its own versions of the protected files.
    assert.are.same(
      { 'protected files changed: ci.yml (its checks ran with its versions)' },
      texts(ui.agent_notes(ranking(1, 'a', 90, { protectedChanges = { 'ci.yml' }, protectedMode = 'flag' }), nil, 5))
    )
  end)

  it('go under each agent on the scoreboard, coloured, and belong to its line', function()
    local board = scoreboard(model())
    local lines = board.lines
    note(board, '      ⚠ not for auto-merge: 2 tool calls denied', 'careful', 'HydraFlag', 8)
    note(board, '      2 fixed (fail → pass): tests/test_login.py::test_flaky, <img src=x onerror=alert(1)> injected line', 'careful', 'HydraScoreGood', 6)
    local broken = note(board, '8 broken (pass → fail): tests/test_cart.py::test_1, ', 'sprawler', 'HydraScorePoor', 6)
    assert.truthy(lines[broken]:find('tests/test_cart.py::test_5 and 3 more$'))
    note(board, '⚠ left a process running: sleep 100 (ended by hydra)', 'sprawler')
    note(board, '1 removed (ran at the base, not now)', 'sprawler', 'HydraScoreFair', 6)
    line_with(lines, 'protected files changed: tests/conftest.py (its checks ran with the base versions put back)')
    -- The winner itself is flagged: the summary says it is not for auto-merge.
    line_with(lines, '⚠ the winner is not for auto-merge: 2 tool calls denied')
    line_with(lines, '<CR> details')
    -- The stderr tail is for the details, not the scoreboard.
    no_line_with(lines, 'quota exceeded')
  end)

  it('never show a score higher than it is: 99.7 reads 99, 99.96 reads 99.9', function()
    assert.are.equal('99', ui.part_score_text(99.7))
    assert.are.equal('100', ui.part_score_text(100))
    assert.are.equal('71', ui.part_score_text(71.4))
    assert.are.equal('0', ui.part_score_text(0))
    local m = model()
    -- 2 of 704 tests failing: 99.7.
    local close = ranking(1, 'careful', 99.96)
    close.breakdown.tests = 100 * 702 / 704
    m.rankings = { close }
    m.agents = {}
    local lines = ui.scoreboard(m)
    local at = line_with(lines, 'careful')
    assert.truthy(lines[at]:find('99.9 / 100', 1, true), lines[at])
    assert.truthy(lines[at]:find('[TESTS: 99]', 1, true), lines[at])
    no_line_with(lines, '100.0')
  end)

  it('say nothing more for a race hydra did not compare or flag', function()
    local m = model()
    m.rankings = { ranking(1, 'careful', 97.1), ranking(2, 'sprawler', 62.5) }
    m.agents = {}
    local lines = ui.scoreboard(m)
    no_line_with(lines, 'auto-merge')
    no_line_with(lines, 'fixed')
    no_line_with(lines, 'protected')
    no_line_with(lines, '⚠')
  end)
end)

describe('agent details', function()
  it('name tests skipped or xfailed now as scored as failed, and say when tests were compared by counts only', function()
    local m = model()
    m.rankings[1].testChanges = { fixed = {}, broken = {}, removed = {}, skipped = { 'tests/test_calc.py::test_sub' } }
    local lines, highlights = ui.agent_details(m, 'careful')
    local skipped = line_with(lines, 'Tests skipped or xfailed now (ran at the base; scored as failed): 1')
    assert.are.equal('  tests/test_calc.py::test_sub', lines[skipped + 1])
    assert.are.equal('HydraScorePoor', group_at(highlights, skipped, 0))
    no_line_with(lines, 'counts only')
    local note = ui.agent_notes(m.rankings[1], {}, 5)
    assert.are.same({ '1 skipped or xfailed now', ' (ran at the base; scored as failed): tests/test_calc.py::test_sub' },
      { note[#note][1][1], note[#note][2][1] })

    m.rankings[1].testChanges = vim.NIL
    m.rankings[1].testsByCountsOnly = true
    local said = 'tests compared by counts only: the test runner did not name each test, so a deleted test reads as a passing one'
    lines, highlights = ui.agent_details(m, 'careful')
    assert.are.equal('HydraFlag', group_at(highlights, line_with(lines, said), 0))
    no_line_with(lines, 'Tests skipped')
    note = ui.agent_notes(m.rankings[1], {}, 5)
    assert.are.same({ { said, 'HydraFlag' } }, note[#note])
  end)

  it('show every kind of test change one name a line, warnings, the error and the stderr tail', function()
    local m = model()
    m.agents.careful.error = 'exited with code 1:\nquota exceeded'
    local lines, highlights = ui.agent_details(m, 'careful')
    no_line_breaks(lines)
    assert.truthy(lines[1]:find('^careful  #1  97%.1 / 100  completed  winner'))
    line_with(lines, 'branch: hydra/careful-a3f9')
    assert.are.equal('HydraFlag', group_at(highlights, line_with(lines, '⚠ not for auto-merge: 2 tool calls denied'), 0))
    local protected = line_with(lines, 'Protected files changed (its checks ran with the base versions put back)')
    assert.are.equal('  tests/conftest.py', lines[protected + 1])
    local fixed = line_with(lines, 'Tests fixed (fail → pass): 2')
    assert.are.equal('  tests/test_login.py::test_flaky', lines[fixed + 1])
    assert.are.equal('  <img src=x onerror=alert(1)> injected line', lines[fixed + 2])
    no_line_with(lines, 'Tests broken')
    local warnings = line_with(lines, 'Warnings')
    assert.are.equal('  permission denied: Write /etc/passwd', lines[warnings + 1])
    local error = line_with(lines, 'Error')
    assert.are.same({ '  exited with code 1:', '  quota exceeded' }, { lines[error + 1], lines[error + 2] })
    local tail = line_with(lines, 'stderr (last lines)')
    assert.are.same({ '  warming up', '  model said: quota exceeded' }, { lines[tail + 1], lines[tail + 2] })
    assert.are.equal('HydraStderr', group_at(highlights, tail + 1, 2))
  end)

  it('cap each kind of test change, and say when nothing changed against the base', function()
    local m = model()
    m.rankings[2].testChanges.broken = names('t', ui.details_names + 7)
    local lines = ui.agent_details(m, 'sprawler')
    local broken = line_with(lines, 'Tests broken (pass → fail): ' .. (ui.details_names + 7))
    assert.are.equal('  t' .. ui.details_names, lines[broken + ui.details_names])
    assert.are.equal('  … and 7 more', lines[broken + ui.details_names + 1])
    line_with(ui.agent_details(m, 'quiet'), 'Tests as at the base: none fixed, broken, removed or skipped')
  end)

  it('open from the scoreboard with <CR> on an agent line, and go back with s', function()
    local m = model()
    local r = { id = m.raceId, root = vim.fn.getcwd() }
    local _, win, agent_at = hydra.show_scores(r, m)
    local at
    for line, id in pairs(agent_at) do
      if id == 'sprawler' and (at == nil or line < at) then
        at = line
      end
    end
    vim.api.nvim_win_set_cursor(win, { at, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    local details = vim.api.nvim_get_current_buf()
    assert.are.equal('hydradetails', vim.bo[details].filetype)
    assert.truthy(vim.api.nvim_buf_get_lines(details, 0, 1, false)[1]:find('^sprawler'))
    assert.are_not.equal('', vim.api.nvim_win_get_config(0).relative)
    vim.api.nvim_feedkeys('s', 'x', false)
    assert.are.equal('hydrascores', vim.bo[vim.api.nvim_get_current_buf()].filetype)
    vim.cmd('silent! only!')
  end)
end)

describe('failed checks', function()
  local check = S.check

  local function failing()
    local m = model()
    m.rankings[2].checks = {
      build = check({
        exitCode = 2,
        output = 'cc -c cart.c\ncart.c:3: error: expected ;\nmake: *** [cart.o] Error 1\n\n',
        outputTruncated = true,
      }),
      tests = check({ command = 'pytest -q', skipped = true, exitCode = vim.NIL }),
      lint = check({ command = 'ruff check .', exitCode = 1, output = 'cart.py:1:1: F401 unused import\n', lint = { errors = 1, warnings = 0 } }),
    }
    m.rankings[3].checks = {
      build = check({ command = 'make', output = 'all good\n' }),
      tests = check({ command = 'sh slow.sh', timedOut = true, exitCode = vim.NIL, output = '' }),
      lint = vim.NIL,
    }
    return m
  end

  it('say why under the agent line on the scoreboard: the line of their output that tells', function()
    local board = scoreboard(failing())
    local lines = board.lines
    note(board, '      ✗ build failed (exit 2): cart.c:3: error: expected ;', 'sprawler', 'HydraScorePoor', 6)
    -- The counts hydra read say more than a line of output.
    note(board, '      ✗ lint failed (exit 1): 1 error, 0 warnings', 'sprawler')
    note(board, '      ✗ tests timed out', 'quiet')
    -- Skipped (the build failed) or passed: nothing to say.
    no_line_with(lines, '✗ tests failed')
    no_line_with(lines, '✗ build failed (exit 0')
    assert.are.equal('make: *** [cart.o] Error 1', ui.telling_line({ '[…]', 'compiling', 'make: *** [cart.o] Error 1' }))
    assert.are.equal('done', ui.telling_line({ 'building', 'done', '' }))
    assert.is_nil(ui.telling_line({}))
  end)

  it('are in the details with everything they printed, and the checks that passed in a line', function()
    local lines, highlights = ui.agent_details(failing(), 'sprawler')
    no_line_breaks(lines)
    local checks = line_with(lines, 'Checks')
    assert.are.same({
      '  ✗ build: failed (exit 2) · make',
      '      […]',
      '      cc -c cart.c',
      '      cart.c:3: error: expected ;',
      '      make: *** [cart.o] Error 1',
      '  – tests: skipped: the build failed · pytest -q',
      '  ✗ lint: failed (exit 1): 1 error, 0 warnings · ruff check .',
      '      cart.py:1:1: F401 unused import',
      '',
    }, vim.list_slice(lines, checks + 1, checks + 9))
    assert.are.equal('HydraScorePoor', group_at(highlights, checks + 1, 2))
    assert.are.equal('HydraScoreNone', group_at(highlights, checks + 6, 2))
    assert.are.equal('HydraMuted', group_at(highlights, checks + 1, #'  ✗ build: failed (exit 2) · '))

    lines, highlights = ui.agent_details(failing(), 'quiet')
    checks = line_with(lines, 'Checks')
    assert.are.same({
      '  ✓ build: passed · make',
      '  ✗ tests: timed out · sh slow.sh',
      '      (it printed nothing)',
    }, vim.list_slice(lines, checks + 1, checks + 3))
    assert.are.equal('HydraScoreGood', group_at(highlights, checks + 1, 2))
    -- No check configured: no section.
    no_line_with(ui.agent_details(model(), 'careful'), 'Checks')
  end)
end)

-- A race this editor watches, with agent fixer running and its output
-- buffer open; forget() wipes both.
local function watched_race(id)
  local r = { id = id, root = vim.fn.getcwd(), state = 'running', started_here = true, agents = {}, order = {} }
  race.races[id] = r
  r.agents.fixer = { id = 'fixer', name = 'fixer', state = 'running', branch = 'hydra/fixer', pending = { lines = {}, groups = {} } }
  table.insert(r.order, 'fixer')
  local buf = race.output_buffer(r, r.agents.fixer)
  local function forget()
    vim.api.nvim_buf_delete(buf, { force = true })
    race.races[id] = nil
  end
  return r, buf, forget
end

-- hydra/agentFinished of fixer in race `r`: completed, with `fields` changed.
local function finished(r, fields)
  race.on_agent_finished(
    vim.tbl_extend('force', { raceId = r.id, agentId = 'fixer', status = 'completed', exitCode = 0, durationMs = 10 }, fields),
    r.root
  )
end

describe('an agent that finished with denials or warnings', function()
  local notified, real_notify
  before_each(function()
    notified = {}
    real_notify = vim.notify
    vim.notify = function(message, level)
      table.insert(notified, { message, level })
    end
  end)
  after_each(function()
    vim.notify = real_notify
  end)

  it('is said so once, and not when it had neither', function()
    assert.is_nil(ui.finished_notice({ raceId = 'r1', agentId = 'fixer', warnings = vim.NIL }))
    assert.is_nil(ui.finished_notice({ raceId = 'r1', agentId = 'fixer', warnings = {}, deniedToolCalls = 0 }))
    assert.are.equal(
      'hydra: fixer (race r1) had 2 tool calls denied, so it is not merged automatically and warned: permission denied: Bash rm -rf /',
      ui.finished_notice({ raceId = 'r1', agentId = 'fixer', deniedToolCalls = 2, warnings = { 'permission denied: Bash rm -rf /' } })
    )
    assert.are.equal(
      'hydra: fixer (race r1) warned: the model is overloaded',
      ui.finished_notice({ raceId = 'r1', agentId = 'fixer', warnings = { 'the model is overloaded' } })
    )
    -- The user asked for a cancel: its "cut off" warning tells them nothing.
    assert.is_nil(ui.finished_notice({ raceId = 'r1', agentId = 'fixer', status = 'cancelled', warnings = { 'cut off by hydra: cancelled' } }))
  end)

  it('ends its output buffer with them, and its header marks it until the scores say more', function()
    local id = '20261121-101500-beef'
    local r, buf, forget = watched_race(id)
    finished(r, {
      deniedToolCalls = 2,
      warnings = { 'permission denied: Write /etc/passwd', 'two\nlines' },
      stderrTail = 'denied\n',
    })
    race.flush()
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    assert.truthy(lines[1]:find('⚠ not for auto-merge', 1, true))
    line_with(lines, '⚠ 2 tool calls denied: it is not merged automatically')
    line_with(lines, '⚠ permission denied: Write /etc/passwd')
    line_with(lines, '⚠ two lines')
    assert.are.equal(1, #notified)
    assert.are.equal(vim.log.levels.WARN, notified[1][2])
    assert.truthy(notified[1][1]:find('fixer (race ' .. id .. ') had 2 tool calls denied', 1, true))
    -- Its stderr is in the buffer as it came: the tail is for the details.
    no_line_with(lines, 'stderr')
    local details = ui.agent_details(race.score_model(r, { rankings = { ranking(1, 'fixer', 90) }, winner = 'fixer' }), 'fixer')
    assert.are.equal('  denied', details[line_with(details, 'stderr (last lines)') + 1])
    line_with(details, '⚠ 2 tool calls denied')
    forget()
  end)

  it('does not repeat the warnings its summary showed', function()
    local id = '20261121-101500-cafe'
    local r, buf, forget = watched_race(id)
    -- hydra/agentOutput's summary event, then hydra/agentFinished with the same warning and one more.
    race.on_agent_output({
      raceId = id,
      agentId = 'fixer',
      stream = 'stdout',
      lines = {},
      events = { { kind = 'summary', isError = false, turns = 2, warnings = { 'permission denied: Write /etc/passwd' } } },
    }, r.root)
    finished(r, { warnings = { 'permission denied: Write /etc/passwd', 'left a process running' } })
    race.flush()
    local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    local count = 0
    for _, l in ipairs(lines) do
      if l == '⚠ permission denied: Write /etc/passwd' then
        count = count + 1
      end
    end
    assert.are.equal(1, count)
    line_with(lines, '⚠ left a process running')
    forget()
  end)
end)

describe('merge concerns about test changes and flags', function()
  it('name broken and removed tests and the flags, not the fixed tests', function()
    local m = model()
    m.rankings[1].testChanges = { fixed = { 'a' }, broken = { 'b1', 'b2' }, removed = { 'c' } }
    assert.are.same({
      'it broke 2 test(s) that passed at the base: b1, b2',
      '1 test(s) that ran at the base did not run: c',
      'hydra would not merge it by itself: 2 tool calls denied; changed protected files: tests/conftest.py',
    }, concerns.of(m, 'careful'))
    m.rankings[1].flags = vim.NIL
    m.rankings[1].testChanges = { fixed = { 'a' }, broken = {}, removed = {} }
    assert.are.same({}, concerns.of(m, 'careful'))
  end)

  it('name tests skipped or xfailed now and say when tests were compared by counts only', function()
    local m = model()
    m.rankings[1].flags = vim.NIL
    m.rankings[1].testChanges = { fixed = {}, broken = {}, removed = {}, skipped = { 'test_calc.py::test_add' } }
    assert.are.same({
      '1 test(s) that ran at the base are skipped or xfailed now (scored as failed): test_calc.py::test_add',
    }, concerns.of(m, 'careful'))
    m.rankings[1].testChanges = nil
    m.rankings[1].testsByCountsOnly = true
    -- Beside another concern it is said; alone it asks nothing.
    assert.are.same({}, concerns.of(m, 'careful'))
    m.rankings[1].flags = { 'changed protected files: conftest.py' }
    assert.are.same({
      'hydra would not merge it by itself: changed protected files: conftest.py',
      'tests compared by counts only: the test runner did not name each test, so a deleted test reads as a passing one',
    }, concerns.of(m, 'careful'))
  end)
end)
