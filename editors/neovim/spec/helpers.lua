-- Shared by the specs: throwaway git repositories with scripted agents, the
-- real hydra binary, waiting on the editor's event loop, and recording what
-- the plugin tells the user.

local H = {}

H.plugin_dir = assert(os.getenv('HYDRA_PLUGIN_DIR'), 'HYDRA_PLUGIN_DIR is not set (run scripts/test.sh)')
H.hydra_bin = assert(os.getenv('HYDRA_BIN'), 'HYDRA_BIN is not set (run scripts/test.sh)')
H.fixtures = H.plugin_dir .. '/spec/fixtures'
H.agent_script = H.fixtures .. '/agent.sh'

--- Runs a command (a list), returns its output lines; fails the spec when it fails.
function H.run(cmd, input)
  -- Without input, nothing is written to the command (a command that does
  -- not read its input would make the write fail).
  local out = input and vim.fn.systemlist(cmd, input) or vim.fn.systemlist(cmd)
  if vim.v.shell_error ~= 0 then
    error(table.concat(cmd, ' ') .. ' failed: ' .. table.concat(out, '\n'), 2)
  end
  return out
end

function H.git(root, ...)
  return H.run(vim.list_extend({ 'git', '-C', root }, { ... }))
end

function H.read_file(path)
  local f = assert(io.open(path, 'r'))
  local text = f:read('*a')
  f:close()
  return text
end

function H.write_file(path, text)
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

--- Lines of a text the way a buffer holds them (no empty last line for the final newline).
H.lines_of = function(text)
  return require('hydra.ui').text_lines(text)
end

--- Whether `haystack` holds `needle`, as it is (no pattern).
function H.find(haystack, needle)
  return haystack:find(needle, 1, true) ~= nil
end

--- The index of the first line holding `text` (plain); fails the spec when none does.
function H.line_with(lines, text)
  for i, l in ipairs(lines) do
    if l:find(text, 1, true) then
      return i
    end
  end
  error('no line with "' .. text .. '" in:\n' .. table.concat(lines, '\n'), 2)
end

--- Fails the spec when a line holds `text` (plain).
function H.no_line_with(lines, text)
  for _, l in ipairs(lines) do
    if l:find(text, 1, true) then
      error('unexpected "' .. text .. '" in: ' .. l, 2)
    end
  end
end

--- Fails the spec when a line holds a line break (a buffer line cannot).
function H.no_line_breaks(lines)
  for _, l in ipairs(lines) do
    if l:find('\n', 1, true) then
      error('a line holds a line break: ' .. vim.inspect(l), 2)
    end
  end
end

--- The highlight group of `highlights` ({line0, col_start, col_end, group},
--- as ui.builder makes them) at a line (1-based) and byte column (0-based).
function H.group_at(highlights, line, col)
  for _, h in ipairs(highlights) do
    if h[1] == line - 1 and col >= h[2] and col < h[3] then
      return h[4]
    end
  end
  return nil
end

--- The first agent hydra/agents lists as not available here, and the whole
--- answer.
function H.unavailable_agent(root)
  local _, known = H.request(root, 'hydra/agents')
  for _, a in ipairs(known.agents) do
    if not a.available then
      return a, known
    end
  end
  error('hydra/agents lists no agent that is not installed here', 2)
end

--- The index of the line that is exactly `wanted`, or nil.
function H.index_of(lines, wanted)
  for i, l in ipairs(lines) do
    if l == wanted then
      return i
    end
  end
  return nil
end

-- The agents every repository defines: the scripted agent in its modes, and
-- a replay of a real Claude Code stream read by hydra's claude adapter.
local agent_specs = {
  breaker = { adapter = 'command', binary = H.agent_script, args = { 'break' } },
  chatty = { adapter = 'command', binary = H.agent_script, args = { 'chatty' } },
  crasher = { adapter = 'command', binary = H.agent_script, args = { 'crash' } },
  fixer = { adapter = 'command', binary = H.agent_script, args = { 'fix' } },
  replay = { adapter = 'claude', binary = H.fixtures .. '/claude-replay.sh' },
  sleeper = { adapter = 'command', binary = H.agent_script, args = { 'sleep' } },
  tidier = { adapter = 'command', binary = H.agent_script, args = { 'tidy' } },
}
H.agent_names = { 'breaker', 'chatty', 'crasher', 'fixer', 'replay', 'sleeper', 'tidier' }

