-- Commands about collaborations: :HydraCollab (its arguments, the agents
-- it checks) and :HydraIterations.

local client = require('hydra.client')
local collab = require('hydra.collab')
local protocol = require('hydra.protocol')
local race = require('hydra.race')
local race_actions = require('hydra.actions.race')
local targets = require('hydra.actions.target')

local M = {}

--- Splits :HydraCollab's arguments, "bob rita -- add the cart", into
--- { builder?, reviewer?, task? }; nil and why when it names more than two
--- agents.
function M.parse_collab_args(args)
  local names, task = race_actions.parse_race_args(args)
  if #names > 2 then
    return nil, ':HydraCollab takes a builder and a reviewer (or neither, for [collaboration]\'s), then -- and the task'
  end
  return { builder = names[1], reviewer = names[2], task = task }
end

--- Starts a collaboration: `opts.builder` builds, `opts.reviewer` reviews
--- (either may be left to hydra.toml's [collaboration]), on `opts.task`,
--- asked for when missing; `opts.maxIterations`, `opts.untilScore` and
--- `opts.base` go to hydra as they are. Agents named without a task are
--- checked before the task is asked for. opts.callback(err, race) runs once
--- hydra answered.
function M.collab(opts)
  opts = opts or {}
  local root = opts.root or targets.repository_root()
  if not root then
    return
  end
  local failed = function(err)
    if opts.callback then
      opts.callback(err, nil)
    end
  end
  local names = vim.tbl_filter(function(n)
    return n ~= nil
  end, { opts.builder, opts.reviewer })
  local function start(task)
    local params = {
      task = task,
      builder = opts.builder,
      reviewer = opts.reviewer,
      maxIterations = opts.maxIterations,
      untilScore = opts.untilScore,
      base = opts.base,
    }
    collab.start(root, params, opts.callback)
  end
  if opts.task ~= nil and vim.trim(opts.task) ~= '' then
    return start(opts.task)
  end
  local function ask()
    vim.ui.input({ prompt = 'Task for the collaboration: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        start(input)
      end
    end)
  end
  if #names == 0 then
    return ask()
  end
  race_actions.check_agents(root, names, ask, failed, 'the collaboration')
end

--- :HydraCollab [builder [reviewer]] [-- task]
function M.collab_command(args)
  local opts, why = M.parse_collab_args(args)
  if not opts then
    return vim.notify('hydra: ' .. why, vim.log.levels.ERROR)
  end
  M.collab(opts)
end

--- :HydraIterations [race]: the view of a collaboration's iterations (the
--- current race's by default), as hydra has it now.
function M.iterations(target)
  target = target or {}
  targets.with_race(target, function(_, r)
    if not race.is_collab(r) then
      return vim.notify('hydra: race ' .. r.id .. ' is a race, not a collaboration (:HydraScores shows its results)', vim.log.levels.ERROR)
    end
    local function open()
      local buf = collab.open(r)
      if target.callback then
        target.callback(buf)
      end
    end
    -- One that runs here is drawn live; any other is read again.
    if r.started_here and not protocol.finished_race_states[r.state] then
      return open()
    end
    race.refresh(r, function(err)
      if err then
        return client.notify_error(err)
      end
      open()
    end)
  end)
end

return M
