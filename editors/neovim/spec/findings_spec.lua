-- Build and lint findings as diagnostics on each agent's version of its
-- files, against the real hydra binary: hydra runs a build that names an
-- error where tidier's lib.sh multiplies, and a lint that warns about the
-- CHANGELOG.md fixer adds and about two files outside fixer's worktree
-- (spec/fixtures/findings.sh); replay's work gets neither.

local H = require('helpers')
local diff = require('hydra.diff')
local findings = require('hydra.findings')

local checks = {
  'build_command = "sh -n lib.sh && sh ' .. H.fixtures .. '/findings.sh build"',
  'lint_command = "sh ' .. H.fixtures .. '/findings.sh lint"',
}

local ERROR, WARN = vim.diagnostic.severity.ERROR, vim.diagnostic.severity.WARN
local tidier_error = 'double() multiplies; call add() instead'
local fixer_warning = 'the heading names no version'

-- The findings shown on `buf`: {line (0-based), column (0-based), severity, source, message}.
local function shown(buf)
  return vim.tbl_map(function(d)
    return { d.lnum, d.col, d.severity, d.source, d.message }
  end, vim.diagnostic.get(buf, { namespace = findings.namespace }))
end

-- Every buffer showing findings, by its file name (symbolic links resolved).
local function shown_anywhere()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(nil, { namespace = findings.namespace })) do
    local name = vim.fn.resolve(vim.api.nvim_buf_get_name(d.bufnr))
    out[name] = (out[name] or 0) + 1
  end
  return out
end

-- Runs :HydraFindings with `args` from the repository; returns the quickfix
-- list it made: its title and {file, line, column, type, text} per entry.
local function listed(args)
  vim.cmd('enew')
  local before = vim.fn.getqflist({ id = 0 }).id
  vim.cmd('HydraFindings ' .. (args or ''))
  H.wait(function()
    return vim.fn.getqflist({ id = 0 }).id ~= before
  end, ':HydraFindings ' .. (args or ''))
  local list = vim.fn.getqflist({ title = 1, items = 1 })
  return list.title,
    vim.tbl_map(function(e)
      return { vim.fn.resolve(vim.api.nvim_buf_get_name(e.bufnr)), e.lnum, e.col, e.type, e.text }
    end, list.items)
end

-- The version buffer of :HydraDiff with `key`, once it holds `line` as line `at`.
local function version_with(key, at, line)
  local buf
  H.wait(function()
    buf = H.find_buffer(key)
    return buf ~= nil and H.buffer_lines(buf)[at] == line
  end, 'the version in ' .. key)
  return buf
end