--- A fresh git repository on branch main holding the fixture project, a
--- hydra.toml with the scripted agents, and one commit. `env` adds
--- variables to every agent (SPEC_GATE, SPEC_PIDS, SPEC_LINES); `scoring`,
--- lines for hydra.toml's [scoring] ("auto_merge = true"), each replacing
--- the default line of the same key ("build_command = ..."); `extra`, more
--- lines for the end of hydra.toml (more agents, [collaboration]).
--- Returns its root (symbolic links resolved, as git reports it).
function H.make_repo(env, scoring, extra)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  dir = vim.fn.resolve(dir)
  H.run({ 'cp', '-R', H.fixtures .. '/project/.', dir })
  local env_items = {}
  for k, v in pairs(env or {}) do
    table.insert(env_items, string.format('%s = "%s"', k, v))
  end
  table.sort(env_items)
  local toml = {
    '[general]',
    'max_concurrent_agents = 4',
    'timeout_seconds = 60',
    -- Unconfined: the specs follow the agents by their host pids and hand
    -- them files outside the repository (SPEC_GATE, SPEC_PIDS), which the
    -- sandbox hides. hydra's own tests cover confinement.
    'sandbox = "off"',
    '',
  }
  for _, name in ipairs(H.agent_names) do
    local agent = agent_specs[name]
    vim.list_extend(toml, {
      '[agents.' .. name .. ']',
      'adapter = "' .. agent.adapter .. '"',
      'binary = "' .. agent.binary .. '"',
      'env = { ' .. table.concat(env_items, ', ') .. ' }',
    })
    if agent.args then
      table.insert(toml, 'args = ["' .. table.concat(agent.args, '", "') .. '"]')
    end
    table.insert(toml, '')
  end
  local scoring_lines = {
    'build_command = "sh -n lib.sh"',
    'test_command = "sh run-tests.sh"',
    'test_format = "pytest"',
    'timeout_per_check_seconds = 30',
  }
  local function key_of(line)
    return line:match('^([%w_]+)%s*=')
  end
  for _, line in ipairs(scoring or {}) do
    local replaced = false
    for i, default in ipairs(scoring_lines) do
      if key_of(line) and key_of(default) == key_of(line) then
        scoring_lines[i], replaced = line, true
      end
    end
    if not replaced then
      table.insert(scoring_lines, line)
    end
  end
  table.insert(toml, '[scoring]')
  vim.list_extend(toml, scoring_lines)
  if extra and #extra > 0 then
    table.insert(toml, '')
    vim.list_extend(toml, extra)
  end
  H.write_file(dir .. '/hydra.toml', table.concat(toml, '\n') .. '\n')
  H.run({ 'git', 'init', '-q', '-b', 'main', dir })
  H.git(dir, 'config', 'user.name', 'Spec Runner')
  H.git(dir, 'config', 'user.email', 'specs@example.invalid')
  H.git(dir, 'add', '-A')
  H.git(dir, 'commit', '-q', '-m', 'calc: the project before the race')
  return dir
end

-- The repository this plugin is part of: editors/neovim is two levels down.
H.repository = vim.fn.fnamemodify(H.plugin_dir, ':p:h:h:h')

--- A fresh git repository holding hydra's demo project (examples/demo/project,
--- as scripts/demo.sh makes it, without building or racing): its scripted
--- agents careful, alternating, breaker and sprawler, and its hydra.toml.
--- Returns its root (symbolic links resolved, as git reports it).
function H.make_demo_repo()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  dir = vim.fn.resolve(dir)
  H.run({ 'cp', '-R', H.repository .. '/examples/demo/project/.', dir })
  H.run({ 'git', 'init', '-q', '-b', 'main', dir })
  H.git(dir, 'config', 'user.name', 'Spec Runner')
  H.git(dir, 'config', 'user.email', 'specs@example.invalid')
  H.git(dir, 'add', '-A')
  H.git(dir, 'commit', '-q', '-m', 'shopcart: a small cart library')
  return dir
end

