-- hydra for Neovim: race coding agents on the current repository, watch them,
-- read the scoreboard, review each agent's diff and merge the one you want.
-- Everything that decides anything happens in `hydra serve`; this plugin asks
-- and shows (docs/protocol.md describes every request used here).
--
-- This module is what plugin/hydra.lua and your config call: setup() and
-- one function a command. The commands themselves live in
-- lua/hydra/actions/, one module an area; here they are wired together.

local collab_actions = require('hydra.actions.collab')
local commands = require('hydra.commands')
local complete = require('hydra.actions.complete')
local config = require('hydra.config')
local eval_actions = require('hydra.actions.eval')
local merge = require('hydra.actions.merge')
local race_actions = require('hydra.actions.race')
local review = require('hydra.actions.review')
local scoreboard = require('hydra.scoreboard')
local ui = require('hydra.ui')

local M = {}

ui.define_highlights()
local group = vim.api.nvim_create_augroup('hydra', { clear = true })
-- A colour scheme clears every group first; put the defaults back after it.
vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = ui.define_highlights })
-- The score colours of Neovim before 0.10 depend on 'background'.
vim.api.nvim_create_autocmd('OptionSet', { group = group, pattern = 'background', callback = ui.define_highlights })

--- Configures the plugin; see :help hydra-setup. Returns true when every
--- option was valid (problems are reported through vim.notify).
function M.setup(options)
  return config.setup(options)
end

-- What the keys of the output buffers, the collaboration view and the
-- scoreboard run, and what a race started here ends with (hydra.commands).
commands.diff = review.diff
commands.merge = merge.merge
commands.log = review.log
commands.cancel = race_actions.cancel
commands.scores = review.scores
commands.show_scores = scoreboard.show

-- Races: :HydraRace, :HydraStatus, :HydraCancel.
M.parse_race_args = race_actions.parse_race_args
M.race = race_actions.race
M.race_command = race_actions.race_command
M.status = race_actions.status
M.cancel = race_actions.cancel

-- Collaborations: :HydraCollab, :HydraIterations.
M.parse_collab_args = collab_actions.parse_collab_args
M.collab = collab_actions.collab
M.collab_command = collab_actions.collab_command
M.iterations = collab_actions.iterations

-- Evaluations: :HydraEval, :HydraEvalCancel, :HydraEvalReport.
M.parse_eval_args = eval_actions.parse_eval_args
M.eval = eval_actions.eval
M.eval_command = eval_actions.eval_command
M.eval_cancel = eval_actions.eval_cancel
M.eval_report = eval_actions.eval_report

-- Results: :HydraScores (and the scoreboard's views), :HydraDiff,
-- :HydraFindings, :HydraLog.
M.scores = review.scores
M.show_scores = scoreboard.show
M.show_details = scoreboard.show_details
M.diff = review.diff
M.diff_command = review.diff_command
M.findings = review.findings
M.log = review.log
M.log_key = review.log_key
M.log_checks_heading = review.log_checks_heading
M.parse_log_args = review.parse_log_args
M.log_command = review.log_command

-- :HydraMerge.
M.merge = merge.merge

-- Completion of the commands' arguments.
M.complete_agents = complete.agents
M.complete_log = complete.log
M.complete_race_agents = complete.race_agents
M.complete_evals = complete.evals
M.complete_collabs = complete.collabs

return M
