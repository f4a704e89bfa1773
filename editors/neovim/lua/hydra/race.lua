-- The races this editor knows about, and one output buffer per agent that
-- fills live from hydra/agentOutput, or, for an agent this editor did not
-- watch (a race from before a restart, or from elsewhere), from what hydra
-- stored of it. Output is queued as it arrives and written to the buffers in
-- batches on a timer, so that an agent printing thousands of lines a second
-- costs the editor one buffer update per tick.

local client = require('hydra.client')
local commands = require('hydra.commands')
local config = require('hydra.config')
local findings = require('hydra.findings')
local protocol = require('hydra.protocol')
local transcript = require('hydra.transcript')
local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

-- raceId -> race: { id, root, task, state, agents = {agentId -> agent}, order = {agentId},
--                   rankings, winner, allFailed, autoMergeEligible, autoMergeEnabled,
--                   merged (RaceSummary.merged), started_here, kind ('race' or
--                   'collab'), and for a collaboration what hydra.collab keeps }
-- agent: { id, name, branch, worktree, state, exitCode, elapsedMs, error, warnings,
--          stderrTail, deniedToolCalls, buf, pending = {lines, groups},
--          live (a notification about it arrived) }
M.races = {}
-- root -> the raceId commands act on by default: the last one started or looked at.
local latest = {}

-- The lines at the top of an output buffer that say which agent it is and how it is doing.
local HEADER_LINES = 5
local output_ns = vim.api.nvim_create_namespace('hydra-output')

local present = util.present

-- fn(race, summary) for every RaceSummary read into a race record (adopt).
local adopt_listeners = {}

