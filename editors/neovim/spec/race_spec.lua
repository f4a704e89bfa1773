-- The whole path a user takes, against the real hydra binary and a throwaway
-- repository: race -> output buffers fill -> the scoreboard shows hydra/scores
-- -> the diff tab shows the right files -> the merge changes the repository.
-- The steps depend on each other, in order, like the user's session.

local H = require('helpers')
local diff = require('hydra.diff')
local race = require('hydra.race')
local ui = require('hydra.ui')

local find, index_of = H.find, H.index_of

-- What the fixer prints on stdout after its first line, in order.
local function fixer_printed()
  return {
    'fix: task: make add() add',
    'fix: waiting for the gate',
    'fix: reading lib.sh (9 lines)',
    'fix: fixed add() in lib.sh',
    'fix: done',
  }
end

describe('racing from Neovim', function()
  local root, gate, r, base_commit

  setup(function()
    gate = vim.fn.tempname()
    root = H.prepare({}, { SPEC_GATE = gate })
    base_commit = H.git(root, 'rev-parse', 'HEAD')[1]
  end)

  teardown(H.clean_up)

  after_each(function()
    H.assert_no_errors()
  end)

  it(':HydraRace opens one output buffer per agent and fills it while the agent runs', function()
    vim.cmd('HydraRace fixer breaker -- make add() add')
    H.wait(function()
      return race.latest_id(root) ~= nil
    end, 'the race to start')
    r = race.races[race.latest_id(root)]
    assert.are.same({ 'fixer', 'breaker' }, r.order)
    H.wait_message('hydra: race ' .. r.id .. ' started: fixer, breaker')

    -- A new tab, the agents side by side.
    local shown = {}
    for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      table.insert(shown, vim.api.nvim_win_get_buf(win))
    end
    local fixer = H.find_buffer(race.output_key(r.id, 'fixer'))
    assert.are.same({ fixer, H.find_buffer(race.output_key(r.id, 'breaker')) }, shown)
    assert.are.equal(2, vim.fn.tabpagenr('$'))
    -- The tab's label (the current window's buffer name, every folder
    -- shortened to a letter) says whose output it is.
    assert.are.equal('hydra: fixer (race ' .. r.id .. ')', vim.fn.pathshorten(vim.fn.bufname(fixer)))

    -- Both agents wait at the gate: what they printed so far is already there.
    H.wait(function()
      return find(H.buffer_text(fixer), 'fix: waiting for the gate')
    end, "the fixer's first lines")
    assert.are.equal('running', r.agents.fixer.state)
    assert.truthy(find(H.buffer_lines(fixer)[1], 'fixer · running'))
    assert.is_false(find(H.buffer_text(fixer), 'fix: done'))

    H.write_file(gate, '')
    H.wait_race(r.id)
    race.flush()

    local lines = H.buffer_lines(fixer)
    assert.truthy(find(lines[1], 'fixer · completed · race completed'))
    assert.are.equal('task: make add() add', lines[2])
    -- Every line the agent printed, in order.
    local printed = fixer_printed()
    local last = 0
    for _, l in ipairs(printed) do
      local at = index_of(lines, l)
      assert.is_not_nil(at, l)
      assert.is_true(at > last, l)
      last = at
    end
    -- stderr is there too, marked as such.
    local note = index_of(lines, 'fix: a note on stderr')
    assert.is_not_nil(note)
    assert.are.equal('HydraStderr', H.highlight_at(fixer, vim.api.nvim_create_namespace('hydra-output'), note - 1, 0))
    assert.truthy(find(lines[#lines], '■ completed · exit 0'))
    -- Its window followed the output to the end.
    local fixer_win = vim.fn.win_findbuf(fixer)[1]
    assert.are.equal(#lines, vim.api.nvim_win_get_cursor(fixer_win)[1])

    H.wait_message('hydra: race ' .. r.id .. ' completed; winner: fixer')
  end)

  it('completes agent names the server accepts, built-in adapters included', function()
    local names = require('hydra').complete_agents('', 'HydraRace ')
    -- hydra.toml's agents, and the built-in adapters the server lists: no copy in the plugin.
    assert.truthy(vim.tbl_contains(names, 'fixer'))
    assert.truthy(vim.tbl_contains(names, 'opencode'))
    assert.truthy(vim.tbl_contains(names, 'cursor'))
  end)

  it('opens the scoreboard by itself, and :HydraScores shows what hydra/scores says, coloured', function()
    local key = 'hydra://' .. r.id .. '/scores'
    local first = H.find_buffer(key)
    assert.is_not_nil(first, 'the scoreboard opened when the race finished')

    vim.cmd('HydraScores')
    H.wait(function()
      local buf = H.find_buffer(key)
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf and buf ~= first
    end, 'the scoreboard')
    local buf = vim.api.nvim_get_current_buf()
    assert.are_not.equal('', vim.api.nvim_win_get_config(0).relative, 'a floating window')
    assert.are.equal('hydra: scores (race ' .. r.id .. ')', vim.fn.pathshorten(vim.fn.bufname(buf)))

    local err, scores = H.request(root, 'hydra/scores', { raceId = r.id })
    assert.is_nil(err)
    local lines = H.buffer_lines(buf)
    assert.are.equal('Race Results — Task: "make add() add"', lines[1])
    assert.are.equal(2, #scores.rankings)
    for _, ranking in ipairs(scores.rankings) do
      local at
      for i, l in ipairs(lines) do
        if l:find('^  #' .. ranking.rank .. '  ' .. ranking.agentId .. ' ') then
          at = i
        end
      end
      assert.is_not_nil(at, 'a line for ' .. ranking.agentId)
      local line = lines[at]
      local total = string.format('%.1f / 100', ranking.total)
      assert.truthy(find(line, total), line)
      local col = line:find(string.format('%.1f', ranking.total), 1, true) - 1
      assert.are.equal(ui.score_group(ranking.total), H.highlight_at(buf, ui.ns, at - 1, col))

      local b = ranking.breakdown
      local build_ok = ranking.checks.build.exitCode == 0
      assert.truthy(find(line, build_ok and '[BUILD: ✓]' or '[BUILD: ✗]'), line)
      local function cell(label, value, skipped)
        if value == nil or value == vim.NIL then
          return '[' .. label .. ': n/a]'
        elseif skipped then
          return '[' .. label .. ': --]'
        end
        return '[' .. label .. ': ' .. math.floor(value + 0.5) .. ']'
      end
      assert.truthy(find(line, cell('TESTS', b.tests, not build_ok)), line)
      assert.truthy(find(line, cell('LINT', b.lint, not build_ok)), line)
      assert.truthy(find(line, cell('DIFF', b.diffSize, false)), line)
      assert.truthy(find(line, cell('SPEED', b.speed, false)), line)
    end
    -- fixer passes the tests; breaker does not even build.
    assert.are.equal('fixer', scores.winner)
    assert.is_true(scores.rankings[1].total > 80)
    assert.is_true(scores.rankings[2].total < 50)
    assert.is_not_nil(index_of(lines, 'Winner: fixer (branch: ' .. r.agents.fixer.branch .. ')'))
    -- The spec's hydra.toml leaves auto_merge off: however high the
    -- winner's total, nothing speaks of merging it by itself.
    assert.is_true(scores.autoMergeEligible)
    assert.is_false(scores.autoMergeEnabled)
    for _, words in ipairs({ 'auto_merge', 'automatically', 'eligible for auto-merge' }) do
      assert.is_false(find(H.buffer_text(buf), words), words)
    end
    -- The cursor starts on the winner's line.
    assert.truthy(vim.api.nvim_get_current_line():find('#1  fixer', 1, true))

    vim.api.nvim_feedkeys('q', 'x', false)
    assert.is_nil(H.find_buffer(key), 'q closes the scoreboard')
  end)

  it("says why a check failed: under the agent's line, in its details and in its log", function()
    local _, scores = H.request(root, 'hydra/scores', { raceId = r.id })
    local breaker = race.ranking_of(scores, 'breaker')
    local build = breaker.checks.build
    assert.are.equal(2, build.exitCode)
    local output = H.lines_of(build.output)
    assert.truthy(find(output[1], 'lib.sh: 3: Syntax error'), build.output)
    assert.is_true(breaker.checks.tests.skipped)

    -- The scoreboard: the first line of what the build printed, under breaker's line.
    local buf, win, agent_at = require('hydra').show_scores(r, race.score_model(r, scores))
    local lines = H.buffer_lines(buf)
    local note = index_of(lines, '      ✗ build failed (exit 2): ' .. output[1])
    assert.is_not_nil(note, table.concat(lines, '\n'))
    assert.are.equal('breaker', agent_at[note])
    assert.are.equal('HydraScorePoor', H.highlight_at(buf, ui.ns, note - 1, 6))
    assert.is_false(find(H.buffer_text(buf), '✗ tests'), 'the tests did not run: nothing failed')

    -- <CR> there: its details list every check, and what the failed one printed.
    vim.api.nvim_win_set_cursor(win, { note, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    local details = vim.api.nvim_get_current_buf()
    assert.are.equal('hydradetails', vim.bo[details].filetype)
    lines = H.buffer_lines(details)
    local checks = index_of(lines, 'Checks')
    assert.is_not_nil(checks, table.concat(lines, '\n'))
    local expected = { '  ✗ build: failed (exit 2) · sh -n lib.sh' }
    for _, l in ipairs(output) do
      table.insert(expected, '      ' .. l)
    end
    table.insert(expected, '  – tests: skipped: the build failed · sh run-tests.sh')
    assert.are.same(expected, vim.list_slice(lines, checks + 1, checks + #expected))
    assert.are.equal('HydraScorePoor', H.highlight_at(details, ui.ns, checks, 2))

    -- L from the details: its log ends with the same.
    vim.api.nvim_feedkeys('L', 'x', false)
    local hydra = require('hydra')
    H.wait(function()
      return vim.api.nvim_get_current_buf() == H.find_buffer(hydra.log_key(r.id, 'breaker'))
    end, "breaker's log")
    lines = H.buffer_lines(0)
    local heading = index_of(lines, hydra.log_checks_heading)
    assert.is_not_nil(heading, table.concat(lines, '\n'))
    assert.truthy(index_of(lines, 'break: rewriting lib.sh') < heading)
    expected = { '✗ build: failed (exit 2) · sh -n lib.sh' }
    for _, l in ipairs(output) do
      table.insert(expected, '    ' .. l)
    end
    table.insert(expected, '– tests: skipped: the build failed · sh run-tests.sh')
    assert.are.same(expected, vim.list_slice(lines, heading + 1))
    assert.are.equal('HydraScorePoor', H.highlight_at(0, ui.ns, heading, 0))
    ui.close_window()
  end)

  it(':HydraDiff lists the changed files and shows your file and the agent version side by side', function()
    local tabs = vim.fn.tabpagenr('$')
    H.open_diff({ agent = 'fixer' })
    assert.are.equal(tabs + 1, vim.fn.tabpagenr('$'))

    local err, expected = H.request(root, 'hydra/diff', { raceId = r.id, agentId = 'fixer' })
    assert.is_nil(err)
    local qf = vim.fn.getqflist()
    assert.are.equal(#expected.files, #qf)
    assert.are.same({ 'CHANGELOG.md', 'lib.sh' }, vim.tbl_map(function(f)
      return f.path
    end, expected.files))
    for i, item in ipairs(qf) do
      assert.are.equal(expected.files[i].path, item.module)
      assert.are.equal(H.find_buffer(diff.agent_key(r.id, 'fixer', expected.files[i].path)), item.bufnr)
      -- What a tab label shows of it (the name with every folder shortened
      -- to a letter): whose version of which file.
      assert.are.equal('fixer: ' .. expected.files[i].path, vim.fn.pathshorten(vim.fn.bufname(item.bufnr)))
    end
    assert.truthy(find(vim.fn.getqflist({ title = 1 }).title, 'fixer changed 2 file(s)'))

    -- The pair of a file: your file in the working tree on the left, the
    -- agent's version on the right, in diff mode.
    local function shown_pair(path)
      local agent_buf = H.find_buffer(diff.agent_key(r.id, 'fixer', path))
      local file_win, agent_win
      for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
        local buf = vim.api.nvim_win_get_buf(win)
        if buf == agent_buf then
          agent_win = win
        elseif vim.api.nvim_buf_get_name(buf) == root .. '/' .. path then
          file_win = win
        end
      end
      return file_win, agent_win
    end
    local function check_pair(path, file_lines)
      local file_win, agent_win
      H.wait(function()
        file_win, agent_win = shown_pair(path)
        return file_win ~= nil and agent_win ~= nil
      end, 'the pair of ' .. path)
      assert.is_true(vim.wo[file_win].diff)
      assert.is_true(vim.wo[agent_win].diff)
      local file_pos = vim.api.nvim_win_get_position(file_win)
      local agent_pos = vim.api.nvim_win_get_position(agent_win)
      assert.is_true(file_pos[2] < agent_pos[2], 'your file on the left')
      -- Yours is the file itself, to edit; the agent's version is read-only.
      local file_buf, agent_buf = vim.api.nvim_win_get_buf(file_win), vim.api.nvim_win_get_buf(agent_win)
      assert.are.same({ '', true }, { vim.bo[file_buf].buftype, vim.bo[file_buf].modifiable })
      assert.is_false(vim.bo[agent_buf].modifiable)
      local _, versions = H.request(root, 'hydra/diff', { raceId = r.id, agentId = 'fixer', path = path })
      H.wait(function()
        return vim.deep_equal(H.buffer_lines(agent_buf), H.lines_of(versions.agent))
      end, 'the agent version of ' .. path)
      assert.are.same(file_lines, H.buffer_lines(file_buf))
      return file_win, agent_win
    end

    -- The first file was added: you have none yet.
    local changelog_file_win, changelog_agent_win = check_pair('CHANGELOG.md', { '' })
    -- What Neovim itself computes for the pair: the agent's three lines,
    -- two of them added (the blank one matches the empty file).
    local changelog = {
      file = H.diff_of(changelog_file_win),
      agent = H.diff_of(changelog_agent_win),
    }
    assert.are.same({ changed = 2, filler = 0 }, changelog.agent)
    assert.are.same({ changed = 0, filler = 2 }, changelog.file)

    vim.cmd('cnext')
    local lib = H.lines_of(H.read_file(root .. '/lib.sh'))
    local file_win, agent_win = check_pair('lib.sh', lib)
    local agent_lib = H.buffer_text(vim.api.nvim_get_current_buf())
    assert.truthy(find(agent_lib, 'echo $(( $1 + $2 ))'))
    -- Only the pair and the panel of files: the previous pair's windows are gone.
    assert.are.equal(3, #vim.api.nvim_tabpage_list_wins(0))
    -- And so is the previous pair from the diff: fixer changed one line of
    -- lib.sh, so one line differs on each side and nothing is filler.
    assert.are.same({ changed = 1, filler = 0 }, H.diff_of(agent_win))
    assert.are.same({ changed = 1, filler = 0 }, H.diff_of(file_win))
    assert.are.same({ '  echo $(( $1 + $2 ))' }, H.changed_lines(agent_win))

    -- Back to the first file with :cc: its diff is what it was.
    vim.cmd('cc 1')
    changelog_file_win, changelog_agent_win = check_pair('CHANGELOG.md', { '' })
    assert.are.same(changelog.agent, H.diff_of(changelog_agent_win))
    assert.are.same(changelog.file, H.diff_of(changelog_file_win))
    vim.cmd('cc 2')
    file_win, agent_win = check_pair('lib.sh', lib)
    assert.are.same({ changed = 1, filler = 0 }, H.diff_of(agent_win))
    assert.are.same({ changed = 1, filler = 0 }, H.diff_of(file_win))
    -- Your lib.sh left the diff with the pair: no diff mode in another window.
    vim.cmd('cc 1')
    check_pair('CHANGELOG.md', { '' })
    vim.cmd('tabnew')
    vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/lib.sh'))
    assert.is_false(vim.wo.diff)
    vim.cmd('tabclose')

    -- <CR> on the first entry in the quickfix window: the same again.
    vim.cmd('copen')
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
    changelog_file_win, changelog_agent_win = check_pair('CHANGELOG.md', { '' })
    -- The panel, the pair and the quickfix list.
    assert.are.equal(4, #vim.api.nvim_tabpage_list_wins(0))
    assert.are.same(changelog.agent, H.diff_of(changelog_agent_win))
    assert.are.same(changelog.file, H.diff_of(changelog_file_win))
    -- The tab's label is the agent's version, whose buffer is current.
    assert.are.equal(changelog_agent_win, vim.api.nvim_get_current_win())

    -- A file of the same name in another folder, or of another race, gets
    -- a name that tells them apart.
    assert.are.same(
      { 'careful: cart.py', 'careful: cart.py (in shop › api)', 'careful: cart.py (in shop › api, race R)' },
      diff.agent_title('R', 'careful', 'shop/api/cart.py')
    )
    assert.are.same(
      { 'careful: lib.sh (vs sprawler)', 'careful: lib.sh (vs sprawler, race R)' },
      diff.compare_title('R', 'careful', 'sprawler', 'lib.sh')
    )
  end)

  it(":HydraLog shows the agent's complete output", function()
    local tabs = vim.fn.tabpagenr('$')
    vim.cmd('HydraLog fixer')
    local hydra = require('hydra')
    H.wait(function()
      local buf = H.find_buffer(hydra.log_key(r.id, 'fixer'))
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf
    end, 'the log')
    -- A window to read it in: a tab of its own, the whole height of the screen.
    assert.are.equal(tabs + 1, vim.fn.tabpagenr('$'))
    assert.are.equal(1, #vim.api.nvim_tabpage_list_wins(0))
    assert.are.equal(vim.o.lines - vim.o.cmdheight - 2, vim.api.nvim_win_get_height(0), 'below the tab line, above the status line')
    assert.are.equal('hydra: fixer log (race ' .. r.id .. ')', vim.fn.pathshorten(vim.fn.bufname()))
    -- A plain command's adapter reads no events from its output: what hydra
    -- recorded of it is its log, stderr marked.
    local lines = H.buffer_lines(0)
    assert.truthy(lines[1]:find('^fix: starting in fixer%-'))
    local printed = fixer_printed()
    -- Then the checks hydra ran on its work, all passed: one line each.
    local heading = index_of(lines, hydra.log_checks_heading)
    assert.is_not_nil(heading, table.concat(lines, '\n'))
    assert.are.same(vim.list_extend(vim.deepcopy(printed), { 'fix: a note on stderr', '' }), vim.list_slice(lines, 2, heading - 1))
    assert.are.equal('HydraStderr', H.highlight_at(0, ui.ns, heading - 3, 0))
    assert.are.same({
      '✓ build: passed · sh -n lib.sh',
      '✓ tests: 4 passed, 0 failed · sh run-tests.sh',
    }, vim.list_slice(lines, heading + 1))

    -- With raw, the log as printed: stdout, then stderr.
    vim.cmd('HydraLog fixer raw')
    H.wait(function()
      local buf = H.find_buffer(hydra.log_key(r.id, 'fixer', true))
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf
    end, 'the raw log')
    assert.are.equal('hydra: fixer raw log (race ' .. r.id .. ')', vim.fn.pathshorten(vim.fn.bufname()))
    lines = H.buffer_lines(0)
    assert.truthy(lines[1]:find('^fix: starting in fixer%-'))
    assert.are.same(vim.list_extend(printed, { '', '── stderr ──', 'fix: a note on stderr' }), vim.list_slice(lines, 2))
    for _, raw in ipairs({ true, false }) do
      for _, win in ipairs(vim.fn.win_findbuf(H.find_buffer(hydra.log_key(r.id, 'fixer', raw)))) do
        vim.api.nvim_win_close(win, true)
      end
    end

    -- The same from the agent's output buffer, with its key; the buffer
    -- knows its repository wherever the current directory is.
    vim.cmd('tabfirst')
    vim.cmd('tabnext')
    local output = vim.api.nvim_get_current_buf()
    assert.are.equal(H.find_buffer(race.output_key(r.id, 'breaker')), output)
    local elsewhere = vim.fn.tempname()
    vim.fn.mkdir(elsewhere, 'p')
    vim.cmd('cd ' .. vim.fn.fnameescape(elsewhere))
    assert.are.equal(root, require('hydra.client').find_root())
    vim.api.nvim_feedkeys('L', 'x', false)
    H.wait(function()
      return vim.api.nvim_get_current_buf() == H.find_buffer(hydra.log_key(r.id, 'breaker'))
    end, "the breaker's log")
    vim.cmd('cd ' .. vim.fn.fnameescape(root))
    assert.truthy(H.buffer_lines(0)[1]:find('^break: starting in breaker%-'))
  end)

  it(':HydraMerge of an agent that is not the winner says why, and offers Cancel first', function()
    H.notifications = {}
    H.answer_selects({
      function(items)
        return items[1]
      end,
    })
    vim.cmd('HydraMerge breaker')
    H.wait_message('hydra: merge cancelled; nothing was changed')
    local ask = H.selects[1]
    assert.are.same({ 'Cancel', 'Merge anyway' }, ask.items)
    assert.are.equal('hydra_merge_warning', ask.opts.kind)
    local prompt = ask.opts.prompt
    local _, scores = H.request(root, 'hydra/scores', { raceId = r.id })
    local breaker = scores.rankings[2]
    assert.are.equal('breaker', breaker.agentId)
    local expected = string.format(
      'Warning: breaker is not a safe pick: it ranked #2 of 2 (%.1f / 100; the winner, fixer, has %.1f); its build failed (exit %d).',
      breaker.total,
      scores.rankings[1].total,
      breaker.checks.build.exitCode
    )
    assert.are.equal(expected, vim.split(prompt, '\n', { plain = true })[1])
    assert.truthy(find(prompt, 'Merge breaker (' .. r.agents.breaker.branch .. ') into main'), prompt)
    assert.are.equal(base_commit, H.git(root, 'rev-parse', 'HEAD')[1])
  end)

  it(':HydraMerge asks first, and Cancel changes nothing', function()
    H.notifications = {}
    H.answer_selects({
      function()
        return 'Cancel'
      end,
    })
    vim.cmd('HydraMerge')
    H.wait_message('hydra: merge cancelled; nothing was changed')
    local prompt = H.selects[1].opts.prompt
    assert.truthy(find(prompt, 'Merge fixer (' .. r.agents.fixer.branch .. ') into main as a fast-forward'), prompt)
    assert.truthy(find(prompt, '2 file(s): CHANGELOG.md, lib.sh'), prompt)
    assert.are.same({ 'Merge', 'Cancel' }, H.selects[1].items)
    assert.are.equal('hydra_merge', H.selects[1].opts.kind)
    assert.is_false(find(prompt, 'Warning'), 'the winner is merged without a warning')
    assert.are.equal(base_commit, H.git(root, 'rev-parse', 'HEAD')[1])
  end)

  it(':HydraMerge merges the winner once confirmed and reloads the changed buffers', function()
    vim.cmd('tabnew')
    vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/lib.sh'))
    local lib = vim.api.nvim_get_current_buf()
    assert.truthy(find(H.buffer_text(lib), '$(( $1 - $2 ))'))

    H.answer_selects({
      function(items)
        return items[1]
      end,
    })
    vim.cmd('HydraMerge')
    local message = H.wait_message('hydra: merged ' .. r.agents.fixer.branch .. ' into main (fast-forward')

    local head = H.git(root, 'rev-parse', 'HEAD')[1]
    assert.are_not.equal(base_commit, head)
    assert.truthy(find(message, head:sub(1, 12)))
    assert.are.same({}, H.git(root, 'status', '--porcelain'))
    local on_disk = H.read_file(root .. '/lib.sh')
    assert.truthy(find(on_disk, '$(( $1 + $2 ))'))
    assert.are.equal(1, vim.fn.filereadable(root .. '/CHANGELOG.md'))
    -- The open buffer shows the merged file, without being asked to reload.
    assert.are.same(H.lines_of(on_disk), H.buffer_lines(lib))
    assert.is_false(vim.bo[lib].modified)
  end)
end)