--- A directory holding a bwrap that cannot make its namespaces, as in a
--- container that forbids them: first on the PATH, it stands for a machine
--- where bubblewrap does not work.
function H.broken_bwrap_dir()
  local bin = vim.fn.tempname()
  vim.fn.mkdir(bin, 'p')
  H.write_file(bin .. '/bwrap', "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
  vim.fn.setfperm(bin .. '/bwrap', 'rwx------')
  return bin
end

--- Waits on the event loop until cond() is true; fails with `what` after timeout_ms.
function H.wait(cond, what, timeout_ms)
  local ok = vim.wait(timeout_ms or 30000, cond, 20)
  if not ok then
    error('timed out waiting for ' .. what, 2)
  end
end

-- What the plugin told the user: {message, level} in order.
H.notifications = {}
local real_notify = vim.notify

--- Records vim.notify instead of showing it.
function H.capture_notifications()
  H.notifications = {}
  vim.notify = function(message, level)
    table.insert(H.notifications, { message = message, level = level or vim.log.levels.INFO })
  end
end

function H.restore_notifications()
  vim.notify = real_notify
end

--- The recorded messages at `level` and above... exactly at `level`.
function H.messages(level)
  local out = {}
  for _, n in ipairs(H.notifications) do
    if level == nil or n.level == level then
      table.insert(out, n.message)
    end
  end
  return out
end

--- Removes and returns the recorded error messages.
function H.take_errors()
  local errors = H.messages(vim.log.levels.ERROR)
  H.notifications = vim.tbl_filter(function(n)
    return n.level ~= vim.log.levels.ERROR
  end, H.notifications)
  return errors
end

--- Fails when the plugin reported an error nobody expected (a Lua error
--- inside a handler is reported that way too).
function H.assert_no_errors()
  local errors = H.take_errors()
  if #errors > 0 then
    error('unexpected errors:\n' .. table.concat(errors, '\n'), 2)
  end
end

--- Waits for a message containing `text` (plain) at `level`; returns it.
function H.wait_message(text, level)
  local found
  H.wait(function()
    for _, n in ipairs(H.notifications) do
      if (level == nil or n.level == level) and n.message:find(text, 1, true) then
        found = n.message
        return true
      end
    end
    return false
  end, 'a message containing "' .. text .. '"; got:\n' .. table.concat(H.messages(), '\n'))
  return found
end

local real_select, real_input = vim.ui.select, vim.ui.input

--- Answers vim.ui.select with `pickers`, in turn: each gets (items, opts)
--- and returns the item to choose (nil cancels). The calls are recorded in
--- H.selects as {items, opts}.
function H.answer_selects(pickers)
  H.selects = {}
  local i = 0
  vim.ui.select = function(items, opts, on_choice)
    i = i + 1
    table.insert(H.selects, { items = items, opts = opts })
    local picker = pickers[i]
    assert(picker, 'unexpected vim.ui.select: ' .. tostring(opts and opts.prompt))
    on_choice(picker(items, opts))
  end
end

--- Answers vim.ui.input with `answers`, in turn (a function answer gets the
--- opts); prompts go to H.inputs, the opts to H.input_opts.
function H.answer_inputs(answers)
  H.inputs, H.input_opts = {}, {}
  local i = 0
  vim.ui.input = function(opts, on_confirm)
    i = i + 1
    table.insert(H.inputs, opts.prompt)
    table.insert(H.input_opts, opts)
    local answer = answers[i]
    if type(answer) == 'function' then
      answer = answer(opts)
    end
    on_confirm(answer)
  end
end

function H.restore_ui()
  vim.ui.select, vim.ui.input = real_select, real_input
end

--- Sends a request to the running server of `root` and waits for the answer.
function H.request(root, method, params)
  local done, err, result = false, nil, nil
  require('hydra.client').request(root, method, params or vim.empty_dict(), function(e, r)
    done, err, result = true, e, r
  end)
  H.wait(function()
    return done
  end, 'the answer to ' .. method)
  return err, result
end

function H.buffer_lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

function H.buffer_text(buf)
  return table.concat(H.buffer_lines(buf), '\n')
end

--- The highlight group on line `line` (0-based) of `buf` that covers byte `col`.
function H.highlight_at(buf, ns, line, col)
  local marks = vim.api.nvim_buf_get_extmarks(buf, ns, { line, 0 }, { line, -1 }, { details = true })
  for _, m in ipairs(marks) do
    local details = m[4]
    local end_col = details.end_col or -1
    local end_row = details.end_row or m[2]
    if m[3] <= col and (end_row > line or end_col == -1 or col < end_col) then
      return details.hl_group
    end
  end
  return nil
end

--- The diff Neovim computes for window `win` (in diff mode): how many of its
--- lines it highlights as added or changed, and how many filler lines it
--- shows for lines only the other side has.
function H.diff_of(win)
  return vim.api.nvim_win_call(win, function()
    local changed, filler = 0, 0
    local last = vim.api.nvim_buf_line_count(0)
    for lnum = 1, last do
      if vim.fn.diff_hlID(lnum, 1) ~= 0 then
        changed = changed + 1
      end
      filler = filler + vim.fn.diff_filler(lnum)
    end
    -- Filler below the last line is counted on the line after it.
    filler = filler + vim.fn.diff_filler(last + 1)
    return { changed = changed, filler = filler }
  end)
end

--- The lines of window `win` that its diff highlights as added or changed.
function H.changed_lines(win)
  return vim.api.nvim_win_call(win, function()
    local out = {}
    for lnum = 1, vim.api.nvim_buf_line_count(0) do
      if vim.fn.diff_hlID(lnum, 1) ~= 0 then
        table.insert(out, vim.fn.getline(lnum))
      end
    end
    return out
  end)
end

--- The plugin's buffer with key `key` (race.output_key, diff.agent_key...), or nil.
function H.find_buffer(key)
  return require('hydra.ui').find_buffer(key)
end

--- Waits until the race is over (hydra/raceFinished arrived).
function H.wait_race(race_id, timeout_ms)
  local race = require('hydra.race')
  H.wait(function()
    local r = race.races[race_id]
    return r ~= nil and require('hydra.protocol').finished_race_states[r.state] == true and r.rankings ~= nil
  end, 'race ' .. race_id .. ' to finish', timeout_ms or 60000)
  return race.races[race_id]
end

--- Starts a race through the plugin (as :HydraRace would) and returns its record.
function H.start_race(root, agents, task)
  local started
  require('hydra').race({
    root = root,
    agents = agents,
    task = task,
    callback = function(err, r)
      assert(not err, err and err.message)
      started = r
    end,
  })
  H.wait(function()
    return started ~= nil
  end, 'the race to start')
  return started
end

--- The scripts of the hostile agents the core tests use (tests/fixtures/hostile).
H.hostile = vim.fn.fnamemodify(H.plugin_dir .. '/../../tests/fixtures/hostile', ':p'):gsub('/$', '')

--- Adds agent `name`, running hostile script `script`, to `root`'s hydra.toml, committed.
function H.add_hostile_agent(root, name, script)
  H.write_file(
    root .. '/hydra.toml',
    H.read_file(root .. '/hydra.toml')
      .. string.format('\n[agents.%s]\nadapter = "command"\nbinary = "%s/%s"\n', name, H.hostile, script)
  )
  H.git(root, 'commit', '-q', '-am', 'agent ' .. name .. ' runs ' .. script)
end

--- Opens :HydraDiff with `target` (as require('hydra').diff takes it) and
--- waits for its files.
function H.open_diff(target)
  local files
  require('hydra').diff(vim.tbl_extend('force', target, {
    callback = function(_, f)
      files = f
    end,
  }))
  H.wait(function()
    return files ~= nil
  end, 'the diff')
  return files
end

--- What a spec file that races needs first: notifications recorded, a fresh
--- repository (H.make_repo(env, scoring, extra)) as the current directory,
--- and the plugin set up to start the hydra under test, with `window`
--- options. Returns the repository's root.
function H.prepare(window, env, scoring, extra)
  H.capture_notifications()
  local root = H.make_repo(env, scoring, extra)
  require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } }, window = window })
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  return root
end

