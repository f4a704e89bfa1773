-- The scoreboard of a race, and the details of one of its agents, in
-- floating windows. Their keys run the commands that init.lua puts in
-- hydra.commands (this module is required by them, so it cannot require
-- them back).

local client = require('hydra.client')
local commands = require('hydra.commands')
local config = require('hydra.config')
local protocol = require('hydra.protocol')
local race = require('hydra.race')
local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

local present = util.present

-- `m` on the scoreboard or an agent's details: merges the agent unless the
-- scores say it cannot be (it cannot win, or the race was merged already),
-- then shows the scoreboard again.
local function merge_from_scores(r, model, target)
  if present(model.merged) then
    return vim.notify(ui.merged_already_text(r.id, model.merged), vim.log.levels.WARN)
  end
  -- An agent that cannot win is never offered for merging.
  local cannot_win = ui.ineligible_label(race.ranking_of({ rankings = model.rankings }, target.agent))
  if cannot_win then
    return vim.notify('hydra: ' .. target.agent .. ' cannot be merged (' .. cannot_win .. ')', vim.log.levels.WARN)
  end
  commands.merge(vim.tbl_extend('force', target, { scores = true }))
end

--- Opens the scoreboard of race record `r` from `model` (race.score_model).
function M.show(r, model)
  local lines, highlights, agent_at = ui.scoreboard(model)
  local buf, win =
    ui.open_float('hydra://' .. r.id .. '/scores', lines, highlights, 'hydrascores', 'hydra: scores (race ' .. r.id .. ')')
  -- The winner's own line: the first of the lines that belong to it (its
  -- notes follow it, and pairs() visits them in no order).
  local winner_line
  for line, agent in pairs(agent_at) do
    if agent == (model.rankings[1] and model.rankings[1].agentId) and (not winner_line or line < winner_line) then
      winner_line = line
    end
  end
  if winner_line then
    vim.api.nvim_win_set_cursor(win, { winner_line, 0 })
  end
  local keys = config.options.keymaps
  local function at_cursor(fn)
    return function()
      local agent = agent_at[vim.api.nvim_win_get_cursor(0)[1]]
      if not agent then
        return vim.notify("hydra: put the cursor on an agent's line", vim.log.levels.WARN)
      end
      ui.close_window()
      fn({ root = r.root, race = r.id, agent = agent })
    end
  end
  ui.map(buf, keys.diff, at_cursor(commands.diff), "Review this agent's diff")
  ui.map(buf, keys.merge, at_cursor(function(target)
    merge_from_scores(r, model, target)
  end), "Merge this agent's branch")
  ui.map(buf, keys.log, at_cursor(commands.log), "This agent's full log")
  ui.map(buf, '<CR>', at_cursor(function(target)
    M.show_details(r, model, target.agent)
  end), "This agent's details")
  return buf, win, agent_at
end

--- Opens the details of agent `agent_id` of race record `r`, from the
--- scoreboard's `model`: everything its line there shortens (ui.agent_details).
function M.show_details(r, model, agent_id)
  local lines, highlights = ui.agent_details(model, agent_id)
  local buf, win = ui.open_float(
    'hydra://' .. r.id .. '/' .. agent_id .. '~details',
    lines,
    highlights,
    'hydradetails',
    'hydra: ' .. agent_id .. ' details (race ' .. r.id .. ')'
  )
  local keys = config.options.keymaps
  local target = function()
    return { root = r.root, race = r.id, agent = agent_id }
  end
  local function act(fn)
    return function()
      ui.close_window()
      fn(target())
    end
  end
  ui.map(buf, keys.diff, act(commands.diff), "Review this agent's diff")
  ui.map(buf, keys.merge, act(function(t)
    merge_from_scores(r, model, t)
  end), "Merge this agent's branch")
  ui.map(buf, keys.log, act(commands.log), "This agent's full log")
  ui.map(buf, keys.scores, function()
    ui.close_window()
    M.show(r, model)
  end, 'Back to the scoreboard')
  return buf, win
end

-- Opens the scoreboard of race record `r` as hydra has it now: its scores,
-- and whether it was merged (hydra/status). callback(buf, win, scores).
function M.open(r, callback)
  race.refresh(r, function()
    client.request(r.root, protocol.scores, { raceId = r.id }, function(err, result)
      if err then
        return client.notify_error(err)
      end
      race.set_scores(r, result)
      local buf, win = M.show(r, race.score_model(r, result))
      if callback then
        callback(buf, win, result)
      end
    end)
  end)
end

return M
