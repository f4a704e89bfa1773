-- Build and lint findings (the `findings` of hydra/scores' build and lint
-- check records) as diagnostics on each agent's version of the file: the
-- file's buffer in the agent's worktree, loaded now or later, and the
-- agent's side of :HydraDiff. :HydraFindings puts them in the quickfix list.
-- A finding whose path leads outside the agent's worktree is left out. They
-- go when the race is merged or its worktrees are cleaned up.

local client = require('hydra.client')
local protocol = require('hydra.protocol')
local util = require('hydra.util')

local M = {}

M.namespace = vim.api.nvim_create_namespace('hydra-findings')

-- The checks whose output hydra reads findings from, in the order listed.
local check_kinds = { 'build', 'lint' }

-- raceId -> agentId -> { worktree (symbolic links resolved),
--   by_path = { [path] = {diagnostic} }, items = {finding} }
-- finding: { path, line, column (1-based, or nil), severity ('error' or
-- 'warning'), message, kind ('build' or 'lint') }
local known = {}
-- The buffers showing findings now.
local shown = {}

local present = util.present

local function resolved(path)
  return vim.fn.resolve(vim.fn.simplify(path))
end

-- Where `path` (a finding's, relative to `worktree` or absolute) lies
-- inside `worktree` (resolved), relative to it; nil when it leads outside.
local function inside(worktree, path)
  if type(path) ~= 'string' or path == '' then
    return nil
  end
  local full = path:sub(1, 1) == '/' and path or (worktree .. '/' .. path)
  full = resolved(full)
  if not vim.startswith(full, worktree .. '/') then
    return nil
  end
  return full:sub(#worktree + 2)
end

-- The diagnostic source of an agent's check: "hydra: tidier build".
local function source(agent_id, kind)
  return 'hydra: ' .. agent_id .. ' ' .. kind
end

local function diagnostic(agent_id, finding)
  return {
    lnum = finding.line - 1,
    col = math.max((finding.column or 1) - 1, 0),
    severity = finding.severity == 'error' and vim.diagnostic.severity.ERROR or vim.diagnostic.severity.WARN,
    message = finding.message,
    source = source(agent_id, finding.kind),
  }
end

-- The findings of one agent's ranking that lie in `worktree`.
local function findings_of(agent_id, ranking, worktree)
  local entry = { worktree = worktree, by_path = {}, items = {} }
  local checks = type(ranking.checks) == 'table' and ranking.checks or {}
  for _, kind in ipairs(check_kinds) do
    local check = checks[kind]
    local list = type(check) == 'table' and check.findings or nil
    for _, f in ipairs(type(list) == 'table' and list or {}) do
      local path = type(f) == 'table' and type(f.line) == 'number' and inside(worktree, f.path) or nil
      if path then
        local finding = {
          path = path,
          line = math.max(f.line, 1),
          column = type(f.column) == 'number' and f.column or nil,
          severity = f.severity == 'error' and 'error' or 'warning',
          message = present(f.message) and tostring(f.message) or '',
          kind = kind,
        }
        table.insert(entry.items, finding)
        entry.by_path[path] = entry.by_path[path] or {}
        table.insert(entry.by_path[path], diagnostic(agent_id, finding))
      end
    end
  end
  return #entry.items > 0 and entry or nil
end

-- The race, agent and path whose version buffer `buf` holds: a version
-- :HydraDiff shows (its `hydra_version`), or a file in a worktree.
local function subject_of(buf)
  local ok, version = pcall(vim.api.nvim_buf_get_var, buf, 'hydra_version')
  if ok and type(version) == 'table' then
    return version.race, version.agent, version.path
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' or vim.bo[buf].buftype ~= '' then
    return nil
  end
  local full = resolved(vim.fn.fnamemodify(name, ':p'))
  for race_id, agents in pairs(known) do
    for agent_id, entry in pairs(agents) do
      if vim.startswith(full, entry.worktree .. '/') then
        return race_id, agent_id, full:sub(#entry.worktree + 2)
      end
    end
  end
  return nil
end

--- Puts on `buf` the findings about the version of the file it holds, or
--- takes away those it showed that no longer hold.
function M.apply(buf)
  if not vim.api.nvim_buf_is_valid(buf) then
    shown[buf] = nil
    return
  end
  local race_id, agent_id, path = subject_of(buf)
  local entry = race_id and known[race_id] and known[race_id][agent_id]
  local diagnostics = entry and entry.by_path[path]
  if diagnostics then
    vim.diagnostic.set(M.namespace, buf, vim.deepcopy(diagnostics))
    shown[buf] = true
  elseif shown[buf] then
    vim.diagnostic.reset(M.namespace, buf)
    shown[buf] = nil
  end
end

local function apply_everywhere()
  for buf in pairs(shown) do
    M.apply(buf)
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and not shown[buf] then
      M.apply(buf)
    end
  end
end

--- Records the findings of race record `race` (race.lua's, with its
--- rankings) and shows them. A merged race, and an agent whose worktree is
--- gone (cleaned up), has none.
function M.set(race)
  local agents = {}
  if not race.merged then
    for _, ranking in ipairs(race.rankings or {}) do
      local agent = race.agents[ranking.agentId]
      local worktree = agent and present(agent.worktree) and agent.worktree or nil
      if worktree and vim.fn.isdirectory(worktree) == 1 then
        agents[ranking.agentId] = findings_of(ranking.agentId, ranking, resolved(worktree))
      end
    end
  end
  known[race.id] = next(agents) and agents or nil
  apply_everywhere()
end

--- Forgets the findings of a race (merged) and takes them off every buffer.
function M.clear(race_id)
  if known[race_id] then
    known[race_id] = nil
    apply_everywhere()
  end
end

--- Forgets the findings of agents whose worktree is among `paths` (removed).
function M.forget_worktrees(paths)
  local removed = {}
  for _, p in ipairs(paths) do
    removed[resolved(p)] = true
  end
  local changed = false
  for race_id, agents in pairs(known) do
    for agent_id, entry in pairs(agents) do
      if removed[entry.worktree] then
        agents[agent_id], changed = nil, true
      end
    end
    if next(agents) == nil then
      known[race_id] = nil
    end
  end
  if changed then
    apply_everywhere()
  end
end

--- The quickfix items of race `race_id`'s findings, of the agents `agents`
--- in that order: one per finding, in the agent's worktree.
function M.quickfix_items(race_id, agents)
  local items = {}
  for _, agent_id in ipairs(agents) do
    local entry = known[race_id] and known[race_id][agent_id]
    for _, f in ipairs(entry and entry.items or {}) do
      table.insert(items, {
        filename = entry.worktree .. '/' .. f.path,
        lnum = f.line,
        col = f.column or 0,
        type = f.severity == 'error' and 'E' or 'W',
        text = agent_id .. ' ' .. f.kind .. ': ' .. f.message,
      })
    end
  end
  return items
end

-- A file opened (or read again, which drops its diagnostics on Neovim 0.7)
-- in a worktree gets its findings.
vim.api.nvim_create_autocmd('BufReadPost', {
  group = vim.api.nvim_create_augroup('hydra-findings', { clear = true }),
  callback = function(args)
    if next(known) then
      client.guarded(M.apply, args.buf)
    end
  end,
})

-- Worktrees hydra/cleanup removed, whoever asked through this client.
client.on_answer(protocol.cleanup, function(_, result)
  if type(result) == 'table' and type(result.removed) == 'table' then
    M.forget_worktrees(result.removed)
  end
end)

return M