--- Registers fn(race, summary), called each time a RaceSummary (hydra/status,
--- hydra/collab's answer) is read into a race record.
function M.on_adopt(fn)
  table.insert(adopt_listeners, fn)
end

--- Whether race record `race` is a collaboration (hydra/collab).
function M.is_collab(race)
  return race ~= nil and race.kind == 'collab'
end

--- The key (ui.find_buffer) of an agent's output buffer.
function M.output_key(race_id, agent_id)
  return 'hydra://' .. race_id .. '/' .. agent_id
end

--- Its name: what :ls and the tab label show.
function M.output_title(race_id, agent_id)
  return string.format('hydra: %s (race %s)', agent_id, race_id)
end

local function ensure_race(root, race_id)
  local race = M.races[race_id]
  if not race then
    race = { id = race_id, root = root, state = 'running', agents = {}, order = {} }
    M.races[race_id] = race
  end
  return race
end

local function ensure_agent(race, agent_id, info)
  local agent = race.agents[agent_id]
  if not agent then
    agent = { id = agent_id, name = agent_id, state = 'queued', pending = { lines = {}, groups = {} } }
    race.agents[agent_id] = agent
    table.insert(race.order, agent_id)
  end
  if info then
    agent.name = info.agent or agent.name
    agent.branch = info.branch or agent.branch
    agent.worktree = info.worktree or agent.worktree
    agent.state = info.state or agent.state
    for _, field in ipairs({ 'exitCode', 'elapsedMs', 'error', 'warnings', 'stderrTail', 'deniedToolCalls' }) do
      if present(info[field]) then
        agent[field] = info[field]
      end
    end
  end
  return agent
end

--- The ranking of an agent in its race's scores, when they are known.
function M.ranking_of(race, agent_id)
  for _, r in ipairs(race.rankings or {}) do
    if r.agentId == agent_id then
      return r
    end
  end
  return nil
end

local function header(race, agent)
  local b = ui.builder()
  b:add('hydra · ', 'HydraHeader'):add(agent.id, 'HydraTitle'):add(' · ', 'HydraHeader')
  b:add(ui.plain_state(agent.state), 'HydraAgentState')
  local ranking = M.ranking_of(race, agent.id)
  local cannot_win = ui.ineligible_label(ranking)
  if cannot_win then
    b:add(' · ' .. cannot_win, 'HydraError')
  elseif ui.auto_merge_label(ranking) or (not ranking and ui.denied_text(agent.deniedToolCalls)) then
    -- It may win, but hydra would not merge it by itself (the scoreboard's
    -- details say why); before the race is scored, its denials will flag it.
    b:add(' · ⚠ not for auto-merge', 'HydraFlag')
  end
  if race.state ~= 'running' then
    b:add(' · ' .. (M.is_collab(race) and 'collaboration ' or 'race ') .. race.state, 'HydraHeader')
  end
  if race.allFailed == true then
    b:add(' · ' .. ui.all_failed, 'HydraError')
  end
  b:newline()
  b:line('task: ' .. util.first_line(race.task), 'HydraHeader')
  b:line('branch: ' .. (agent.branch or '?'), 'HydraHeader')
  b:line('worktree: ' .. (agent.worktree or '?'), 'HydraHeader')
  b:line(string.rep('─', 40), 'HydraHeader')
  return b.lines, b.highlights
end

local function update_header(race, agent)
  local buf = agent.buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local lines, highlights = header(race, agent)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, HEADER_LINES, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.api.nvim_buf_clear_namespace(buf, ui.ns, 0, HEADER_LINES)
  for _, h in ipairs(highlights) do
    vim.api.nvim_buf_add_highlight(buf, ui.ns, h[4], h[1], h[2], h[3])
  end
end

local function update_headers(race)
  for _, id in ipairs(race.order) do
    update_header(race, race.agents[id])
  end
end

local function set_keymaps(buf, race, agent)
  local keys = config.options.keymaps
  local target = { race = race.id, root = race.root, agent = agent.id }
  ui.map(buf, keys.close, ui.close_window, 'Close')
  ui.map(buf, keys.diff, function()
    commands.diff(target)
  end, 'Review this agent\'s diff')
  ui.map(buf, keys.merge, function()
    commands.merge(target)
  end, 'Merge this agent\'s branch')
  ui.map(buf, keys.log, function()
    commands.log(target)
  end, 'This agent\'s full log')
  ui.map(buf, keys.cancel, function()
    commands.cancel(target)
  end, 'Cancel this agent')
  ui.map(buf, keys.scores, function()
    commands.scores({ race = race.id, root = race.root })
  end, 'The scoreboard')
end

--- The output buffer of an agent, created on first use.
function M.output_buffer(race, agent)
  if agent.buf and vim.api.nvim_buf_is_valid(agent.buf) then
    return agent.buf
  end
  local key = M.output_key(race.id, agent.id)
  local buf = ui.find_buffer(key) or ui.scratch_buffer(M.output_title(race.id, agent.id), 'hydra', key)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_var(buf, 'hydra_race', race.id)
  vim.api.nvim_buf_set_var(buf, 'hydra_agent', agent.id)
  vim.api.nvim_buf_set_var(buf, 'hydra_root', race.root)
  agent.buf = buf
  -- The header replaces the empty first line a new buffer has.
  vim.bo[buf].modifiable = true
  local blank = {}
  for i = 1, HEADER_LINES do
    blank[i] = ''
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, blank)
  vim.bo[buf].modifiable = false
  update_header(race, agent)
  set_keymaps(buf, race, agent)
  if not race.started_here and not agent.live then
    M.load_recorded(race, agent)
  end
  return buf
end

-- Output waiting for the next batch: agents with pending lines.
local dirty = {}
local flush_timer = nil
local flush_scheduled = false

local function flush()
  flush_scheduled = false
  local follow = config.options.window.follow
  local agents = dirty
  dirty = {}
  for agent, race in pairs(agents) do
    local pending = agent.pending
    agent.pending = { lines = {}, groups = {} }
    local buf = M.output_buffer(race, agent)
    local count = vim.api.nvim_buf_line_count(buf)
    local followers = {}
    if follow then
      for _, win in ipairs(vim.fn.win_findbuf(buf)) do
        if vim.api.nvim_win_get_cursor(win)[1] >= count then
          table.insert(followers, win)
        end
      end
    end
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, count, count, false, pending.lines)
    vim.bo[buf].modifiable = false
    vim.bo[buf].modified = false
    for i, group in pairs(pending.groups) do
      vim.api.nvim_buf_add_highlight(buf, output_ns, group, count + i - 1, 0, -1)
    end
    local last = count + #pending.lines
    for _, win in ipairs(followers) do
      vim.api.nvim_win_set_cursor(win, { last, 0 })
    end
  end
