-- Collaborations (hydra/collab): one builder agent and one reviewer agent in
-- rounds. Iteration 1 is the builder's work, scored, then reviewed; each
-- further iteration is the builder's refine after the review, until an
-- iteration scores enough, the reviewer approves, the iterations run out or
-- an agent fails. Their output buffers are race.lua's; this module keeps the
-- iterations of each collaboration and draws them in a buffer of its own
-- (iteration, phase in progress, score and breakdown, review, approval, why
-- it stopped, the best one), live from the notifications, and from
-- hydra/status (RaceSummary.iterations) for one this editor did not watch.

local client = require('hydra.client')
local commands = require('hydra.commands')
local config = require('hydra.config')
local protocol = require('hydra.protocol')
local race = require('hydra.race')
local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

local present, opt = util.present, util.opt

-- The record of a collaboration (race.races) gets:
--   collaboration = { builder, reviewer, maxIterations, untilScore, approveMarker, stopReason? }
--   iterations = { [n] = iteration }, stopReason, phase = { iteration, phase } (the run in progress)
-- iteration: { iteration, commit, builderStatus, resumed, total, breakdown,
--   ranking (hydra/scores' AgentScore, when a notification carried it),
--   review, reviewStatus, approved, next, phase (in progress: 'build',
--   'refine', 'scoring', 'review'), finished (hydra/iterationFinished came) }

--- The agentId that names iteration `n`: "builder@2".
function M.iteration_id(n)
  return 'builder@' .. n
end

--- The iteration an agentId names ("builder@2" -> 2), or nil.
function M.iteration_of(agent_id)
  local n = type(agent_id) == 'string' and agent_id:match('^builder@(%d+)$')
  return n and tonumber(n) or nil
end

--- The iteration numbers of collaboration `r` known here, in order.
function M.iteration_numbers(r)
  local out = {}
  for n in pairs(r.iterations or {}) do
    table.insert(out, n)
  end
  table.sort(out)
  return out
end

--- The agentIds of the iterations of `r` that left a result ("builder@1", ...).
function M.iteration_ids(r)
  local out = {}
  for _, n in ipairs(M.iteration_numbers(r)) do
    local it = r.iterations[n]
    if it.finished or present(it.commit) or it.total then
      table.insert(out, M.iteration_id(n))
    end
  end
  return out
end

local function iteration(r, n)
  r.iterations = r.iterations or {}
  local it = r.iterations[n]
  if not it then
    it = { iteration = n }
    r.iterations[n] = it
  end
  return it
end

local function set_collaboration(r, c)
  if type(c) ~= 'table' then
    return
  end
  r.collaboration = vim.tbl_extend('force', r.collaboration or {}, c)
  if present(c.stopReason) then
    r.stopReason = c.stopReason
  end
end

-- A score hydra sent: a number (RaceSummary.iterations' total) or an
-- AgentScore (hydra/iterationFinished, hydra/raceFinished's rankings).
local function set_score(it, score, breakdown)
  if type(score) == 'number' then
    it.total = score
  elseif type(score) == 'table' then
    it.ranking = score
    it.total = type(score.total) == 'number' and score.total or it.total
    breakdown = score.breakdown
  end
  if type(breakdown) == 'table' then
    it.breakdown = breakdown
  end
end

--- Reads a RaceSummary of a collaboration (hydra/status, hydra/collab's
--- answer) into race record `r`.
function M.adopt(r, summary)
  if summary.kind ~= 'collab' and r.kind ~= 'collab' then
    return
  end
  r.kind = 'collab'
  set_collaboration(r, summary.collaboration)
  if present(summary.winner) then
    r.winner = summary.winner
  end
  for _, s in ipairs(type(summary.iterations) == 'table' and summary.iterations or {}) do
    if type(s.iteration) == 'number' then
      local it = iteration(r, s.iteration)
      it.commit = opt(s.commit) or it.commit
      it.builderStatus = opt(s.builderStatus) or it.builderStatus
      it.resumed = s.resumed == true or it.resumed
      set_score(it, opt(s.score), opt(s.breakdown))
      it.review = opt(s.review) or it.review
      it.reviewStatus = opt(s.reviewStatus) or it.reviewStatus
      it.approved = s.approved == true or it.approved
      -- Recorded, it is over, unless it is the one running here now.
      if not (r.phase and r.phase.iteration == s.iteration) then
        it.finished = true
      end
    end
  end
  if protocol.finished_race_states[r.state] then
    r.phase = nil
    for _, it in pairs(r.iterations or {}) do
      it.phase = nil
    end
  end
  M.refresh_view(r)
end

-- Notifications ----------------------------------------------------------

local function collab_of(p, root)
  local r = race.races[p.raceId]
  if r and r.root == root and race.is_collab(r) then
    return r
  end
  return nil
end

local function set_phase(r, n, phase)
  if r.phase and r.iterations and r.iterations[r.phase.iteration] then
    r.iterations[r.phase.iteration].phase = nil
  end
  r.phase = phase and { iteration = n, phase = phase } or nil
  if phase then
    iteration(r, n).phase = phase
  end
end

local function on_agent_started(p, root)
  local r = collab_of(p, root)
  if r and present(p.phase) and type(p.iteration) == 'number' then
    set_phase(r, p.iteration, p.phase)
    if p.resumed == true then
      iteration(r, p.iteration).resumed = true
    end
    M.refresh_view(r)
  end
end

local function on_scoring_started(p, root)
  local r = collab_of(p, root)
  if r and type(p.iteration) == 'number' then
    set_phase(r, p.iteration, 'scoring')
    M.refresh_view(r)
  end
end

local function on_iteration_finished(p, root)
  local r = collab_of(p, root)
  if not r or type(p.iteration) ~= 'number' then
    return
  end
  local it = iteration(r, p.iteration)
  it.commit = opt(p.commit)
  it.builderStatus = opt(p.builderStatus)
  it.resumed = p.resumed == true or it.resumed
  set_score(it, opt(p.score))
  it.review = opt(p.review)
  it.reviewStatus = opt(p.reviewStatus)
  it.approved = p.approved == true
  it.next = opt(p.next)
  it.finished = true
  if r.phase and r.phase.iteration == p.iteration then
    set_phase(r, p.iteration, nil)
  end
  it.phase = nil
  if present(p.stopReason) then
    r.stopReason = p.stopReason
  end
  M.refresh_view(r)
end

local function on_race_finished(p, root)
  local r = collab_of(p, root)
  if not r then
    return
  end
  set_phase(r, nil, nil)
  if present(p.stopReason) then
    r.stopReason = p.stopReason
  end
  for _, ranking in ipairs(type(p.rankings) == 'table' and p.rankings or {}) do
    local n = M.iteration_of(ranking.agentId)
    if n then
      set_score(iteration(r, n), ranking)
    end
  end
  M.refresh_view(r)
end

-- How an agent's run ended: the iteration says more once it is over, but a
-- view open meanwhile is drawn again.
local function on_agent_finished(p, root)
  local r = collab_of(p, root)
  if r then
    M.refresh_view(r)
  end
end

local function on_server_exited(_, root)
  for _, r in pairs(race.races) do
    if r.root == root and race.is_collab(r) then
      set_phase(r, nil, nil)
      M.refresh_view(r)
    end
  end
end

-- After race.lua's own listeners (it is loaded first): the record is up to date.
client.on(protocol.agent_started, on_agent_started)
client.on(protocol.agent_finished, on_agent_finished)
client.on(protocol.scoring_started, on_scoring_started)
client.on(protocol.iteration_finished, on_iteration_finished)
client.on(protocol.race_finished, on_race_finished)
client.on(client.server_exited, on_server_exited)
race.on_adopt(M.adopt)

-- Rendering -------------------------------------------------------------

-- A run in progress, in words.
M.phase_words = {
  build = 'building…',
  refine = 'refining…',
  scoring = 'scoring…',
  review = 'reviewing…',
}

M.stop_words = ui.stop_words
M.stop_text = ui.stop_text

local function agent_name(r, agent_id)
  local c = r.collaboration or {}
  local a = r.agents and r.agents[agent_id]
  return opt(c[agent_id]) or (a and a.name ~= agent_id and a.name) or agent_id
end

--- "bob builds, rita reviews".
function M.roles_text(r)
  return agent_name(r, 'builder') .. ' builds, ' .. agent_name(r, 'reviewer') .. ' reviews'
end

local function completed(status)
  return not present(status) or status == 'completed'
end

-- The keys of the view, as its last line lists them.
local function help_line(r)
  local keys = config.options.keymaps
  local help = { '<CR> review', '<Tab> expand' }
  vim.list_extend(
    help,
    ui.key_help({
      { keys.diff, 'diff' },
      { not r.merged and keys.merge, 'merge' },
      { keys.log, 'log' },
      { keys.scores, 'scores' },
      { 'o', 'output' },
      { keys.cancel, 'cancel' },
      { keys.close, 'close' },
    })
  )
  return table.concat(help, ' · ')
end

--- The collaboration view of record `r`: lines, highlights, and what each
--- line (1-based) is about: { iteration = n, part = 'iteration'|'review' }.
--- `expanded`: iteration -> true for the reviews shown whole.
function M.render(r, expanded)
  expanded = expanded or {}
  local c = r.collaboration or {}
  local b = ui.builder()
  local at = {}
  b:add('hydra · ', 'HydraHeader'):add('collaboration ' .. r.id, 'HydraTitle'):add(' · ', 'HydraHeader')
  b:add(r.state or 'running', 'HydraAgentState')
  if r.phase then
    b:add(' · iteration ' .. r.phase.iteration .. ': ' .. (M.phase_words[r.phase.phase] or r.phase.phase), 'HydraHeader')
  end
  b:newline()
  b:line('task: ' .. util.first_line(r.task), 'HydraHeader')
  local about = { 'builder: ' .. agent_name(r, 'builder'), 'reviewer: ' .. agent_name(r, 'reviewer') }
  if type(c.maxIterations) == 'number' then
    table.insert(about, 'up to ' .. util.plural(c.maxIterations, 'iteration'))
  end
  if type(c.untilScore) == 'number' then
    table.insert(about, string.format('until %.1f', c.untilScore))
  end
  if present(c.approveMarker) then
    table.insert(about, 'approves with "' .. c.approveMarker .. '"')
  end
  b:line(table.concat(about, ' · '), 'HydraHeader')
  b:line(string.rep('─', 40), 'HydraHeader')
  b:line('')

  local numbers = M.iteration_numbers(r)
  if #numbers == 0 then
    b:line('  No iteration yet: the builder is ' .. (r.phase and 'at work' or 'waiting') .. '.', 'HydraMuted')
  end
  local merged = present(r.merged) and r.merged or nil
  for _, n in ipairs(numbers) do
    local it = r.iterations[n]
    local id = M.iteration_id(n)
    local best = r.winner == id
    b:add(string.format('  iteration %d  ', n))
    b:add(id, best and 'HydraWinner' or 'HydraTitle')
    b:add('  ')
    if it.total then
      b:add(string.format('%5.1f', it.total), ui.score_group(it.total)):add(' / 100    ')
      if it.breakdown or it.ranking then
        ui.add_breakdown(b, it.ranking or { breakdown = it.breakdown })
      end
    elseif it.phase then
      b:add(M.phase_words[it.phase] or it.phase, 'HydraAgentState')
    elseif it.finished then
      b:add('not scored', 'HydraMuted')
    end
    if it.total and it.phase then
      b:add('  ' .. (M.phase_words[it.phase] or it.phase), 'HydraAgentState')
    end
    if best then
      b:add('  ★ best', 'HydraWinner')
    end
    if it.approved then
      b:add('  ✓ approved', 'HydraScoreGood')
    end
    if it.resumed then
      b:add('  (resumed)', 'HydraMuted')
    end
    if not completed(it.builderStatus) then
      b:add('  builder ' .. it.builderStatus, 'HydraError')
    end
    if merged and merged.agentId == id then
      b:add('  ✓ merged', 'HydraMerged')
    end
    b:newline()
    at[#b.lines] = { iteration = n, part = 'iteration' }

    local review = ui.text_lines(it.review)
    if #review > 0 then
      b:add('      review: ', 'HydraHeader')
      if expanded[n] then
        b:newline()
        at[#b.lines] = { iteration = n, part = 'review' }
        for _, l in ipairs(review) do
          b:line('        ' .. l)
          at[#b.lines] = { iteration = n, part = 'review' }
        end
      else
        b:add(review[1])
        if #review > 1 then
          b:add(string.format('  (+%d lines: <Tab> shows them)', #review - 1), 'HydraMuted')
        end
        b:newline()
        at[#b.lines] = { iteration = n, part = 'review' }
      end
    elseif not completed(it.reviewStatus) then
      b:line('      review: the reviewer ' .. it.reviewStatus, 'HydraError')
      at[#b.lines] = { iteration = n, part = 'review' }
    elseif it.phase == 'review' then
      b:line('      review: ' .. agent_name(r, 'reviewer') .. ' is reviewing…', 'HydraMuted')
      at[#b.lines] = { iteration = n, part = 'review' }
    elseif it.finished then
      b:line('      not reviewed', 'HydraMuted')
      at[#b.lines] = { iteration = n, part = 'review' }
    end
  end
  b:line('')

  local stop = M.stop_text(r)
  if stop then
    b:add('Stopped: ', 'HydraTitle'):add(stop):newline()
  end
  if r.winner then
    local n = M.iteration_of(r.winner)
    local it = n and r.iterations and r.iterations[n]
    b:add('Best: ', 'HydraTitle'):add(r.winner, 'HydraWinner')
    if it and it.total then
      b:add(string.format(' (%.1f)', it.total))
    end
    b:newline()
  elseif r.allFailed == true then
    b:line(ui.no_good_round, 'HydraScorePoor')
  end
  if merged then
    b:add('Merged: ', 'HydraMerged'):add(ui.merged_text(merged)):newline()
  end
  b:line(help_line(r) .. "  (on an iteration's line)", 'HydraMuted')
  return b.lines, b.highlights, at
end

-- View ------------------------------------------------------------------

-- raceId -> { [iteration] = true }: the reviews the view shows whole.
local expanded_reviews = {}
-- view buffer -> what each of its lines is about (M.render's `at`)
local lines_of_view = {}

--- The key (ui.find_buffer) of the collaboration view of `race_id`.
function M.view_key(race_id)
  return 'hydra://' .. race_id .. '/collab'
end

--- The key of the buffer showing the review of iteration `n`.
function M.review_key(race_id, n)
  return 'hydra://' .. race_id .. '/' .. M.iteration_id(n) .. '~review'
end

--- Draws the view of `r` again, when it has one.
function M.refresh_view(r)
  local buf = ui.find_buffer(M.view_key(r.id))
  if not buf then
    return
  end
  local lines, highlights, at = M.render(r, expanded_reviews[r.id])
  ui.fill(buf, lines, highlights)
  lines_of_view[buf] = at
end

--- Opens the review of iteration `n` of `r`, whole, in a markdown scratch
--- buffer (a floating window). Returns its buffer, or nil when it has none.
function M.open_review(r, n)
  local it = r.iterations and r.iterations[n]
  local review = it and ui.text_lines(it.review) or {}
  if #review == 0 then
    local why = it and not completed(it.reviewStatus) and ('the reviewer ' .. it.reviewStatus) or 'nothing reviewed it'
    vim.notify(string.format('hydra: iteration %d has no review (%s)', n, why), vim.log.levels.INFO)
    return nil
  end
  local lines = {
    string.format('# Review of %s by %s', M.iteration_id(n), agent_name(r, 'reviewer')),
    '',
  }
  vim.list_extend(lines, review)
  local buf, win = ui.open_float(
    M.review_key(r.id, n),
    lines,
    {},
    'markdown',
    string.format('hydra: review of %s (race %s)', M.iteration_id(n), r.id)
  )
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].conceallevel = 0
  vim.api.nvim_buf_set_var(buf, 'hydra_root', r.root)
  return buf, win
end

local function view_buffer(r)
  local key = M.view_key(r.id)
  local buf = ui.find_buffer(key)
  if buf then
    return buf
  end
  buf = ui.scratch_buffer(string.format('hydra: collaboration (race %s)', r.id), 'hydracollab', key)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_var(buf, 'hydra_race', r.id)
  vim.api.nvim_buf_set_var(buf, 'hydra_root', r.root)
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = buf,
    callback = function()
      lines_of_view[buf] = nil
    end,
  })
  local keys = config.options.keymaps
  -- Calls fn(n, part) with the iteration under the cursor.
  local function at_cursor(fn)
    return function()
      local at = (lines_of_view[buf] or {})[vim.api.nvim_win_get_cursor(0)[1]]
      if not at then
        return vim.notify("hydra: put the cursor on an iteration's line", vim.log.levels.WARN)
      end
      fn(at.iteration, at.part)
    end
  end
  local function target(n)
    return { root = r.root, race = r.id, agent = M.iteration_id(n) }
  end
  ui.map(buf, '<CR>', at_cursor(function(n)
    M.open_review(r, n)
  end), 'The review of this iteration, whole')
  ui.map(buf, '<Tab>', at_cursor(function(n)
    expanded_reviews[r.id] = expanded_reviews[r.id] or {}
    expanded_reviews[r.id][n] = not expanded_reviews[r.id][n] or nil
    M.refresh_view(r)
  end), 'Show or hide the whole review of this iteration')
  ui.map(buf, keys.diff, at_cursor(function(n)
    commands.diff(target(n))
  end), "Review this iteration's diff")
  ui.map(buf, keys.merge, at_cursor(function(n)
    commands.merge(target(n))
  end), 'Merge this iteration')
  ui.map(buf, keys.log, at_cursor(function(_, part)
    commands.log({ root = r.root, race = r.id, agent = part == 'review' and 'reviewer' or 'builder' })
  end), "The builder's full log (on a review: the reviewer's)")
  ui.map(buf, keys.scores, function()
    commands.scores({ root = r.root, race = r.id })
  end, 'The scoreboard of the iterations')
  ui.map(buf, keys.cancel, function()
    commands.cancel({ root = r.root, race = r.id })
  end, 'Cancel the collaboration')
  ui.map(buf, 'o', function()
    race.show(r, 'tab')
  end, "The builder's and the reviewer's output")
  ui.map(buf, keys.close, ui.close_window, 'Close')
  return buf
end

--- The view's buffer of collaboration `r`, made and drawn.
function M.view(r)
  local buf = view_buffer(r)
  M.refresh_view(r)
  return buf
end

-- The first line of the view about an iteration, for the cursor.
local function first_iteration_line(buf)
  local at = lines_of_view[buf] or {}
  local first
  for line, what in pairs(at) do
    if what.part == 'iteration' and (not first or line < first) then
      first = line
    end
  end
  return first
end

--- Opens the view of collaboration `r`, alone: in the window that shows it
--- already, else in a tab of its own. Returns its buffer.
function M.open(r)
  local buf = M.view(r)
  local wins = vim.fn.win_findbuf(buf)
  if #wins > 0 then
    vim.api.nvim_set_current_win(wins[1])
  else
    vim.cmd('tab sbuffer ' .. buf)
    ui.set_view_window_options(0)
    local line = first_iteration_line(buf)
    if line then
      vim.api.nvim_win_set_cursor(0, { line, 0 })
    end
  end
  return buf
end

--- Opens collaboration `r` in `layout` (default window.layout): the output
--- buffers of the builder and the reviewer as race.show opens a race's, and
--- the view above them, where the cursor goes. Returns the view's buffer.
function M.show(r, layout)
  layout = layout or config.options.window.layout
  local buf = M.view(r)
  if layout == 'none' then
    return buf
  end
  if #r.order == 0 then
    return M.open(r)
  end
  race.show(r, layout)
  if layout == 'tab' then
    vim.cmd('topleft split')
  else
    local builder = r.agents.builder and r.agents.builder.buf
    local wins = builder and vim.fn.win_findbuf(builder) or {}
    if #wins > 0 then
      vim.api.nvim_set_current_win(wins[1])
    end
    vim.cmd('aboveleft split')
  end
  vim.api.nvim_win_set_buf(0, buf)
  ui.set_view_window_options(0)
  local height = math.min(vim.api.nvim_buf_line_count(buf) + 2, math.max(math.floor(vim.o.lines / 2), 8))
  vim.api.nvim_win_set_height(0, height)
  return buf
end

--- Starts a collaboration in `root`: params of hydra/collab ({task,
--- builder?, reviewer?, maxIterations?, untilScore?, base?}). Opens it and
--- calls callback(err, race) once hydra answered.
function M.start(root, params, callback)
  client.request(root, protocol.collab, params, function(err, result)
    if err then
      vim.notify('hydra: the collaboration did not start: ' .. race.refusal_text(err), vim.log.levels.ERROR)
      if callback then
        callback(err, nil)
      end
      return
    end
    result.kind = 'collab'
    local r = race.adopt(root, result)
    -- Its output buffers fill live, not from what hydra recorded.
    r.started_here = true
    r.task = params.task
    race.set_latest(root, r.id)
    M.show(r)
    vim.notify(string.format('hydra: collaboration %s started: %s', r.id, M.roles_text(r)), vim.log.levels.INFO)
    if present(result.sandboxWarning) and result.sandboxWarning ~= '' then
      vim.notify(
        string.format('hydra: collaboration %s runs its agents unconfined: %s', r.id, result.sandboxWarning),
        vim.log.levels.WARN
      )
    end
    if callback then
      callback(nil, r)
    end
  end)
end

return M
