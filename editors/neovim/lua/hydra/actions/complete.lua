-- What <Tab> offers on the command lines of the commands.

local client = require('hydra.client')
local collab = require('hydra.collab')
local config = require('hydra.config')
local eval = require('hydra.eval')
local race = require('hydra.race')

local M = {}

--- Completion for :HydraRace: the default agents and, once the server runs,
--- every agent name it accepts (hydra.toml's and the built-in adapters').
function M.agents(arglead, cmdline)
  if cmdline:find('%s%-%-%s') then
    return {}
  end
  local names = vim.deepcopy(config.options.agents)
  local root = client.find_root()
  local caps = root and client.capabilities(root)
  if caps and type(caps.agents) == 'table' then
    vim.list_extend(names, caps.agents)
  end
  local seen, out = {}, {}
  for _, n in ipairs(names) do
    if not seen[n] and vim.startswith(n, arglead) then
      seen[n] = true
      table.insert(out, n)
    end
  end
  return out
end

--- Completion for :HydraLog: the races and agents known here, and `raw`.
function M.log(arglead)
  local out = M.race_agents(arglead, true)
  local root = client.find_root()
  for id, r in pairs(race.races) do
    if r.root == root and vim.startswith(id, arglead) then
      table.insert(out, id)
    end
  end
  if vim.startswith('raw', arglead) then
    table.insert(out, 'raw')
  end
  return out
end

--- Completion for the commands that take one agent of the current race:
--- of a collaboration, its iterations too ("builder@2"), unless
--- `agents_only`.
function M.race_agents(arglead, agents_only)
  local root = client.find_root()
  local out = {}
  for _, r in pairs(race.races) do
    if r.root == root then
      local iterations = (race.is_collab(r) and not agents_only) and collab.iteration_ids(r) or {}
      local ids = vim.list_extend(vim.deepcopy(r.order), iterations)
      for _, id in ipairs(ids) do
        if vim.startswith(id, arglead) and not vim.tbl_contains(out, id) then
          table.insert(out, id)
        end
      end
    end
  end
  table.sort(out)
  return out
end

--- Completion for :HydraEvalCancel: the evaluations started here, newest first.
function M.evals(arglead)
  local root = client.find_root()
  return vim.tbl_filter(function(id)
    return vim.startswith(id, arglead)
  end, root and eval.ids(root) or {})
end

--- Completion for :HydraIterations: the collaborations known here.
function M.collabs(arglead)
  local root = client.find_root()
  local out = {}
  for id, r in pairs(race.races) do
    if r.root == root and race.is_collab(r) and vim.startswith(id, arglead) then
      table.insert(out, id)
    end
  end
  table.sort(out)
  return out
end

return M