end

--- Writes every queued line now (the timer does it otherwise).
function M.flush()
  flush()
end

local function schedule_flush()
  if flush_scheduled then
    return
  end
  flush_scheduled = true
  flush_timer = flush_timer or (vim.uv or vim.loop).new_timer()
  flush_timer:start(
    config.options.output.update_interval_ms,
    0,
    vim.schedule_wrap(function()
      client.guarded(flush)
    end)
  )
end

local function queue(race, agent, text, group)
  -- A buffer line cannot hold a newline: a multi-line message becomes several lines.
  for _, line in ipairs(vim.split(text, '\n', { plain = true })) do
    table.insert(agent.pending.lines, ui.visible(line))
    if group then
      agent.pending.groups[#agent.pending.lines] = group
    end
  end
  dirty[agent] = race
  schedule_flush()
end

-- Warnings an agent's summary showed in its buffer already: how it ended
-- does not repeat them.
local function note_warned(agent, warnings)
  agent.warned = agent.warned or {}
  for _, w in ipairs(type(warnings) == 'table' and warnings or {}) do
    agent.warned[w] = true
  end
end

--- Whether an output line is a JSON object (one record of a CLI's stream format).
function M.looks_like_json(line)
  return line:match('^%s*{') ~= nil and line:match('}%s*$') ~= nil
end

local function on_agent_started(p, root)
  local race = ensure_race(root, p.raceId)
  local agent = ensure_agent(race, p.agentId, p)
  agent.live = true
  agent.state = 'running'
  agent.stdout_tail = nil
  -- An agent of a collaboration runs once a round, into the same buffer:
  -- each run starts under a line that says which.
  if present(p.phase) and present(p.iteration) then
    local resumed = p.resumed == true and ' (resumed its session)' or ''
    queue(race, agent, string.format('── iteration %d: %s%s ──', p.iteration, p.phase, resumed), 'HydraHeader')
  end
  update_header(race, agent)
end

local function on_agent_output(p, root)
  local race = ensure_race(root, p.raceId)
  local agent = ensure_agent(race, p.agentId)
  agent.live = true
  local stderr = p.stream == 'stderr'
  local events = p.events or {}
  -- `lines` holds everything the agent printed, `events` what its adapter
  -- read from it. A JSON line (a CLI's stream format) is shown through its
  -- events; a line an event already repeats is shown once; any other line
  -- (the adapter could not read it) is shown as printed.
  local repeated = {}
  for _, event in ipairs(events) do
    if (event.kind == 'text' or event.kind == 'raw') and present(event.text) then
      repeated[event.text] = true
    end
  end
  for _, line in ipairs(p.lines or {}) do
    if not repeated[line] and not M.looks_like_json(line) then
      queue(race, agent, line, stderr and 'HydraStderr' or nil)
    end
    if not stderr then
      agent.stdout_tail = transcript.add_to_tail(agent.stdout_tail, line)
    end
  end
  for _, event in ipairs(events) do
    if event.kind == 'summary' then
      note_warned(agent, event.warnings)
    end
    local repeats = event.text == agent.last_text or transcript.repeats_tail(event.text, agent.stdout_tail)
    if event.kind == 'summary' and present(event.text) and repeats then
      -- CLIs repeat their final message in the summary, and hydra stands
      -- the end of a plain command's output for one: say it once.
      event = vim.tbl_extend('force', event, { text = vim.NIL })
    elseif event.kind == 'text' then
      agent.last_text = event.text
    end
    local text, group = transcript.render_event(event)
    if text then
      queue(race, agent, text, group or (stderr and 'HydraStderr' or nil))
    end
  end
  if present(p.droppedLines) and p.droppedLines > 0 then
    queue(race, agent, string.format('… %d line(s) left out here; :HydraLog has them', p.droppedLines), 'HydraMuted')
  end
end

-- How the agent ended, the CLI's own words when it failed, the tool calls
-- it was denied and the warnings of its run. Its stderr is in the buffer
-- already, as it came.
local function queue_finished(race, agent, status, exit_code, duration_ms, usage, error)
  local group = status == 'completed' and 'HydraSummary' or 'HydraError'
  queue(race, agent, '', nil)
  queue(race, agent, transcript.finished_line(status, exit_code, duration_ms or 0, usage), group)
  if present(error) then
    queue(race, agent, error, 'HydraError')
  end
  local denied = ui.denied_text(agent.deniedToolCalls)
  if denied then
    queue(race, agent, '⚠ ' .. denied .. ': it is not merged automatically', 'HydraFlag')
  end
  for _, w in ipairs(type(agent.warnings) == 'table' and agent.warnings or {}) do
    if not (agent.warned and agent.warned[w]) then
      queue(race, agent, '⚠ ' .. ui.one_line(w), 'HydraFlag')
    end
  end
end

local function on_agent_finished(p, root)
  local race = ensure_race(root, p.raceId)
  local agent = ensure_agent(race, p.agentId)
  agent.live = true
  agent.state = p.status
  agent.error = present(p.error) and p.error or nil
  agent.warnings = present(p.warnings) and p.warnings or nil
  agent.stderrTail = present(p.stderrTail) and p.stderrTail or nil
  agent.deniedToolCalls = present(p.deniedToolCalls) and p.deniedToolCalls or nil
  queue_finished(race, agent, p.status, p.exitCode, p.durationMs, p.usage, p.error)
  -- Denials and warnings explain a poor result (a permission it lacked, a
  -- model error) and keep it from being merged by itself.
  local notice = ui.finished_notice(p)
  if notice then
    vim.notify(notice, vim.log.levels.WARN)
  end
  -- What it did outside its worktree (put back where hydra could): it cannot win.
  if type(p.escapes) == 'table' and #p.escapes > 0 then
    for _, escape in ipairs(p.escapes) do
      queue(race, agent, 'outside its worktree: ' .. escape, 'HydraError')
    end
    vim.notify(
      string.format(
        'hydra: %s (race %s) reached outside its worktree and cannot win: %s',
        agent.id,
        race.id,
        table.concat(p.escapes, '; ')
      ),
      vim.log.levels.ERROR
    )
  end
  update_header(race, agent)
end
-- The specs drive these with hand-made notifications.
M.on_agent_output = on_agent_output
M.on_agent_finished = on_agent_finished

--- Fills the output buffer of an agent this editor did not watch from what
--- hydra recorded (transcript.read), then says how it ended. A finished
--- race's scores come along, for the header's marks.
function M.load_recorded(race, agent)
  transcript.read(race.root, race.id, agent.id, function(err, entries)
    if err then
      return client.notify_error(err, 'the output of ' .. agent.id)
    end
    -- Notifications about it arrived meanwhile: they tell it as it happens.
    if agent.live then
      return
    end
    for _, e in ipairs(entries) do
      queue(race, agent, e[1], e[2])
      -- A summary's warnings are its lines marked ⚠ (transcript.render_event).
      for _, line in ipairs(vim.split(e[1], '\n', { plain = true })) do
        if vim.startswith(line, '⚠ ') then
          note_warned(agent, { line:sub(#'⚠ ' + 1) })
        end
      end
    end
    -- A reviewer never needed never ran: no end to show in its buffer.
    if protocol.finished_agent_states[agent.state] and agent.state ~= 'notNeeded' then
      queue_finished(race, agent, agent.state, agent.exitCode, agent.elapsedMs, nil, agent.error)
    end
  end)
  -- A race in which no agent completed is failed, and scored too.
  local scored = race.state == 'completed' or race.state == 'failed'
  if scored and race.rankings == nil and not race.scores_asked then
    race.scores_asked = true
    client.request(race.root, protocol.scores, { raceId = race.id }, function(err, result)
      if not err then
        M.set_scores(race, result)
        update_headers(race)
      end
    end)
  end
end

--- Records a race's scores (hydra/scores or hydra/raceFinished).
function M.set_scores(race, result)
  race.rankings = result.rankings or {}
  race.winner = present(result.winner) and result.winner or nil
  race.allFailed = result.allFailed == true
  race.autoMergeEligible = result.autoMergeEligible
  race.autoMergeEnabled = result.autoMergeEnabled
  findings.set(race)
end

local function on_scoring_started(p, root)
  local race = ensure_race(root, p.raceId)
  -- A collaboration scores each iteration as it goes (`iteration`), and runs on.
  if present(p.iteration) then
    return
  end
  race.state = 'scoring'
  update_headers(race)
end

local function score_model(race, result)
  local branches, errors, agents = {}, {}, {}
  for id, agent in pairs(race.agents) do
    branches[id] = agent.branch
    errors[id] = agent.error
    agents[id] = {
      state = agent.state,
      error = agent.error,
      warnings = agent.warnings,
      stderrTail = agent.stderrTail,
      deniedToolCalls = agent.deniedToolCalls,
    }
  end
  return {
    raceId = race.id,
    kind = race.kind,
    task = race.task,
    rankings = result.rankings or {},
    winner = present(result.winner) and result.winner or nil,
    allFailed = result.allFailed,
    autoMergeEligible = result.autoMergeEligible,
    autoMergeEnabled = result.autoMergeEnabled,
    merged = race.merged,
    branches = branches,
    errors = errors,
    agents = agents,
  }
end
M.score_model = score_model

-- Outcomes of hydra/merge after which the race counts as merged.
local merged_outcomes = { fastForward = true, merged = true, upToDate = true }

-- What `[scoring] auto_merge` did (hydra/raceFinished's autoMerge), for the
-- message that the race finished; a merge it made marks the race merged.
local function note_auto_merge(race, auto, finished_at)
  if type(auto) ~= 'table' or type(auto.agentId) ~= 'string' then
    return nil
  end
  if merged_outcomes[auto.outcome] then
    -- What hydra records of it (RaceSummary.merged) once the race is read again.
    race.merged = vim.tbl_extend('force', auto, { mergedAt = finished_at, automatic = true })
    return 'auto_merge merged ' .. ui.merged_text(auto)
  end
  local why = auto.outcome == 'conflict'
      and ('it conflicts in ' .. ui.capped_list(type(auto.conflicts) == 'table' and auto.conflicts or {}, 5))
    or (present(auto.error) and ui.one_line(auto.error) or tostring(auto.outcome))
  return 'auto_merge did not merge ' .. auto.agentId .. ': ' .. why .. '; nothing was changed'
end

local function on_race_finished(p, root)
  local race = ensure_race(root, p.raceId)
  race.state = p.status
  M.set_scores(race, p)
  local auto = note_auto_merge(race, p.autoMerge, p.finishedAt)
  update_headers(race)
  local collab = M.is_collab(race)
  local message = 'hydra: ' .. (collab and 'collaboration ' or 'race ') .. race.id .. ' ' .. p.status
  local level = vim.log.levels.INFO
  local stopped = collab and ui.stop_text({ stopReason = p.stopReason, collaboration = race.collaboration })
  if stopped then
    message = message .. '; stopped: ' .. stopped
  end
  if race.winner then
    local total = race.rankings[1] and race.rankings[1].total
    message = message .. (collab and '; best: ' or '; winner: ') .. race.winner .. (total and string.format(' (%.1f)', total) or '')
  end
  if p.allFailed then
    message = message .. '; ' .. (collab and ui.no_good_round or ui.all_failed)
    level = vim.log.levels.WARN
  end
  if auto then
    message = message .. '; ' .. auto
    if not race.merged then
      level = vim.log.levels.WARN
    end
  end
  -- A collaboration's own buffer (hydra.collab) shows its iterations' scores.
  local show = race.started_here and not collab and config.options.window.scores_on_finish and #race.rankings > 0
  -- The scoreboard takes the focus: never in the middle of typing.
  local typing = vim.api.nvim_get_mode().mode:sub(1, 1) ~= 'n'
  if show and typing then
    message = message .. ' (:HydraScores)'
  end
  vim.notify(message, level)
  if show and not typing then
    commands.show_scores(race, score_model(race, p))
  end
end

local function on_server_exited(_, root)
  for _, race in pairs(M.races) do
    if race.root == root and not protocol.finished_race_states[race.state] then
      race.state = 'interrupted'
      for _, agent in pairs(race.agents) do
        if not protocol.finished_agent_states[agent.state] then
          agent.state = 'interrupted'
        end
      end
      update_headers(race)
    end
  end
end

client.on(protocol.agent_started, on_agent_started)
client.on(protocol.agent_output, on_agent_output)
client.on(protocol.agent_finished, on_agent_finished)
client.on(protocol.scoring_started, on_scoring_started)
client.on(protocol.race_finished, on_race_finished)
client.on(client.server_exited, on_server_exited)

local function set_window_options(win)
  -- At the end, so that the window follows the output from the start.
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(vim.api.nvim_win_get_buf(win)), 0 })
  vim.wo[win].wrap = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = 'no'
end

--- Opens the output buffers of `race` in the configured layout.
function M.show(race, layout)
  layout = layout or config.options.window.layout
  if layout == 'none' or #race.order == 0 then
    return
  end
  local bufs = {}
  for _, id in ipairs(race.order) do
    table.insert(bufs, M.output_buffer(race, race.agents[id]))
  end
  if layout == 'tab' then
    vim.cmd('tabnew')
    local empty = vim.api.nvim_get_current_buf()
    vim.api.nvim_win_set_buf(0, bufs[1])
    -- tabnew's empty buffer would linger in the buffer list.
    if vim.api.nvim_buf_is_valid(empty) and vim.api.nvim_buf_get_name(empty) == '' then
      vim.api.nvim_buf_delete(empty, {})
    end
  else
    vim.cmd(layout == 'vertical' and 'rightbelow vsplit' or 'rightbelow split')
    vim.api.nvim_win_set_buf(0, bufs[1])
  end
  set_window_options(0)
  local split = layout == 'horizontal' and 'rightbelow split' or 'rightbelow vsplit'
  for i = 2, #bufs do
    vim.cmd(split)
    vim.api.nvim_win_set_buf(0, bufs[i])
    set_window_options(0)
  end
  vim.cmd('wincmd =')
end

local function edit_distance(a, b)
  local previous = {}
  for j = 0, #b do
    previous[j] = j
  end
  for i = 1, #a do
    local current = { [0] = i }
    for j = 1, #b do
      local cost = a:sub(i, i) == b:sub(j, j) and 0 or 1
      current[j] = math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
    end
    previous = current
  end
  return previous[#b]
end

--- The name among `candidates` that `word` looks like a typo of, or nil:
--- the rule hydra's UnknownAgentName error uses for its `suggestion` (a
--- prefix of three letters or more, or at most one edit per three letters).
function M.closest_name(word, candidates)
  local typed = word:lower()
  local best, best_distance
  for _, candidate in ipairs(candidates) do
    local wanted = candidate:lower()
    local distance = (#typed >= 3 and vim.startswith(wanted, typed)) and 1 or edit_distance(typed, wanted)
    local allowed = math.max(1, math.floor(#wanted / 3))
    if distance <= allowed and (best_distance == nil or distance < best_distance) then
      best, best_distance = candidate, distance
    end
  end
  return best
end

--- Why hydra cannot race an agent of that name: "unknown agent 'claud'; did
--- you mean 'claude'?".
function M.unknown_agent_text(name, suggestion)
  if present(suggestion) and suggestion ~= '' then
    return string.format("unknown agent '%s'; did you mean '%s'?", name, suggestion)
  end
  return string.format(
    "unknown agent '%s': hydra.toml has no [agents.%s] and no adapter has that name (:HydraRace <Tab> lists the names)",
    name,
    name
  )
end

--- Why hydra cannot race an agent that is not installed: "claude cannot
--- race here: 'claude' not found on PATH" (`problem` from hydra/agents, in
--- short: ui.short_problem).
function M.unavailable_text(name, problem)
  local why = ui.short_problem(problem)
  return string.format('%s cannot race here: %s', name, why or 'hydra cannot run it')
end

-- The words for hydra's refusal of a race: its own message, but for an
-- agent name it does not know (with its suggestion) or an agent that is not
-- installed, which are said the way the plugin says them before asking.
local function refusal_text(err)
  local data = type(err) == 'table' and type(err.data) == 'table' and err.data or nil
  if data and type(data.agent) == 'string' then
    if err.code == protocol.errors.unknown_agent_name then
      return M.unknown_agent_text(data.agent, data.suggestion)
    elseif err.code == protocol.errors.agent_unavailable then
      return M.unavailable_text(data.agent, data.problem)
    end
  end
  return type(err) == 'table' and err.message or tostring(err)
end

M.refusal_text = refusal_text

--- Starts a race in `root`; callback(err, race) once hydra answered.
function M.start(root, task, agents, callback)
  client.request(root, protocol.race, { task = task, agents = agents }, function(err, result)
    if err then
      vim.notify('hydra: the race did not start: ' .. refusal_text(err), vim.log.levels.ERROR)
      if callback then
        callback(err, nil)
      end
      return
    end
    local race = ensure_race(root, result.raceId)
    race.task = task
    race.started_here = true
    for _, a in ipairs(result.agents) do
      ensure_agent(race, a.agentId, a)
    end
    latest[root] = race.id
    M.show(race)
    vim.notify(
      string.format('hydra: race %s started: %s', race.id, table.concat(race.order, ', ')),
      vim.log.levels.INFO
    )
    -- Agents run with your permissions when bubblewrap cannot confine them: say so.
    if present(result.sandboxWarning) and result.sandboxWarning ~= '' then
      vim.notify(
        string.format('hydra: race %s runs its agents unconfined: %s', race.id, result.sandboxWarning),
        vim.log.levels.WARN
      )
    end
    if callback then
      callback(nil, race)
    end
  end)
end

--- Records a race hydra/status described (one this editor did not start).
function M.adopt(root, summary)
  local race = ensure_race(root, summary.raceId)
  race.task = summary.task
  if not (race.started_here and protocol.finished_race_states[race.state]) then
    race.state = summary.state
  end
  if race.rankings == nil and summary.allFailed ~= nil then
    race.allFailed = summary.allFailed == true
    race.winner = present(summary.winner) and summary.winner or nil
  end
  race.merged = present(summary.merged) and summary.merged or nil
  if race.merged then
    findings.clear(race.id)
  end
  for _, a in ipairs(summary.agents or {}) do
    ensure_agent(race, a.agentId, a)
  end
  race.kind = present(summary.kind) and summary.kind or race.kind
  for _, fn in ipairs(adopt_listeners) do
    client.guarded(fn, race, summary)
  end
  return race
end

--- The id of the race commands act on in `root`, when there is one yet.
function M.latest_id(root)
  return latest[root]
end

--- Makes `race_id` the race commands act on in `root`.
function M.set_latest(root, race_id)
  latest[root] = race_id
end

--- The race commands act on: the one of the current output buffer, else the
--- last one started or looked at here, else the newest hydra knows of (a
--- running one first). callback(err, race).
function M.current(root, callback)
  local ok, buf_race = pcall(vim.api.nvim_buf_get_var, 0, 'hydra_race')
  if ok and M.races[buf_race] and M.races[buf_race].root == root then
    callback(nil, M.races[buf_race])
    return
  end
  if latest[root] and M.races[latest[root]] then
    callback(nil, M.races[latest[root]])
    return
  end
  client.request(root, protocol.status, vim.empty_dict(), function(err, result)
    if err then
      callback(err, nil)
    elseif not result.races or #result.races == 0 then
      callback({ message = 'no race in this repository yet: start one with :HydraRace' }, nil)
    else
      local race = M.adopt(root, result.races[1])
      latest[root] = race.id
      callback(nil, race)
    end
  end)
end

--- Asks hydra how race `race` stands now (hydra/status), and records it:
--- whether it was merged, above all. callback(err, race).
function M.refresh(race, callback)
  client.request(race.root, protocol.status, { raceId = race.id }, function(err, result)
    if not err and result.races and result.races[1] then
      M.adopt(race.root, result.races[1])
    end
    if callback then
      callback(err, race)
    end
  end)
end

--- The race with this id, known here or asked of hydra. callback(err, race).
function M.lookup(root, race_id, callback)
  if M.races[race_id] then
    callback(nil, M.races[race_id])
    return
  end
  client.request(root, protocol.status, { raceId = race_id }, function(err, result)
    if err then
      callback(err, nil)
    else
      callback(nil, M.adopt(root, result.races[1]))
    end
  end)
end

return M
