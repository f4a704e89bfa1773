-- One `hydra serve` per repository root, started through Neovim's own LSP
-- client: hydra speaks the LSP base protocol and lifecycle, so the editor's
-- client does the framing, the initialize/shutdown handshake and stopping the
-- server when Neovim exits. This module adds what hydra needs on top: routing
-- of the hydra/* notifications, requests that wait for initialize, and errors
-- reported through vim.notify.

local protocol = require('hydra.protocol')

local M = {}

-- root -> { id, root, anchor, ready, queue, capabilities }
local servers = {}
-- notification method -> list of listeners(params, root)
local listeners = {}
-- request method -> list of listeners(params, result, root) for its answers
local answer_listeners = {}

local has_0_11 = vim.fn.has('nvim-0.11') == 1

-- A pseudo-notification listeners get when a server's process ends.
M.server_exited = 'hydra serve exited'

-- Calls a method of an LSP client object: Neovim 0.11 made them methods
-- (client:request), earlier versions have plain functions (client.request).
local function call(client, name, ...)
  if has_0_11 then
    return client[name](client, ...)
  end
  return client[name](...)
end

--- Reports an error to the user: `message` is the server's own when it sent one.
function M.notify_error(err, context)
  local message = type(err) == 'table' and err.message or tostring(err)
  -- hydra's words may quote an agent's (a file name, a line of its output).
  message = require('hydra.ui').visible(message)
  vim.notify('hydra: ' .. (context and (context .. ': ') or '') .. message, vim.log.levels.ERROR)
end

-- Runs fn(...) and turns a Lua error into a notification (with the traceback),
-- so that a bug in a handler is seen instead of lost inside the LSP client.
function M.guarded(fn, ...)
  local ok, err = xpcall(fn, debug.traceback, ...)
  if not ok then
    vim.notify('hydra: Lua error: ' .. tostring(err), vim.log.levels.ERROR)
  end
end

--- The top of the git work tree holding `path` (a file or folder; default:
--- the current buffer's repository, file or the current directory), or nil.
function M.find_root(path)
  if path == nil then
    -- The plugin's own buffers (output, diffs, logs) belong to the repository they show.
    local ok, root = pcall(vim.api.nvim_buf_get_var, 0, 'hydra_root')
    if ok and type(root) == 'string' then
      return root
    end
    local name = vim.api.nvim_buf_get_name(0)
    if name ~= '' and vim.bo.buftype == '' and vim.fn.filereadable(name) == 1 then
      path = vim.fn.fnamemodify(name, ':p:h')
    else
      path = vim.fn.getcwd()
    end
  elseif vim.fn.isdirectory(path) == 0 then
    path = vim.fn.fnamemodify(path, ':p:h')
  end
  local out = vim.fn.systemlist({ 'git', '-C', path, 'rev-parse', '--show-toplevel' })
  if vim.v.shell_error ~= 0 or out[1] == nil or out[1] == '' then
    return nil
  end
  return vim.fn.resolve(out[1])
end

--- Registers fn(params, root) for a hydra/* notification.
function M.on(method, fn)
  listeners[method] = listeners[method] or {}
  table.insert(listeners[method], fn)
end

local function dispatch(root, method, params)
  for _, fn in ipairs(listeners[method] or {}) do
    M.guarded(fn, params, root)
  end
end

--- Registers fn(params, result, root) for every successful answer to the
--- request `method`, whatever sent it.
function M.on_answer(method, fn)
  answer_listeners[method] = answer_listeners[method] or {}
  table.insert(answer_listeners[method], fn)
end

-- hydra.toml's problems as diagnostics, on the file's own buffer.
M.config_namespace = vim.api.nvim_create_namespace('hydra-config')
-- root -> { [bufnr] = true }: the buffers that show a problem of that root's hydra.toml.
local problem_buffers = {}
-- bufnr -> the diagnostics shown on it: set again when the buffer is read
-- again (`:edit`), which drops them on Neovim 0.7, while hydra publishes only
-- what changed.
local shown_problems = {}

local function set_problems(buf, items)
  vim.diagnostic.set(M.config_namespace, buf, items)
  shown_problems[buf] = #items > 0 and items or nil
end

local function reset_problems(buf)
  vim.diagnostic.reset(M.config_namespace, buf)
  shown_problems[buf] = nil
end

--- Shows a problem of `root`'s hydra.toml, `{file, line, column, message}`
--- (line and column 1-based, 0 when unknown: the shape of ConfigError's
--- data), as a diagnostic on the file; nil clears what was shown.
function M.show_config_problem(root, problem)
  for buf in pairs(problem_buffers[root] or {}) do
    if vim.api.nvim_buf_is_valid(buf) then
      reset_problems(buf)
    end
  end
  problem_buffers[root] = nil
  if not problem or type(problem.file) ~= 'string' or problem.file == '' then
    return
  end
  local buf = vim.fn.bufadd(problem.file)
  local line = math.max((tonumber(problem.line) or 0) - 1, 0)
  local col = math.max((tonumber(problem.column) or 0) - 1, 0)
  set_problems(buf, {
    {
      lnum = line,
      col = col,
      severity = vim.diagnostic.severity.ERROR,
      message = problem.message or 'hydra.toml is broken',
      source = 'hydra',
    },
  })
  problem_buffers[root] = { [buf] = true }
end

--- Whether a problem of `root`'s hydra.toml is shown.
function M.config_problem_shown(root)
  return problem_buffers[root] ~= nil
end

--- The problem a window/showMessage of hydra names, when it is about
--- hydra.toml: "hydra.toml is broken: FILE[:LINE[:COLUMN]]: MESSAGE" (at
--- start, followed by " (races cannot start until it is fixed)").
function M.parse_config_message(text)
  local rest = type(text) == 'string' and text:match('^hydra%.toml is broken: (.*)$')
  if not rest then
    return nil
  end
  rest = rest:gsub(' %(races cannot start until it is fixed%)$', '')
  local file, line, column, message = rest:match('^(.-):(%d+):(%d+): (.*)$')
  if file then
    return { file = file, line = tonumber(line), column = tonumber(column), message = message }
  end
  file, line, message = rest:match('^(.-):(%d+): (.*)$')
  if file then
    return { file = file, line = tonumber(line), column = 0, message = message }
  end
  file, message = rest:match('^(.-): (.*)$')
  if file then
    return { file = file, line = 0, column = 0, message = message }
  end
  return nil
end

-- The requests that read hydra.toml: answered without a ConfigError, the file is fine.
local reads_config = {
  [protocol.agents] = true,
  [protocol.race] = true,
  [protocol.collab] = true,
  [protocol.merge] = true,
  [protocol.cleanup] = true,
  [protocol.eval_run] = true,
}

local function note_config(root, method, err)
  if type(err) == 'table' and err.code == protocol.errors.config_error then
    if type(err.data) == 'table' then
      M.show_config_problem(root, err.data)
    end
  elseif err == nil and reads_config[method] then
    M.show_config_problem(root, nil)
  end
end

local show_message_levels = {
  [1] = vim.log.levels.ERROR,
  [2] = vim.log.levels.WARN,
  [3] = vim.log.levels.INFO,
  [4] = vim.log.levels.DEBUG,
}

local function make_handlers(root)
  local handlers = {}
  for _, method in ipairs({
    protocol.agent_started,
    protocol.agent_output,
    protocol.agent_finished,
    protocol.scoring_started,
    protocol.race_finished,
    protocol.iteration_finished,
    protocol.eval_sample,
    protocol.eval_finished,
  }) do
    handlers[method] = function(_, params)
      dispatch(root, method, params)
    end
  end
  -- What hydra says a person must see (a broken hydra.toml, a refused or
  -- conflicting merge) goes through vim.notify, like every other message.
  handlers[protocol.show_message] = function(_, params)
    if type(params) == 'table' and params.message then
      vim.notify('hydra: ' .. require('hydra.ui').visible(params.message), show_message_levels[params.type] or vim.log.levels.INFO)
      local problem = M.parse_config_message(params.message)
      if problem then
        M.show_config_problem(root, problem)
      end
    end
  end
  -- Diagnostics hydra publishes (hydra.toml's problems, on the file) replace
  -- the ones read from its messages and errors: one namespace for both.
  handlers[protocol.publish_diagnostics] = function(_, params)
    if type(params) ~= 'table' or type(params.uri) ~= 'string' then
      return
    end
    local buf = vim.uri_to_bufnr(params.uri)
    local items = {}
    for _, d in ipairs(params.diagnostics or {}) do
      local range = d.range or {}
      local first, last = range.start or {}, range['end'] or range.start or {}
      table.insert(items, {
        lnum = first.line or 0,
        col = first.character or 0,
        end_lnum = last.line,
        end_col = last.character,
        -- LSP's severities are vim.diagnostic's numbers.
        severity = d.severity or vim.diagnostic.severity.ERROR,
        message = d.message or '',
        source = d.source or 'hydra',
        code = d.code,
      })
    end
    for b in pairs(problem_buffers[root] or {}) do
      if b ~= buf and vim.api.nvim_buf_is_valid(b) then
        reset_problems(b)
      end
    end
    set_problems(buf, items)
    problem_buffers[root] = #items > 0 and { [buf] = true } or nil
  end
  return handlers
end

local function flush_queue(server)
  local queue = server.queue
  server.queue = {}
  for _, item in ipairs(queue) do
    M.request(server.root, item[1], item[2], item[3])
  end
end

local function fail_queue(server, message)
  local queue = server.queue
  server.queue = {}
  for _, item in ipairs(queue) do
    M.guarded(item[3], { message = message }, nil)
  end
end

local function anchor_buffer(root)
  -- vim.lsp.start attaches the client to a buffer. hydra has nothing to say
  -- about the user's files, so it gets a hidden buffer of its own.
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buf, 'hydra://server/' .. root)
  return buf
end

local function start(root)
  local options = require('hydra.config').options
  local cmd = options.server.cmd
  if vim.fn.executable(cmd[1]) ~= 1 then
    return nil,
      string.format(
        "'%s' is not an executable: install hydra or set server.cmd in require('hydra').setup()",
        cmd[1]
      )
  end
  local server = { root = root, ready = false, queue = {} }
  local config = {
    name = 'hydra',
    cmd = cmd,
    root_dir = root,
    handlers = make_handlers(root),
    -- On exit Neovim sends shutdown and waits this long for hydra to stop its
    -- agents and exit (hydra needs about two seconds at most) before it kills it.
    flags = { exit_timeout = 3000 },
    on_init = function(client, result)
      server.capabilities = (result and result.capabilities and result.capabilities.hydra) or {}
      server.ready = true
      server.id = client.id
      vim.schedule(function()
        flush_queue(server)
      end)
    end,
    on_exit = function(code, signal)
      -- Called from the event loop's own callback: leave it before touching the editor.
      vim.schedule(function()
        if servers[root] == server then
          servers[root] = nil
        end
        if server.anchor and vim.api.nvim_buf_is_valid(server.anchor) then
          vim.api.nvim_buf_delete(server.anchor, { force = true })
        end
        fail_queue(server, 'hydra serve exited')
        if code ~= 0 and not server.stopping and vim.v.exiting == vim.NIL then
          vim.notify(
            string.format('hydra: hydra serve for %s exited (code %d, signal %d)', root, code, signal or 0),
            vim.log.levels.ERROR
          )
        end
        dispatch(root, M.server_exited, { code = code, signal = signal })
      end)
    end,
  }

  local ok, id_or_err
  if vim.lsp.start then
    server.anchor = anchor_buffer(root)
    ok, id_or_err = pcall(vim.lsp.start, config, {
      bufnr = server.anchor,
      -- Only a live hydra client of this very root may be shared.
      reuse_client = function(client, conf)
        return client.name == conf.name
          and client.config.root_dir == conf.root_dir
          and not call(client, 'is_stopped')
      end,
    })
  else
    ok, id_or_err = pcall(vim.lsp.start_client, config)
  end
  if not ok or not id_or_err then
    if server.anchor and vim.api.nvim_buf_is_valid(server.anchor) then
      vim.api.nvim_buf_delete(server.anchor, { force = true })
    end
    return nil, 'could not start ' .. table.concat(cmd, ' ') .. (ok and '' or (': ' .. tostring(id_or_err)))
  end
  server.id = id_or_err
  -- A reused client was initialized long ago: on_init will not come again.
  local client = vim.lsp.get_client_by_id(server.id)
  if client and client.initialized and not server.ready then
    server.ready = true
  end
  servers[root] = server
  return server
end

--- The server for `root`, started when there is none yet. Returns it, or nil
--- and why not.
function M.ensure(root)
  local server = servers[root]
  if server and vim.lsp.get_client_by_id(server.id) then
    return server
  end
  servers[root] = nil
  return start(root)
end

--- The running server for `root`, or nil (never starts one).
function M.get(root)
  return servers[root]
end

--- Sends a request to the server of `root` (starting it if needed) and calls
--- callback(err, result) on the main loop; `err` is the server's error
--- object ({code, message, data}) or one made here.
function M.request(root, method, params, callback)
  local unknown = protocol.unknown_param(method, params)
  if unknown then
    callback({ message = string.format("%s takes no parameter '%s' (protocol/params.json)", method, tostring(unknown)) }, nil)
    return
  end
  local server, why = M.ensure(root)
  if not server then
    callback({ message = why }, nil)
    return
  end
  if not server.ready then
    table.insert(server.queue, { method, params, callback })
    return
  end
  local client = vim.lsp.get_client_by_id(server.id)
  if not client then
    callback({ message = 'hydra serve is not running' }, nil)
    return
  end
  local bufnr = server.anchor and vim.api.nvim_buf_is_valid(server.anchor) and server.anchor or nil
  local sent = call(client, 'request', method, params or vim.empty_dict(), function(err, result)
    M.guarded(note_config, root, method, err)
    if err == nil then
      for _, fn in ipairs(answer_listeners[method] or {}) do
        M.guarded(fn, params, result, root)
      end
    end
    M.guarded(callback, err, result)
  end, bufnr)
  if not sent then
    callback({ message = 'hydra serve is not running' }, nil)
  end
end

--- The hydra capabilities the server of `root` announced, or nil.
function M.capabilities(root)
  local server = servers[root]
  return server and server.capabilities or nil
end

--- Stops the server of `root` (shutdown, then exit).
function M.stop(root)
  local server = servers[root]
  if not server then
    return
  end
  server.stopping = true
  local client = vim.lsp.get_client_by_id(server.id)
  if client then
    call(client, 'stop')
  end
end

--- The roots with a server running.
function M.roots()
  return vim.tbl_keys(servers)
end

--- The LSP client object of `root`'s server (for :checkhealth and the specs).
function M.lsp_client(root)
  local server = servers[root]
  return server and vim.lsp.get_client_by_id(server.id) or nil
end

-- A hydra.toml whose problem is shown is checked again when it is saved
-- (hydra/agents reads it), so that a fixed file loses its diagnostic and a
-- still broken one shows where it is broken now.
local config_group = vim.api.nvim_create_augroup('hydra-config', { clear = true })

-- Read again from disk (`:edit`): the problem hydra reported is still there
-- until hydra says otherwise.
vim.api.nvim_create_autocmd('BufReadPost', {
  group = config_group,
  pattern = 'hydra.toml',
  callback = function(args)
    local items = shown_problems[args.buf]
    if items then
      vim.diagnostic.set(M.config_namespace, args.buf, items)
    end
  end,
})

vim.api.nvim_create_autocmd('BufWritePost', {
  group = config_group,
  pattern = 'hydra.toml',
  callback = function(args)
    local root = M.find_root(vim.api.nvim_buf_get_name(args.buf))
    if root and servers[root] and M.config_problem_shown(root) then
      M.request(root, protocol.agents, vim.empty_dict(), function() end)
    end
  end,
})

return M