describe('build and lint findings', function()
  local root, r, tidier, fixer, replay, lib_before

  setup(function()
    local gate = vim.fn.tempname()
    root = H.prepare({ layout = 'none', scores_on_finish = false }, { SPEC_GATE = gate }, checks)
    r = H.start_race(root, { 'tidier', 'fixer', 'replay' }, 'make add() add')
    tidier, fixer, replay = r.agents.tidier.worktree, r.agents.fixer.worktree, r.agents.replay.worktree
    -- tidier's lib.sh, open before the race is scored (the agents wait for
    -- the gate, so it is still the base version here).
    H.wait(function()
      return vim.fn.filereadable(tidier .. '/lib.sh') == 1
    end, "tidier's worktree")
    vim.cmd('silent edit ' .. vim.fn.fnameescape(tidier .. '/lib.sh'))
    lib_before = vim.api.nvim_get_current_buf()
    H.write_file(gate, '')
    H.wait_race(r.id)
  end)

  teardown(H.clean_up)

  after_each(function()
    H.checked()
    H.reset_windows()
  end)

  it("puts tidier's build error on its line of lib.sh in its worktree, and nothing on anyone else's files", function()
    local expected = { { 7, 14, ERROR, 'hydra: tidier build', tidier_error } }
    -- The buffer open while the race ran has it once the race is scored.
    assert.are.same(expected, shown(lib_before))
    -- Read again from disk (the agent's version now): it keeps it.
    vim.api.nvim_set_current_buf(lib_before)
    vim.cmd('silent edit!')
    assert.are.equal('  echo $(( $1 * 2 ))', H.buffer_lines(lib_before)[8])
    assert.are.same(expected, shown(lib_before))

    -- Files opened after the race: fixer's CHANGELOG.md has its lint
    -- warning; fixer's lib.sh, replay's files and yours have nothing.
    vim.cmd('silent edit ' .. vim.fn.fnameescape(fixer .. '/CHANGELOG.md'))
    assert.are.same({ { 0, 2, WARN, 'hydra: fixer lint', fixer_warning } }, shown(0))
    for _, file in ipairs({ fixer .. '/lib.sh', replay .. '/hello.txt', replay .. '/lib.sh', root .. '/lib.sh', root .. '/README.md' }) do
      vim.cmd('silent edit ' .. vim.fn.fnameescape(file))
      assert.are.same({}, shown(0), file)
    end
    -- The lint's findings about files outside fixer's worktree are nowhere.
    assert.are.same({
      [vim.fn.resolve(tidier .. '/lib.sh')] = 1,
      [vim.fn.resolve(fixer .. '/CHANGELOG.md')] = 1,
    }, shown_anywhere())
  end)

  it(':HydraFindings lists them, one entry per finding in the agent\'s worktree', function()
    local title, items = listed(nil)
    assert.are.equal("hydra: the agents' build and lint findings (race " .. r.id .. ')', title)
    assert.are.same({
      { vim.fn.resolve(tidier .. '/lib.sh'), 8, 15, 'E', 'tidier build: ' .. tidier_error },
      { vim.fn.resolve(fixer .. '/CHANGELOG.md'), 1, 3, 'W', 'fixer lint: ' .. fixer_warning },
    }, items)
    assert.are_not.equal(0, vim.fn.getqflist({ winid = 0 }).winid, 'the quickfix window is open')

    title, items = listed('fixer')
    assert.are.equal("hydra: fixer's build and lint findings (race " .. r.id .. ')', title)
    assert.are.same({ { vim.fn.resolve(fixer .. '/CHANGELOG.md'), 1, 3, 'W', 'fixer lint: ' .. fixer_warning } }, items)

    title, items = listed('replay')
    assert.are.equal("hydra: replay's build and lint findings (race " .. r.id .. ')', title)
    assert.are.same({}, items)
    H.wait_message("hydra: no build or lint findings in replay's files (race " .. r.id .. ')', vim.log.levels.INFO)
  end)

  it("puts them on the agent's side of :HydraDiff, alone and compared with another agent", function()
    require('hydra').diff({ root = root, race = r.id, agent = 'tidier' })
    local lib = version_with(diff.agent_key(r.id, 'tidier', 'lib.sh'), 8, '  echo $(( $1 * 2 ))')
    assert.are.same({ { 7, 14, ERROR, 'hydra: tidier build', tidier_error } }, shown(lib))

    -- fixer (left) against tidier (right): fixer's CHANGELOG.md has its
    -- warning, tidier's (it has none) nothing.
    require('hydra').diff({ root = root, race = r.id, agent = 'fixer', other = 'tidier' })
    local left = version_with(diff.compare_key(r.id, 'fixer', 'tidier', 'CHANGELOG.md'), 1, '# Changes')
    assert.are.same({ { 0, 2, WARN, 'hydra: fixer lint', fixer_warning } }, shown(left))
    local right = H.find_buffer(diff.compare_key(r.id, 'tidier', 'fixer', 'CHANGELOG.md'))
    assert.are.same({}, shown(right))
  end)

  it("are gone once the race's worktrees are cleaned up, and stay gone", function()
    assert.is_true(#shown(lib_before) > 0)
    local err, result = H.request(root, 'hydra/cleanup', { raceId = r.id })
    assert.is_nil(err)
    assert.are.equal(3, #result.removed)
    assert.are.same({}, shown_anywhere())
    -- Its scores read again bring none back: the files are gone.
    H.open_scores(r.id)
    assert.are.same({}, shown_anywhere())
    local _, items = listed(nil)
    assert.are.same({}, items)
  end)
end)

describe('build and lint findings of a merged race', function()
  local root, r, lib

  -- Each in a repository of its own: a race of tidier and fixer, scored,
  -- with tidier's lib.sh loaded, showing its build error.
  before_each(function()
    root = H.prepare({ layout = 'none', scores_on_finish = false }, nil, checks)
    r = H.start_race(root, { 'tidier', 'fixer' }, 'make add() add')
    H.wait_race(r.id)
    vim.cmd('silent edit ' .. vim.fn.fnameescape(r.agents.tidier.worktree .. '/lib.sh'))
    lib = vim.api.nvim_get_current_buf()
    assert.are.same({ { 7, 14, ERROR, 'hydra: tidier build', tidier_error } }, shown(lib))
    vim.cmd('enew')
  end)

  teardown(H.clean_up)
  after_each(H.checked)

  it('are gone once one of its agents was merged', function()

    H.answer_selects({
      function(items)
        return vim.tbl_filter(function(item)
          return vim.startswith(item, 'Merge')
        end, items)[1]
      end,
    })
    local merged
    require('hydra').merge({
      root = root,
      race = r.id,
      agent = 'fixer',
      callback = function(err, result)
        assert.is_nil(err)
        merged = result
      end,
    })
    H.wait(function()
      return merged ~= nil
    end, 'the merge')
    assert.are.equal('fastForward', merged.outcome)
    assert.are.same({}, shown(lib))
    local _, items = listed(nil)
    assert.are.same({}, items)
  end)

  it('stay gone when it was merged elsewhere with its worktrees kept', function()
    H.run({ H.hydra_bin, 'merge', '--keep', r.id, 'fixer' })
    assert.are.equal(1, vim.fn.isdirectory(r.agents.tidier.worktree))
    -- The scoreboard reads the race again: merged, so its findings go.
    H.open_scores(r.id)
    assert.are.same({}, shown(lib))
    local _, items = listed(nil)
    assert.are.same({}, items)
  end)
end)