--- Opens the scoreboard of a race, as :HydraScores does; returns its buffer.
function H.open_scores(race_id)
  local buf
  require('hydra').scores({
    race = race_id,
    callback = function(b)
      buf = b
    end,
  })
  H.wait(function()
    return buf ~= nil
  end, 'the scoreboard')
  return buf
end

--- Runs :HydraStatus and waits for its race list; returns its buffer.
function H.open_status(root)
  vim.cmd('HydraStatus')
  local buf
  H.wait(function()
    buf = H.find_buffer('hydra://' .. root .. '/status')
    return buf ~= nil and vim.api.nvim_get_current_buf() == buf
  end, 'the race list')
  return buf
end

--- Merges as :HydraMerge does (`target`: race, agent) where hydra must
--- refuse, answering no question (one asked fails the spec); returns the
--- error the merge ended with.
function H.refused_merge(target)
  H.answer_selects({})
  local done, merge_err
  require('hydra').merge(vim.tbl_extend('force', target, {
    callback = function(err)
      done, merge_err = true, err
    end,
  }))
  H.wait(function()
    return done
  end, 'the merge to be refused')
  return merge_err
end

--- Closes every tab and window but one and wipes the plugin's buffers.
function H.reset_windows()
  vim.cmd('silent! tabonly!')
  vim.cmd('silent! only!')
  vim.cmd('silent! cclose')
  vim.cmd('enew!')
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local ok = pcall(vim.api.nvim_buf_get_var, buf, 'hydra_key')
    if (ok or vim.api.nvim_buf_get_name(buf):find('^hydra://')) and #vim.fn.win_findbuf(buf) == 0 then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
end

--- Stops every hydra server and waits until their processes are gone.
function H.stop_servers()
  local client = require('hydra.client')
  local roots = client.roots()
  for _, root in ipairs(roots) do
    client.stop(root)
  end
  H.wait(function()
    return #client.roots() == 0
  end, 'the hydra servers to stop', 15000)
end

--- What every spec that races checks after it: no error reported, and the
--- questions it answered put back.
function H.checked()
  H.assert_no_errors()
  H.restore_ui()
end

--- What a spec file that raced leaves behind, undone: servers, windows,
--- recorded notifications and answered questions.
function H.clean_up()
  H.stop_servers()
  H.reset_windows()
  H.restore_notifications()
  H.restore_ui()
end

--- Whether process `pid` exists.
function H.alive(pid)
  vim.fn.system({ 'kill', '-0', tostring(pid) })
  return vim.v.shell_error == 0
end

return H
