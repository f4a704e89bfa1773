-- Reviewing in the editor's own diff, against the real hydra binary and a
-- throwaway repository where tidier changed two places of lib.sh and fixer
-- one of them (and added CHANGELOG.md): the panel of an agent's files, two
-- agents compared, and single hunks of an agent's change taken into your
-- working tree with :diffget and dp.

local H = require('helpers')
local diff = require('hydra.diff')
local ui = require('hydra.ui')

local index_of = H.index_of

-- Opens :HydraDiff with `args` and waits until its review tab is there.
local function review(args)
  local tabs = vim.fn.tabpagenr('$')
  vim.cmd('HydraDiff ' .. args)
  H.wait(function()
    return vim.fn.tabpagenr('$') == tabs + 1 and vim.wo.diff
  end, 'the review of ' .. args)
end

-- The windows of the current tab, left to right.
local function windows()
  local wins = vim.api.nvim_tabpage_list_wins(0)
  table.sort(wins, function(a, b)
    return vim.api.nvim_win_get_position(a)[2] < vim.api.nvim_win_get_position(b)[2]
  end)
  return wins
end

-- The two diff windows of the current tab once both show `left` and
-- `right` (buffers) and the versions are loaded: left, right.
local function pair_windows(left, right, right_lines)
  local left_win, right_win
  H.wait(function()
    left_win, right_win = nil, nil
    for _, win in ipairs(windows()) do
      local buf = vim.api.nvim_win_get_buf(win)
      if buf == left then
        left_win = win
      elseif buf == right then
        right_win = win
      end
    end
    return left_win ~= nil and right_win ~= nil and vim.deep_equal(H.buffer_lines(right), right_lines)
  end, 'the pair of buffers ' .. left .. ' and ' .. right)
  assert.is_true(vim.wo[left_win].diff and vim.wo[right_win].diff)
  return left_win, right_win
end

