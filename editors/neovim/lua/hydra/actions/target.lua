-- What a command acts on: the repository, the race (the one named, else
-- the current one) and the agent (the one named, else the one of the
-- current buffer, else the winner, else the only one, else the one picked).

local client = require('hydra.client')
local collab = require('hydra.collab')
local protocol = require('hydra.protocol')
local race = require('hydra.race')
local util = require('hydra.util')

local M = {}

local present = util.present

--- The repository of the current buffer; nil, and the user told why,
--- outside one.
function M.repository_root()
  local root = client.find_root()
  if not root then
    vim.notify('hydra: not inside a git repository (hydra races agents on a repository)', vim.log.levels.ERROR)
  end
  return root
end

--- Calls fn(root, race) with the race a command acts on: `target.race` when
--- given, else the current one (race.current).
function M.with_race(target, fn)
  local root = target.root or M.repository_root()
  if not root then
    return
  end
  local got = function(err, r)
    if err then
      client.notify_error(err)
    else
      race.set_latest(root, r.id)
      fn(root, r)
    end
  end
  if target.race then
    race.lookup(root, target.race, got)
  else
    race.current(root, got)
  end
end

local function buffer_agent(r)
  local ok_race, buf_race = pcall(vim.api.nvim_buf_get_var, 0, 'hydra_race')
  local ok_agent, buf_agent = pcall(vim.api.nvim_buf_get_var, 0, 'hydra_agent')
  if ok_race and ok_agent and buf_race == r.id then
    return buf_agent
  end
  return nil
end

-- Calls fn(agentId) with the agent a review command is about: the one named,
-- else the one whose output buffer is current, else the winner, else the
-- only agent, else the one the user picks. In a collaboration the agents to
-- pick from are its iterations ("builder@2").
function M.with_agent(root, r, explicit, fn)
  if explicit then
    return fn(explicit)
  end
  local agent = buffer_agent(r)
  if agent then
    return fn(agent)
  end
  local function pick()
    if r.winner then
      return fn(r.winner)
    end
    local is_collab = race.is_collab(r)
    local choices = is_collab and collab.iteration_ids(r) or r.order
    if #choices == 1 then
      return fn(choices[1])
    end
    if #choices == 0 then
      if is_collab then
        return vim.notify('hydra: collaboration ' .. r.id .. ' has no iteration yet', vim.log.levels.ERROR)
      end
      return vim.notify('hydra: race ' .. r.id .. ' has no agents', vim.log.levels.ERROR)
    end
    local prompt = is_collab and ('Iteration of collaboration ' .. r.id .. ':') or ('Agent of race ' .. r.id .. ':')
    vim.ui.select(choices, { prompt = prompt }, function(choice)
      if choice then
        fn(choice)
      end
    end)
  end
  if r.winner or r.state ~= 'completed' or r.scores_asked then
    return pick()
  end
  -- A race this editor did not see finish: its winner is in its scores.
  r.scores_asked = true
  client.request(root, protocol.scores, { raceId = r.id }, function(err, result)
    if not err and present(result.winner) then
      r.winner = result.winner
    end
    pick()
  end)
end

return M
