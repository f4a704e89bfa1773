-- Commands about races: :HydraRace (its arguments, the agents it checks
-- or asks for), :HydraStatus and :HydraCancel.

local client = require('hydra.client')
local collab = require('hydra.collab')
local config = require('hydra.config')
local protocol = require('hydra.protocol')
local race = require('hydra.race')
local review = require('hydra.actions.review')
local targets = require('hydra.actions.target')
local ui = require('hydra.ui')

local M = {}

--- Splits :HydraRace's arguments, "claude codex -- fix the flaky test", into
--- agent names and a task (nil when there is no task after "--").
function M.parse_race_args(args)
  local padded = ' ' .. (args or '') .. ' '
  local s, e = padded:find('%s%-%-%s')
  local names, task = padded, nil
  if s then
    names = padded:sub(1, s)
    task = vim.trim(padded:sub(e + 1))
    if task == '' then
      task = nil
    end
  end
  return vim.split(vim.trim(names), '%s+', { trimempty = true }), task
end

-- Asks the user for the agents in one step: the list of hydra/agents to
-- pick from (hydra.picker). Calls fn(names) once they confirmed.
local function pick_agents(root, fn)
  client.request(root, protocol.agents, vim.empty_dict(), function(err, result)
    if err then
      return client.notify_error(err, 'could not list the agents')
    end
    require('hydra.picker').open(root, result.agents or {}, fn)
  end)
end

-- Calls fn(names) when hydra can race every agent named; otherwise says
-- which it cannot and why (race.unknown_agent_text, race.unavailable_text),
-- and calls failed(err). `what` is what did not start (default: the race).
function M.check_agents(root, names, fn, failed, what)
  what = what or 'the race'
  client.request(root, protocol.agents, vim.empty_dict(), function(err, result)
    if err then
      client.notify_error(err, what .. ' did not start')
      return failed(err)
    end
    local by_name, known = {}, {}
    for _, a in ipairs(result.agents or {}) do
      by_name[a.name] = a
      table.insert(known, a.name)
    end
    local problems, seen = {}, {}
    for _, name in ipairs(names) do
      local agent = by_name[name]
      if not seen[name] then
        seen[name] = true
        if not agent then
          table.insert(problems, race.unknown_agent_text(name, race.closest_name(name, known)))
        elseif not agent.available then
          table.insert(problems, race.unavailable_text(name, agent.problem))
        end
      end
    end
    if #problems > 0 then
      local message = what .. ' did not start: ' .. table.concat(problems, '; ')
      vim.notify('hydra: ' .. message, vim.log.levels.ERROR)
      return failed({ message = message })
    end
    fn(names)
  end)
end

--- Starts a race. `opts.agents` (names) and `opts.task` are asked for when
--- missing (the agents only when setup() gave no default ones): the agents
--- first, then the task. Agents named without a task are checked before the
--- task is asked for; with one, hydra checks them as the race starts.
--- Either way, an unknown or unavailable agent starts nothing.
--- opts.callback(err, race) runs once hydra answered.
function M.race(opts)
  opts = opts or {}
  local root = opts.root or targets.repository_root()
  if not root then
    return
  end
  local has_task = opts.task ~= nil and vim.trim(opts.task) ~= ''
  local failed = function(err)
    if opts.callback then
      opts.callback(err, nil)
    end
  end
  local function with_agents(fn)
    local named = opts.agents and #opts.agents > 0 and opts.agents
      or (#config.options.agents > 0 and config.options.agents)
      or nil
    if not named then
      return pick_agents(root, fn)
    end
    if has_task then
      return fn(named)
    end
    M.check_agents(root, named, fn, failed)
  end
  local function with_task(fn)
    if has_task then
      return fn(opts.task)
    end
    vim.ui.input({ prompt = 'Task for the agents: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        fn(input)
      end
    end)
  end
  with_agents(function(agents)
    with_task(function(task)
      race.start(root, task, agents, opts.callback)
    end)
  end)
end

--- :HydraRace [agent ...] [-- task]
function M.race_command(args)
  local agents, task = M.parse_race_args(args)
  M.race({ agents = agents, task = task })
end

--- :HydraStatus: every race of the repository in a floating window.
function M.status(opts)
  opts = opts or {}
  local root = opts.root or targets.repository_root()
  if not root then
    return
  end
  client.request(root, protocol.status, vim.empty_dict(), function(err, result)
    if err then
      return client.notify_error(err)
    end
    local lines, highlights, race_at = ui.race_list(root, result.races or {})
    local buf = ui.open_float(
      'hydra://' .. root .. '/status',
      lines,
      highlights,
      'hydrastatus',
      'hydra: races of ' .. vim.fn.fnamemodify(root, ':t')
    )
    local function at_cursor(fn)
      return function()
        local id = race_at[vim.api.nvim_win_get_cursor(0)[1]]
        if id then
          ui.close_window()
          fn(id)
        end
      end
    end
    ui.map(buf, config.options.keymaps.scores, at_cursor(function(id)
      review.scores({ root = root, race = id })
    end), 'Scores of this race')
    ui.map(buf, '<CR>', at_cursor(function(id)
      race.lookup(root, id, function(lookup_err, r)
        if lookup_err then
          return client.notify_error(lookup_err)
        end
        race.set_latest(root, id)
        if not race.is_collab(r) then
          return race.show(r, 'tab')
        end
        -- A collaboration: its iterations above its agents' output, as hydra has them now.
        race.refresh(r, function()
          collab.show(r, 'tab')
        end)
      end)
    end), 'Output of this race (of a collaboration: its iterations too)')
    if opts.callback then
      opts.callback(buf, result)
    end
  end)
end

--- :HydraCancel [agent]: cancels the current race, or one of its agents.
function M.cancel(target)
  target = target or {}
  targets.with_race(target, function(root, r)
    local params = { raceId = r.id, agentId = target.agent }
    client.request(root, protocol.cancel, params, function(err, result)
      if err then
        return client.notify_error(err)
      end
      local kind = race.is_collab(r) and 'collaboration ' or 'race '
      local what = target.agent and (target.agent .. ' of ' .. kind .. r.id) or (kind .. r.id)
      if result.cancelled then
        vim.notify('hydra: cancelled ' .. what, vim.log.levels.INFO)
      else
        vim.notify('hydra: nothing to cancel: ' .. what .. ' had already finished', vim.log.levels.INFO)
      end
      if target.callback then
        target.callback(result)
      end
    end)
  end)
end

return M