describe('reviewing in the diff', function()
  local root, r, base_lib, versions

  setup(function()
    root = H.prepare({ layout = 'none', scores_on_finish = false })
    r = H.start_race(root, { 'tidier', 'fixer' }, 'make add() add')
    H.wait_race(r.id)
    base_lib = H.lines_of(H.read_file(root .. '/lib.sh'))
    versions = {}
    for _, agent in ipairs({ 'tidier', 'fixer' }) do
      local err, answer = H.request(root, 'hydra/diff', { raceId = r.id, agentId = agent, path = 'lib.sh' })
      assert.is_nil(err)
      versions[agent] = H.lines_of(answer.agent)
    end
  end)

  teardown(H.clean_up)

  after_each(function()
    H.assert_no_errors()
    H.reset_windows()
  end)

  it("lists the agent's files in a panel on the left; <CR> shows one, and the one shown is marked", function()
    local _, expected = H.request(root, 'hydra/diff', { raceId = r.id, agentId = 'fixer' })
    review('fixer')
    local panel = H.find_buffer(diff.panel_key(r.id, { 'fixer' }))
    assert.is_not_nil(panel)
    local wins = windows()
    assert.are.equal(3, #wins, 'the panel and the pair')
    local panel_win = wins[1]
    assert.are.equal(panel, vim.api.nvim_win_get_buf(panel_win), 'the panel is on the left')
    assert.is_true(vim.wo[panel_win].winfixwidth)
    assert.is_true(vim.api.nvim_win_get_width(panel_win) < vim.api.nvim_win_get_width(wins[2]), 'a narrow one')
    assert.are.equal('hydra: fixer files (race ' .. r.id .. ')', vim.fn.pathshorten(vim.fn.bufname(panel)))

    -- Each file with its status and counts, as hydra/diff has them; the one shown first is marked.
    local function file_line(i, shown)
      local f = expected.files[i]
      return string.format('%s%s %s  +%d -%d', shown and '▸ ' or '  ', f.status == 'added' and 'A' or 'M', f.path, f.additions, f.deletions)
    end
    assert.are.same({ 'CHANGELOG.md', 'lib.sh' }, { expected.files[1].path, expected.files[2].path })
    assert.are.same({
      'fixer',
      string.format('2 file(s)  +%d -%d', expected.additions, expected.deletions),
      '',
      file_line(1, true),
      file_line(2, false),
      '',
      'A added · M modified',
      'D deleted · R renamed',
      'T type changed',
      '<CR> show · q close',
    }, H.buffer_lines(panel))
    -- Its cursor is on the file shown, where <CR> acts, not on the heading.
    assert.are.same({ 4, 0 }, vim.api.nvim_win_get_cursor(panel_win))
    assert.are.equal('  A CHANGELOG.md  +3 -0', file_line(1, false))
    -- The file shown is in HydraCurrentFile; its counts are coloured.
    assert.are.equal('HydraCurrentFile', H.highlight_at(panel, ui.ns, 3, #'▸ A '))
    assert.is_nil(H.highlight_at(panel, ui.ns, 4, #'  M '))
    assert.are.equal('HydraAdded', H.highlight_at(panel, ui.ns, 4, #'  M lib.sh  '))
    assert.are.equal('HydraRemoved', H.highlight_at(panel, ui.ns, 4, #'  M lib.sh  +1 '))

    -- <CR> on lib.sh: its pair in the windows on the right, your file then
    -- the agent's version; the panel stays and marks it.
    vim.api.nvim_set_current_win(panel_win)
    vim.api.nvim_win_set_cursor(panel_win, { 5, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    local agent_lib = H.find_buffer(diff.agent_key(r.id, 'fixer', 'lib.sh'))
    local file_win, agent_win = pair_windows(vim.fn.bufnr(root .. '/lib.sh'), agent_lib, versions.fixer)
    assert.are.same({ panel_win, file_win, agent_win }, windows())
    assert.are.equal(agent_win, vim.api.nvim_get_current_win())
    assert.are.same({ file_line(1, false), file_line(2, true) }, vim.list_slice(H.buffer_lines(panel), 4, 5))
    assert.are.equal('HydraCurrentFile', H.highlight_at(panel, ui.ns, 4, #'▸ M '))
    assert.is_nil(H.highlight_at(panel, ui.ns, 3, #'  A '))
    assert.are.same({ changed = 1, filler = 0 }, H.diff_of(agent_win))

    -- The quickfix list goes on from the file shown: :cprevious is the first.
    vim.cmd('cprevious')
    H.wait(function()
      return H.buffer_lines(panel)[4] == file_line(1, true)
    end, 'the mark on CHANGELOG.md')
    assert.are.equal(file_line(2, false), H.buffer_lines(panel)[5])
    assert.are.equal(3, #windows())

    -- q in the panel closes the review, and your file is out of diff mode.
    local tabs = vim.fn.tabpagenr('$')
    vim.api.nvim_set_current_win(windows()[1])
    vim.api.nvim_feedkeys('q', 'x', false)
    assert.are.equal(tabs - 1, vim.fn.tabpagenr('$'))
    vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/lib.sh'))
    assert.is_false(vim.wo.diff)
  end)

  it(":HydraDiff A B compares two agents' versions, both read-only, and shows where they differ", function()
    review('fixer tidier')
    local qf = vim.fn.getqflist()
    assert.are.same({ 'CHANGELOG.md', 'lib.sh' }, { qf[1].module, qf[2].module })
    assert.are.equal('fixer: added +3 -0; tidier: unchanged', qf[1].text)
    assert.truthy(H.find(vim.fn.getqflist({ title = 1 }).title, 'fixer vs tidier, 2 file(s) either changed'))
    local panel = H.find_buffer(diff.panel_key(r.id, { 'fixer', 'tidier' }))
    assert.are.same({ '▸ A· CHANGELOG.md', '  MM lib.sh' }, vim.list_slice(H.buffer_lines(panel), 4, 5))
    -- A legend for the two columns of letters.
    assert.are.same({
      '1st letter: fixer',
      '2nd letter: tidier',
      'A added · M modified',
      'D deleted · R renamed',
      'T type changed · · none',
    }, vim.list_slice(H.buffer_lines(panel), 7, 11))

    -- CHANGELOG.md: fixer added it, tidier has none.
    local fixer_log = H.find_buffer(diff.compare_key(r.id, 'fixer', 'tidier', 'CHANGELOG.md'))
    local tidier_log = H.find_buffer(diff.compare_key(r.id, 'tidier', 'fixer', 'CHANGELOG.md'))
    local _, changelog = H.request(root, 'hydra/diff', { raceId = r.id, agentId = 'fixer', path = 'CHANGELOG.md' })
    pair_windows(fixer_log, tidier_log, { '' })
    H.wait(function()
      return vim.deep_equal(H.buffer_lines(fixer_log), H.lines_of(changelog.agent))
    end, "fixer's CHANGELOG.md")

    -- lib.sh: both fixed add(); only tidier rewrote double(): that line is the difference.
    vim.cmd('cnext')
    local fixer_lib = H.find_buffer(diff.compare_key(r.id, 'fixer', 'tidier', 'lib.sh'))
    local tidier_lib = H.find_buffer(diff.compare_key(r.id, 'tidier', 'fixer', 'lib.sh'))
    local fixer_win, tidier_win = pair_windows(fixer_lib, tidier_lib, versions.tidier)
    assert.are.same(versions.fixer, H.buffer_lines(fixer_lib))
    assert.are.equal('fixer: lib.sh (vs tidier)', vim.fn.pathshorten(vim.fn.bufname(fixer_lib)))
    assert.are.equal('tidier: lib.sh (vs fixer)', vim.fn.pathshorten(vim.fn.bufname(tidier_lib)))
    assert.is_true(vim.api.nvim_win_get_position(fixer_win)[2] < vim.api.nvim_win_get_position(tidier_win)[2])
    assert.are.same({ '  add "$1" "$1"' }, H.changed_lines(fixer_win))
    assert.are.same({ '  echo $(( $1 * 2 ))' }, H.changed_lines(tidier_win))
    assert.are.same({ changed = 1, filler = 0 }, H.diff_of(fixer_win))
    -- Neither is a file of yours: both read-only.
    assert.is_false(vim.bo[fixer_lib].modifiable)
    assert.is_false(vim.bo[tidier_lib].modifiable)
    assert.are.equal('nofile', vim.bo[fixer_lib].buftype)

    -- Comparing an agent with itself says what to do instead.
    vim.cmd('HydraDiff fixer fixer')
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the refusal')
    assert.are.same({ 'hydra: compare two different agents (fixer twice)' }, H.take_errors())
  end)

  it("takes one hunk of the agent's change into your file with :diffget, and another with dp", function()
    review('tidier')
    local lib = vim.fn.bufnr(root .. '/lib.sh')
    local agent_lib = H.find_buffer(diff.agent_key(r.id, 'tidier', 'lib.sh'))
    local file_win, agent_win = pair_windows(lib, agent_lib, versions.tidier)
    -- tidier changed two places of lib.sh: two hunks.
    assert.are.same({ '  echo $(( $1 + $2 ))', '  echo $(( $1 * 2 ))' }, H.changed_lines(agent_win))

    -- :diffget on the line of the second in your file takes it alone.
    local double = index_of(base_lib, '  add "$1" "$1"')
    vim.api.nvim_set_current_win(file_win)
    vim.api.nvim_win_set_cursor(file_win, { double, 0 })
    vim.cmd('diffget')
    local expected = vim.deepcopy(base_lib)
    expected[double] = '  echo $(( $1 * 2 ))'
    assert.are.same(expected, H.buffer_lines(lib))
    assert.is_true(vim.bo[lib].modified)
    vim.cmd('diffupdate')
    assert.are.same({ '  echo $(( $1 + $2 ))' }, H.changed_lines(agent_win))
    vim.cmd('silent write')
    assert.are.same(expected, H.lines_of(H.read_file(root .. '/lib.sh')))
    assert.are.same({ ' M lib.sh' }, H.git(root, 'status', '--porcelain'))

    -- The agent's version stays as it was: nothing can be put into it.
    local add = index_of(base_lib, '  echo $(( $1 - $2 ))')
    vim.api.nvim_win_set_cursor(file_win, { add, 0 })
    assert.is_false(pcall(vim.cmd, 'diffput'))
    assert.are.same(versions.tidier, H.buffer_lines(agent_lib))

    -- dp on the other hunk, from the agent's side, puts it into your file.
    vim.api.nvim_set_current_win(agent_win)
    vim.api.nvim_win_set_cursor(agent_win, { add, 0 })
    vim.api.nvim_feedkeys('dp', 'x', false)
    assert.are.same(versions.tidier, H.buffer_lines(lib))
    assert.are.same(versions.tidier, H.buffer_lines(agent_lib))
    vim.api.nvim_buf_call(lib, function()
      vim.cmd('silent write')
    end)
    assert.are.same(versions.tidier, H.lines_of(H.read_file(root .. '/lib.sh')))

    H.git(root, 'checkout', '--', 'lib.sh')
    vim.api.nvim_buf_call(lib, function()
      vim.cmd('edit!')
    end)
  end)
end)
