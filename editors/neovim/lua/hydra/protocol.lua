-- Every method and notification name hydra speaks, declared once on this side.
-- Mirrors protocol/methods.h (and editors/vscode/src/protocol.ts); the shapes
-- of params and results are documented in docs/protocol.md.

local M = {}

-- LSP lifecycle and base protocol (the LSP client in Neovim speaks these itself;
-- listed so that the names the plugin handles come from one place).
M.initialize = 'initialize'
M.initialized = 'initialized'
M.shutdown = 'shutdown'
M.exit = 'exit'
M.cancel_request = '$/cancelRequest'
M.progress = '$/progress'
M.set_trace = '$/setTrace'
M.work_done_progress_create = 'window/workDoneProgress/create'
M.work_done_progress_cancel = 'window/workDoneProgress/cancel'
M.show_message = 'window/showMessage'
M.log_message = 'window/logMessage'
M.publish_diagnostics = 'textDocument/publishDiagnostics'

-- hydra's own requests.
M.ping = 'hydra/ping'
M.agents = 'hydra/agents'
M.race = 'hydra/race'
M.collab = 'hydra/collab'
M.status = 'hydra/status'
M.cancel = 'hydra/cancel'
M.scores = 'hydra/scores'
M.diff = 'hydra/diff'
M.merge = 'hydra/merge'
M.log = 'hydra/log'
M.races = 'hydra/races'
M.cleanup = 'hydra/cleanup'
M.agent_events = 'hydra/agentEvents'
M.eval_run = 'hydra/evalRun'
M.eval_report = 'hydra/evalReport'
M.eval_cancel = 'hydra/evalCancel'

-- The params members each hydra request takes, as protocol/params.json lists
-- them (which the server's tests hold to its structs, and spec/protocol_spec
-- holds this table to). client.request refuses to send any other member, so
-- that a misspelt one fails where it is written instead of being ignored or
-- refused by the server.
M.params = {
  [M.ping] = { 'data', 'delayMs', 'workDoneToken' },
  [M.agents] = {},
  [M.race] = { 'task', 'agents', 'base', 'executor', 'workDoneToken' },
  [M.collab] = { 'task', 'builder', 'reviewer', 'maxIterations', 'untilScore', 'base', 'executor', 'workDoneToken' },
  [M.status] = { 'raceId' },
  [M.cancel] = { 'raceId', 'agentId' },
  [M.scores] = { 'raceId' },
  [M.diff] = { 'raceId', 'agentId', 'path' },
  [M.merge] = { 'raceId', 'agentId', 'dryRun', 'keep', 'force' },
  [M.log] = { 'raceId', 'agentId', 'offset', 'limit', 'stream' },
  [M.races] = { 'offset', 'limit' },
  [M.cleanup] = { 'raceId', 'keepBranches', 'pool' },
  [M.agent_events] = { 'raceId', 'agentId', 'offset', 'limit' },
  [M.eval_run] = { 'set', 'agents', 'samples', 'passK', 'out', 'resume', 'executor', 'workDoneToken' },
  [M.eval_report] = { 'report', 'evalId', 'format' },
  [M.eval_cancel] = { 'evalId' },
}

--- The first member of `params` that `method` does not take, or nil. Names
--- outside hydra's own requests (the LSP's) are not checked here.
function M.unknown_param(method, params)
  local takes = M.params[method]
  if not takes or type(params) ~= 'table' then
    return nil
  end
  for key in pairs(params) do
    if not vim.tbl_contains(takes, key) then
      return key
    end
  end
  return nil
end

-- hydra's notifications while a race runs.
M.agent_started = 'hydra/agentStarted'
M.agent_output = 'hydra/agentOutput'
M.agent_finished = 'hydra/agentFinished'
M.scoring_started = 'hydra/scoringStarted'
M.race_finished = 'hydra/raceFinished'
-- and while a collaboration runs (besides the ones above).
M.iteration_finished = 'hydra/iterationFinished'
-- and while an evaluation runs (its samples' races are not announced).
M.eval_sample = 'hydra/evalSample'
M.eval_finished = 'hydra/evalFinished'

-- Error codes (docs/protocol.md, "Error codes"): JSON-RPC's and LSP's that
-- the plugin tells apart, then hydra's own.
M.errors = {
  method_not_found = -32601,
  invalid_params = -32602,
  request_cancelled = -32800,
  unknown_race = -32010,
  unknown_agent = -32011,
  unknown_agent_name = -32012,
  path_outside_changes = -32013,
  dirty_working_tree = -32014,
  merge_refused = -32015,
  not_scored = -32016,
  no_result = -32017,
  race_running = -32018,
  config_error = -32019,
  not_a_repository = -32020,
  race_refused = -32021,
  agent_unavailable = -32022,
  eval_set_error = -32023,
}

-- A race's and an agent's states that will not change any more.
M.finished_race_states = { completed = true, cancelled = true, interrupted = true, failed = true }
M.finished_agent_states = {
  completed = true,
  failed = true,
  timedOut = true,
  cancelled = true,
  interrupted = true,
  setupFailed = true, -- hydra.toml's setup_command failed: the agent never ran
  notNeeded = true, -- a finished collaboration's reviewer the loop never needed
}

return M
