-- :checkhealth hydra: is the binary there, which version, is this a git
-- repository, can hydra run eval sets, do agents run confined here, and
-- which agents could race here.

local util = require('hydra.util')

local M = {}

-- Neovim 0.10 has vim.health.start/ok/...; 0.7 has require('health').report_*.
local function reporter()
  local h = vim.health
  if h and h.start then
    return h
  end
  h = h or require('health')
  return {
    start = h.report_start,
    ok = h.report_ok,
    info = h.report_info,
    warn = h.report_warn,
    error = h.report_error,
  }
end

local present = util.present

function M.check()
  local health = reporter()
  local config = require('hydra.config')
  local client = require('hydra.client')
  local cmd = config.options.server.cmd

  health.start('hydra binary')
  local binary = vim.fn.exepath(cmd[1])
  if binary == '' then
    health.error(
      string.format("'%s' not found", cmd[1]),
      { "build hydra (scripts/build.sh hydra) and put it on PATH, or set server.cmd in require('hydra').setup()" }
    )
    return
  end
  health.ok('found ' .. binary)
  local version = vim.fn.systemlist({ binary, '--version' })
  if vim.v.shell_error == 0 and version[1] then
    health.ok('version: ' .. version[1])
  else
    health.error(binary .. ' --version failed: ' .. table.concat(version, ' '))
  end

  health.start('repository')
  local root = client.find_root()
  if not root then
    health.warn('the current directory is not inside a git repository', { 'hydra races agents on a git repository' })
    return
  end
  health.ok('git repository: ' .. root)
  if vim.fn.filereadable(root .. '/hydra.toml') == 1 then
    health.ok('hydra.toml found')
  else
    health.info('no hydra.toml: built-in agents only, no scoring commands (`hydra init` writes one)')
  end
  local running = client.get(root)
  health.info(running and 'hydra serve is running for this repository' or 'hydra serve starts with the first :Hydra command')

  health.start('evaluations')
  -- A running server says which requests it answers; else the binary is asked.
  local caps = running and client.capabilities(root) or nil
  if caps and type(caps.methods) == 'table' then
    if vim.tbl_contains(caps.methods, 'hydra/evalRun') then
      health.ok('hydra serve runs eval sets (:HydraEval)')
    else
      health.warn('this hydra serve has no evaluation mode (hydra/evalRun)', { ':HydraEval needs a newer hydra' })
    end
  else
    vim.fn.system({ binary, 'eval', '--help' })
    if vim.v.shell_error == 0 then
      health.ok('hydra runs eval sets (`hydra eval`, :HydraEval)')
    else
      health.warn('this hydra has no evaluation mode (`hydra eval`)', { ':HydraEval needs a newer hydra' })
    end
  end
  local reports = vim.fn.glob(root .. '/.hydra/evals/*.json', false, true)
  if #reports > 0 then
    health.info(util.plural(#reports, 'eval report') .. ' under .hydra/evals (:HydraEvalReport shows the newest)')
  end

  health.start('sandbox')
  -- `hydra sandbox` runs the same probe a race would (docs/security.md).
  local sandbox_out = vim.fn.system({ 'sh', '-c', 'cd "$1" && exec "$2" sandbox --json', 'sh', root, binary }, '')
  local sandbox_ok, sandbox = pcall(vim.fn.json_decode, sandbox_out)
  if vim.v.shell_error ~= 0 or not sandbox_ok or type(sandbox) ~= 'table' then
    health.error('`hydra sandbox --json` failed: ' .. vim.trim(sandbox_out))
  elseif sandbox.confined then
    health.ok('agents run ' .. sandbox.summary)
  elseif sandbox.refused then
    health.error(sandbox.summary, { 'install bubblewrap (apt install bubblewrap), or set [general] sandbox = "auto" in hydra.toml' })
  elseif sandbox.mode == 'off' then
    health.info('agents run ' .. sandbox.summary .. ': they can write anywhere you can')
  else
    health.warn('agents run ' .. sandbox.summary, {
      'agents can write anywhere you can: install bubblewrap (apt install bubblewrap) to confine them',
      'docs/security.md says what confinement covers',
    })
  end

  health.start('agents')
  -- `hydra agents` reads the hydra.toml of the repository it runs in.
  local out = vim.fn.system({ 'sh', '-c', 'cd "$1" && exec "$2" agents --json', 'sh', root, binary }, '')
  local ok, agents = pcall(vim.fn.json_decode, out)
  if vim.v.shell_error ~= 0 or not ok or type(agents) ~= 'table' then
    health.error('`hydra agents --json` failed: ' .. vim.trim(out))
    return
  end
  local available = 0
  local off_path = false
  for _, a in ipairs(agents) do
    if not a.available and present(a.problem) and vim.endswith(a.problem, 'not found on PATH') then
      off_path = true
    end
    if a.available then
      available = available + 1
      health.ok(a.name .. ' (' .. a.adapter .. '): ' .. (present(a.path) and a.path or a.binary) .. (present(a.version) and ('  ' .. a.version) or ''))
    else
      health.info(a.name .. ' (' .. a.adapter .. '): not available' .. (present(a.problem) and (': ' .. a.problem) or ''))
    end
  end
  -- The PATH once, not once per agent missing from it.
  if off_path then
    health.info('PATH searched: ' .. (vim.env.PATH or ''))
  end
  if available == 0 then
    health.warn('no agent can race here', { 'install an agent CLI, or add a command agent to hydra.toml' })
  end
end

return M
