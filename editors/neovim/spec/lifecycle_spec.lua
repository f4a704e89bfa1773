-- The server's life: one per repository root, messages it sends on its own,
-- a clean stop, and no hydra process or agent left behind when Neovim quits.

local H = require('helpers')
local client = require('hydra.client')

local function find(haystack, needle)
  return haystack:find(needle, 1, true) ~= nil
end

local function hydra_clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return vim.tbl_filter(function(c)
    return c.name == 'hydra'
  end, get())
end

-- Process states from /proc: a zombie has exited (whoever reaps it).
local function running(pid)
  local f = io.open('/proc/' .. pid .. '/stat', 'r')
  if not f then
    return false
  end
  local stat = f:read('*l') or ''
  f:close()
  return stat:match('^%d+ %b() (%a)') ~= 'Z'
end

local function group_running(pgid)
  for _, path in ipairs(vim.fn.glob('/proc/[0-9]*/stat', false, true)) do
    local f = io.open(path, 'r')
    if f then
      local stat = f:read('*l') or ''
      f:close()
      local state, group = stat:match('^%d+ %b() (%a) %d+ (%d+)')
      if group == tostring(pgid) and state ~= 'Z' then
        return true
      end
    end
  end
  return false
end

describe('hydra serve', function()
  before_each(function()
    H.capture_notifications()
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } } })
  end)

  after_each(function()
    H.stop_servers()
    H.restore_notifications()
  end)

  it('runs once per repository root, for every folder inside it', function()
    local a, b = H.make_repo(), H.make_repo()
    vim.fn.mkdir(a .. '/sub/dir', 'p')
    assert.are.equal(a, client.find_root(a .. '/sub/dir'))
    assert.are.equal(a, client.find_root(a .. '/lib.sh'))
    assert.is_nil(client.find_root(vim.fn.tempname()))

    assert.is_nil((H.request(a, 'hydra/ping')))
    assert.is_nil((H.request(b, 'hydra/ping')))
    local first = client.lsp_client(a)
    assert.is_nil((H.request(client.find_root(a .. '/sub/dir'), 'hydra/ping')))
    assert.are.equal(first.id, client.lsp_client(a).id)
    assert.are_not.equal(first.id, client.lsp_client(b).id)
    assert.are.equal(2, #hydra_clients())
    assert.are.equal(a, first.config.root_dir)

    -- hydra answered initialize with its capabilities: every agent name a
    -- race accepts, the configured ones first, then the built-in adapters.
    local agents = client.capabilities(a).agents
    local configured = vim.list_slice(agents, 1, #H.agent_names)
    table.sort(configured)
    assert.are.same(H.agent_names, configured)
    assert.truthy(vim.tbl_contains(agents, 'claude'), table.concat(agents, ' '))
  end)

  it('stops cleanly: shutdown, exit, exit code 0', function()
    local root = H.make_repo()
    local code
    client.on(client.server_exited, function(p, r)
      if r == root then
        code = p.code
      end
    end)
    assert.is_nil((H.request(root, 'hydra/ping')))
    client.stop(root)
    H.wait(function()
      return code ~= nil
    end, 'hydra serve to exit')
    assert.are.equal(0, code)
    assert.is_nil(client.get(root))
    assert.are.same({}, H.take_errors())
  end)

  it("shows what hydra says a person must see, like a broken hydra.toml", function()
    local root = H.make_repo()
    local toml = root .. '/hydra.toml'
    H.write_file(toml, '[general]\nmax_concurent_agents = 2\n')
    assert.is_nil((H.request(root, 'hydra/ping')))
    local message = H.wait_message('hydra.toml', vim.log.levels.ERROR)
    assert.truthy(find(message, 'max_concurent_agents'), message)
    H.take_errors()

    -- And on the line it is about, as a diagnostic of hydra.toml.
    local buf = vim.fn.bufadd(toml)
    local function problems()
      return vim.diagnostic.get(buf, { namespace = client.config_namespace })
    end
    H.wait(function()
      return #problems() == 1
    end, 'the diagnostic')
    local shown = problems()[1]
    assert.are.equal(1, shown.lnum, 'line 2')
    assert.are.equal(vim.diagnostic.severity.ERROR, shown.severity)
    assert.truthy(find(shown.message, 'max_concurent_agents'), shown.message)

    -- Every request that needs the file says so, with the same place: the
    -- error's data alone (file, line, column) puts the diagnostic back.
    vim.diagnostic.reset(client.config_namespace, buf)
    assert.are.same({}, problems())
    local err = H.request(root, 'hydra/agents')
    assert.are.equal(-32019, err.code)
    assert.are.equal(vim.fn.resolve(toml), vim.fn.resolve(err.data.file))
    assert.are.equal(1, #problems())
    assert.are.same(
      { err.data.line - 1, math.max(err.data.column - 1, 0), err.data.message, 'hydra' },
      { problems()[1].lnum, problems()[1].col, problems()[1].message, problems()[1].source }
    )
    require('hydra').race({ root = root, agents = { 'fixer' }, task = 'anything' })
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the error')
    local errors = H.take_errors()
    assert.are.equal(1, #errors)
    assert.truthy(find(errors[1], err.message), errors[1])

    -- Another mistake, saved from Neovim: the diagnostic moves to it.
    vim.cmd('silent edit ' .. vim.fn.fnameescape(toml))
    assert.are.equal(buf, vim.api.nvim_get_current_buf())
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '[general]', 'max_concurrent_agents = 2', 'timeout_seconds = "soon"' })
    vim.cmd('silent write')
    H.wait(function()
      return #problems() == 1 and problems()[1].lnum == 2
    end, 'the diagnostic on line 3; got ' .. vim.inspect(problems()))
    H.take_errors()
    -- Fixed and saved: it is gone.
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { '[general]', 'max_concurrent_agents = 2' })
    vim.cmd('silent write')
    H.wait(function()
      return #problems() == 0
    end, 'the diagnostic to go')

    -- Broken and fixed outside Neovim: the next request that reads it shows
    -- the problem, the next one that succeeds clears it.
    vim.cmd('bwipeout!')
    buf = vim.fn.bufadd(toml)
    H.write_file(toml, '[general]\nmax_concurrent_agents = "many"\n')
    err = H.request(root, 'hydra/agents')
    assert.are.equal(-32019, err.code)
    assert.are.same({ { 1, math.max(err.data.column - 1, 0) } }, vim.tbl_map(function(d)
      return { d.lnum, d.col }
    end, problems()))
    H.write_file(toml, '[general]\nmax_concurrent_agents = 2\n')
    assert.is_nil((H.request(root, 'hydra/agents')))
    assert.are.same({}, problems())
    H.take_errors()
  end)

  it('shows the diagnostics hydra publishes for hydra.toml, and clears them', function()
    local root = H.make_repo()
    local toml = root .. '/hydra.toml'
    assert.is_nil((H.request(root, 'hydra/ping')))
    local lsp = client.lsp_client(root)
    local publish = lsp.handlers['textDocument/publishDiagnostics']
    local ctx = { method = 'textDocument/publishDiagnostics', client_id = lsp.id }
    local uri = vim.uri_from_fname(toml)
    -- Nothing has hydra.toml open: the diagnostics load a buffer for it.
    assert.are.equal(0, vim.fn.bufexists(toml))
    publish(nil, {
      uri = uri,
      diagnostics = {
        {
          range = { start = { line = 3, character = 0 }, ['end'] = { line = 3, character = 7 } },
          severity = 1,
          source = 'hydra',
          message = "unknown key 'binry' in [agents.fixer]; did you mean 'binary'?",
        },
      },
    }, ctx)
    local buf = vim.fn.bufnr(toml)
    assert.is_true(buf > 0)
    local shown = vim.diagnostic.get(buf, { namespace = client.config_namespace })
    assert.are.equal(1, #shown)
    assert.are.same({ 3, 0, 3, 7 }, { shown[1].lnum, shown[1].col, shown[1].end_lnum, shown[1].end_col })
    assert.truthy(find(shown[1].message, "did you mean 'binary'"))
    assert.is_true(client.config_problem_shown(root))
    publish(nil, { uri = uri, diagnostics = {} }, ctx)
    assert.are.same({}, vim.diagnostic.get(buf, { namespace = client.config_namespace }))
    assert.is_false(client.config_problem_shown(root))
  end)

  it('puts a hydra.toml broken on disk on its line by itself, once, and takes it off once fixed', function()
    local root = H.make_repo()
    local toml = root .. '/hydra.toml'
    local good = H.read_file(toml)
    assert.is_nil((H.request(root, 'hydra/ping')))
    -- hydra.toml is open, as when you edit it.
    vim.cmd('silent edit ' .. vim.fn.fnameescape(toml))
    local buf = vim.api.nvim_get_current_buf()
    -- Every diagnostic of a hydra.toml, whatever its namespace.
    local function everything()
      local out = {}
      for _, d in ipairs(vim.diagnostic.get(nil)) do
        if vim.endswith(vim.api.nvim_buf_get_name(d.bufnr), '/hydra.toml') then
          table.insert(out, { d.bufnr, d.lnum, d.message })
        end
      end
      return out
    end

    -- Broken outside Neovim, far down the file; no command follows: hydra
    -- reads it again by itself and publishes the problem.
    local at = H.index_of(H.lines_of(good), 'test_format = "pytest"')
    H.write_file(toml, (good:gsub('test_format = "pytest"', 'test_formt = "pytest"')))
    H.wait(function()
      return #everything() > 0
    end, 'the diagnostic of the broken hydra.toml', 8000)
    local shown = everything()
    assert.are.equal(1, #shown, vim.inspect(shown))
    assert.are.same({ buf, at - 1 }, { shown[1][1], shown[1][2] })
    assert.truthy(find(shown[1][3], 'test_formt'), shown[1][3])
    assert.are.same(shown, vim.tbl_map(function(d)
      return { d.bufnr, d.lnum, d.message }
    end, vim.diagnostic.get(buf, { namespace = client.config_namespace })))

    -- Read again from disk: the problem stays, once (Neovim 0.7 drops a
    -- buffer's diagnostics when it is read again; hydra publishes only changes).
    vim.cmd('silent edit!')
    assert.are.same(shown, everything())

    -- A request meets the same problem (the error, then hydra's message):
    -- still one diagnostic, on the same line.
    local err = H.request(root, 'hydra/agents')
    assert.are.equal(-32019, err.code)
    H.wait_message('test_formt', vim.log.levels.ERROR)
    H.take_errors()
    shown = everything()
    assert.are.equal(1, #shown, vim.inspect(shown))
    assert.are.same({ buf, at - 1 }, { shown[1][1], shown[1][2] })

    -- Fixed on disk, again without a command: it goes.
    H.write_file(toml, good)
    H.wait(function()
      return #everything() == 0
    end, 'the diagnostic to go; got ' .. vim.inspect(everything()), 8000)
    assert.is_false(client.config_problem_shown(root))
    assert.are.same({}, H.take_errors())
    vim.cmd('bwipeout!')
  end)

  it('and the agents it runs are gone when Neovim quits', function()
    local nvim = assert(os.getenv('HYDRA_NVIM'), 'HYDRA_NVIM is not set (run scripts/test.sh)')
    local pids = vim.fn.tempname()
    local root = H.make_repo({ SPEC_PIDS = pids })
    local job = vim.fn.jobstart({ nvim, '--embed', '--headless', '--clean', '-n', '-i', 'NONE' }, { rpc = true, cwd = root })
    assert.is_true(job > 0)
    vim.rpcrequest(
      job,
      'nvim_exec_lua',
      [[
        local plugin, bin, root = ...
        vim.opt.runtimepath:prepend(plugin)
        vim.cmd('runtime plugin/hydra.lua')
        require('hydra').setup({ server = { cmd = { bin, 'serve' } } })
        require('hydra').race({ root = root, agents = { 'sleeper' }, task = 'think', callback = function(err, r)
          _G.spec_race = r and r.id or err.message
        end })
      ]],
      { H.plugin_dir, H.hydra_bin, root }
    )
    -- The agent writes its pid and its parent's (hydra serve) once it runs.
    H.wait(function()
      return vim.fn.filereadable(pids) == 1 and H.read_file(pids):match('^%d+ %d+') ~= nil
    end, 'the agent to start')
    local agent_pid, server_pid = H.read_file(pids):match('^(%d+) (%d+)')
    assert.is_true(running(agent_pid))
    assert.is_true(running(server_pid))
    local race_id = vim.rpcrequest(job, 'nvim_exec_lua', 'return _G.spec_race', {})
    assert.truthy(race_id:match('^%d+%-%d+%-%x+$'), race_id)

    vim.rpcnotify(job, 'nvim_command', 'qall!')
    assert.are.same({ 0 }, vim.fn.jobwait({ job }, 20000))
    H.wait(function()
      return not running(server_pid) and not group_running(agent_pid)
    end, 'hydra serve and the agent to end', 15000)

    -- hydra recorded the race as interrupted on its way out.
    local err, status = H.request(root, 'hydra/status', { raceId = race_id })
    assert.is_nil(err)
    assert.are.equal('interrupted', status.races[1].state)
  end)
end)
