-- Evaluations (hydra/evalRun): every case of an eval set run many times per
-- agent, each sample verified, and a report (hydra.eval/1) written after
-- every sample. Their races are not announced: an evaluation speaks through
-- hydra/evalSample and hydra/evalFinished only. This module keeps the
-- evaluations started here and draws each in a buffer of its own: how far
-- it is, one line per finished sample, and once it is over the tables hydra
-- renders from its report (hydra/evalReport, format "text"). A report read
-- from disk (:HydraEvalReport) is drawn the same way.

local client = require('hydra.client')
local config = require('hydra.config')
local protocol = require('hydra.protocol')
local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

local present, opt = util.present, util.opt

-- evalId -> evaluation: { id, root, name, report (its path), cases, agents,
--   samples (per case and agent), passK, total, done, solved, status
--   ('running', 'completed', 'cancelled', or 'interrupted' when hydra serve
--   exited first), results (the finished samples, hydra/evalSample's
--   `sample`, by key), text (the rendered report, once over), report_error
--   (why it could not be read), seq (the order evaluations started here) }
M.evals = {}
local started = 0

-- The states of an evaluation that will not change any more.
M.finished_states = { completed = true, cancelled = true, interrupted = true }

local function sample_key(s)
  return string.format('%s\0%s\0%s', tostring(s.caseId), tostring(s.agent), tostring(s.index))
end

-- The record of evaluation `id` in `root`, made when there is none. An
-- evaluation writing the report of one that is over here (`out` or `resume`
-- name the same file, and hydra names an evaluation after its report) gets
-- a record of its own: `fresh` when hydra answered its hydra/evalRun, or
-- when a sample of it is reported.
local function ensure_eval(root, id, fresh)
  local ev = M.evals[id]
  if not ev or (fresh and ev.status ~= 'running') then
    started = started + 1
    ev = { id = id, root = root, status = 'running', results = {}, seq = started }
    M.evals[id] = ev
  end
  return ev
end

local function add_result(ev, sample)
  if type(sample) == 'table' then
    ev.results[sample_key(sample)] = sample
  end
end

--- The evaluation of this session that :HydraEvalCancel acts on in `root`:
--- the latest one started that still runs; nil when none does.
function M.latest_running(root)
  local latest
  for _, ev in pairs(M.evals) do
    if ev.root == root and ev.status == 'running' and (not latest or ev.seq > latest.seq) then
      latest = ev
    end
  end
  return latest
end

--- The evalIds of the evaluations started here in `root`, newest first.
function M.ids(root)
  local list = {}
  for _, ev in pairs(M.evals) do
    if ev.root == root then
      table.insert(list, ev)
    end
  end
  table.sort(list, function(a, b)
    return a.seq > b.seq
  end)
  return vim.tbl_map(function(ev)
    return ev.id
  end, list)
end

-- Rendering -------------------------------------------------------------

--- "pass@1, pass@2".
local function pass_k_text(pass_k)
  return table.concat(
    vim.tbl_map(function(k)
      return 'pass@' .. tostring(k)
    end, pass_k),
    ', '
  )
end

--- The finished samples of `results` (by key), in the order they are
--- listed: by case, then by agent (in `agents`' order, then by name), then
--- by index.
function M.sorted_samples(results, agents)
  local rank = {}
  for i, a in ipairs(agents or {}) do
    rank[a] = i
  end
  local list = vim.tbl_values(results or {})
  table.sort(list, function(a, b)
    if a.caseId ~= b.caseId then
      return tostring(a.caseId) < tostring(b.caseId)
    end
    if a.agent ~= b.agent then
      local ra, rb = rank[a.agent] or math.huge, rank[b.agent] or math.huge
      if ra ~= rb then
        return ra < rb
      end
      return tostring(a.agent) < tostring(b.agent)
    end
    return (tonumber(a.index) or 0) < (tonumber(b.index) or 0)
  end)
  return list
end

local pad = ui.pad

-- One line per sample: "  coupon-case  alternating  #1  not solved  completed   83.1",
-- then its error, when it has one.
local function add_samples(b, samples)
  local widths = { 0, 0, 0, 0 }
  for _, s in ipairs(samples) do
    widths[1] = math.max(widths[1], vim.fn.strdisplaywidth(tostring(s.caseId)))
    widths[2] = math.max(widths[2], vim.fn.strdisplaywidth(tostring(s.agent)))
    widths[3] = math.max(widths[3], #('#' .. tostring(s.index)))
    widths[4] = math.max(widths[4], vim.fn.strdisplaywidth(tostring(opt(s.status) or '')))
  end
  for _, s in ipairs(samples) do
    b:add('  ' .. pad(tostring(s.caseId), widths[1]) .. '  ')
    b:add(pad(tostring(s.agent), widths[2]), 'HydraTitle')
    b:add('  ' .. pad('#' .. tostring(s.index), widths[3]) .. '  ')
    if s.solved == true then
      b:add(pad('solved', 10), 'HydraScoreGood')
    else
      b:add(pad('not solved', 10), 'HydraScorePoor')
    end
    local status = tostring(opt(s.status) or '')
    b:add('  ')
    b:add(pad(status, widths[4]), status == 'completed' and 'HydraAgentState' or 'HydraError')
    if type(s.score) == 'number' then
      b:add('  ')
      b:add(string.format('%5.1f', s.score), ui.score_group(s.score))
    end
    if present(s.error) and s.error ~= '' then
      b:add('  ' .. util.shorten(ui.one_line(s.error), 100), 'HydraError')
    end
    b:newline()
  end
end

-- hydra's rendered report, its titles marked.
local function add_report_text(b, text)
  for i, l in ipairs(ui.text_lines(text)) do
    if i == 1 or l == 'Agents' or l:match('^Case ') then
      b:line(l, 'HydraTitle')
    elseif l:match('^  agent ') then
      b:line(l, 'HydraHeader')
    else
      b:line(l)
    end
  end
end

local function add_help(b, running)
  local keys = config.options.keymaps
  ui.add_key_help(b, { { running and keys.cancel, 'cancel' }, { keys.close, 'close' } })
end

--- "Evaluating shopcart: 3/4 samples · 2 solved" (while it runs;
--- "Evaluated" once it is over).
function M.progress_text(ev)
  return string.format(
    '%s %s: %d/%d samples · %d solved',
    ev.status == 'running' and 'Evaluating' or 'Evaluated',
    ev.name or ev.id,
    ev.done or 0,
    ev.total or 0,
    ev.solved or 0
  )
end

--- The buffer of evaluation `ev`: lines and highlights.
function M.render(ev)
  local b = ui.builder()
  b:add('hydra · ', 'HydraHeader'):add('evaluation ' .. ev.id, 'HydraTitle'):add(' · ', 'HydraHeader')
  b:add(ev.status, 'HydraAgentState'):newline()
  b:line(M.progress_text(ev), 'HydraTitle')
  local about = {}
  if type(ev.agents) == 'table' and #ev.agents > 0 then
    table.insert(about, 'agents: ' .. table.concat(ev.agents, ', '))
  end
  if type(ev.samples) == 'number' then
    table.insert(about, util.plural(ev.samples, 'sample') .. ' each')
  end
  if type(ev.passK) == 'table' and #ev.passK > 0 then
    table.insert(about, pass_k_text(ev.passK))
  end
  if type(ev.cases) == 'number' then
    table.insert(about, util.plural(ev.cases, 'case'))
  end
  if #about > 0 then
    b:line(table.concat(about, ' · '), 'HydraHeader')
  end
  b:line('report: ' .. (ev.report or '?'), 'HydraHeader')
  if ev.status == 'interrupted' then
    b:line('hydra serve exited before the evaluation was over: its report keeps the samples that finished', 'HydraError')
  end
  b:line(string.rep('─', 40), 'HydraHeader')
  b:line('')
  if ev.text then
    add_report_text(b, ev.text)
    b:line('')
  elseif ev.report_error then
    b:line('The report could not be read: ' .. ui.one_line(ev.report_error), 'HydraError')
    b:line('')
  elseif ev.status == 'completed' or ev.status == 'cancelled' then
    b:line('Reading the report…', 'HydraMuted')
    b:line('')
  end
  b:line('Samples', 'HydraTitle')
  local samples = M.sorted_samples(ev.results, ev.agents)
  if #samples == 0 then
    b:line('  No sample has finished yet.', 'HydraMuted')
  end
  add_samples(b, samples)
  add_help(b, ev.status == 'running')
  return b.lines, b.highlights
end

--- The buffer of a report read with hydra/evalReport (`answer`: its result,
--- {path, report, text}): lines and highlights.
function M.render_report(answer)
  local report = type(answer.report) == 'table' and answer.report or {}
  local b = ui.builder()
  b:add('hydra · ', 'HydraHeader'):add('eval report ' .. tostring(opt(report.name) or '?'), 'HydraTitle')
  b:add(' · ', 'HydraHeader')
  b:add(present(report.finishedAt) and 'finished' or 'not finished', 'HydraAgentState'):newline()
  b:line('report: ' .. tostring(opt(answer.path) or '?'), 'HydraHeader')
  b:line(string.rep('─', 40), 'HydraHeader')
  b:line('')
  if present(answer.text) then
    add_report_text(b, answer.text)
    b:line('')
  end
  local results, agents = {}, {}
  for _, s in ipairs(type(report.samples) == 'table' and report.samples or {}) do
    results[sample_key(s)] = s
  end
  for _, a in ipairs(type(report.agents) == 'table' and report.agents or {}) do
    table.insert(agents, a.agent)
  end
  b:line('Samples', 'HydraTitle')
  local samples = M.sorted_samples(results, agents)
  if #samples == 0 then
    b:line('  No sample in this report.', 'HydraMuted')
  end
  add_samples(b, samples)
  add_help(b, false)
  return b.lines, b.highlights
end

-- View ------------------------------------------------------------------

--- The key (ui.find_buffer) of the buffer of evaluation `eval_id`.
function M.view_key(eval_id)
  return 'hydra://eval/' .. eval_id
end

--- The key of the buffer showing the report at `path` (:HydraEvalReport).
function M.report_key(path)
  return 'hydra://eval-report/' .. path
end

--- Draws the buffer of `ev` again, when it has one.
function M.refresh_view(ev)
  local buf = ui.find_buffer(M.view_key(ev.id))
  if buf then
    ui.fill(buf, M.render(ev))
  end
end

-- Shows `buf` alone: in the window that shows it already, else in a tab of
-- its own, at its first line.
local function open(buf)
  local wins = vim.fn.win_findbuf(buf)
  if #wins > 0 then
    vim.api.nvim_set_current_win(wins[1])
  else
    vim.cmd('tab sbuffer ' .. buf)
    ui.set_view_window_options(0)
    vim.api.nvim_win_set_cursor(0, { 1, 0 })
  end
  return buf
end

local function view_buffer(ev)
  local key = M.view_key(ev.id)
  local buf = ui.find_buffer(key)
  if buf then
    return buf
  end
  buf = ui.scratch_buffer('hydra: evaluation ' .. ev.id, 'hydraeval', key)
  vim.bo[buf].modifiable = false
  vim.api.nvim_buf_set_var(buf, 'hydra_eval', ev.id)
  vim.api.nvim_buf_set_var(buf, 'hydra_root', ev.root)
  local keys = config.options.keymaps
  local root, id = ev.root, ev.id
  ui.map(buf, keys.cancel, function()
    M.cancel(root, id)
  end, 'Cancel the evaluation')
  ui.map(buf, keys.close, ui.close_window, 'Close')
  return buf
end

--- Opens the buffer of evaluation `ev`, drawn, in a tab of its own (or the
--- window that shows it). Returns the buffer.
function M.open(ev)
  local buf = view_buffer(ev)
  M.refresh_view(ev)
  return open(buf)
end

--- Opens a report hydra/evalReport answered (`answer`: {path, report,
--- text}) in a buffer of its own, in a tab. Returns the buffer.
function M.open_report(root, answer)
  local path = tostring(opt(answer.path) or '?')
  local key = M.report_key(path)
  local buf = ui.find_buffer(key)
  if not buf then
    local tail = vim.fn.fnamemodify(path, ':t')
    buf = ui.scratch_buffer({ 'hydra: eval report ' .. tail, 'hydra: eval report ' .. path }, 'hydraeval', key)
    vim.api.nvim_buf_set_var(buf, 'hydra_root', root)
    ui.map(buf, config.options.keymaps.close, ui.close_window, 'Close')
  end
  ui.fill(buf, M.render_report(answer))
  return open(buf)
end

-- Notifications ----------------------------------------------------------

local function read_report(ev)
  client.request(ev.root, protocol.eval_report, { evalId = ev.id, format = 'text' }, function(err, result)
    if err then
      ev.report_error = type(err) == 'table' and err.message or tostring(err)
      client.notify_error(err, 'the report of evaluation ' .. ev.id)
    else
      ev.text = opt(result.text) or ''
      ev.report = opt(result.path) or ev.report
      local report = type(result.report) == 'table' and result.report or {}
      -- A resumed evaluation's report holds the samples of the runs before.
      for _, s in ipairs(type(report.samples) == 'table' and report.samples or {}) do
        if not ev.results[sample_key(s)] then
          add_result(ev, s)
        end
      end
    end
    M.refresh_view(ev)
  end)
end

local function on_eval_sample(p, root)
  if type(p) ~= 'table' or not present(p.evalId) then
    return
  end
  local ev = ensure_eval(root, p.evalId, true)
  ev.done = tonumber(p.done) or ev.done
  ev.total = tonumber(p.total) or ev.total
  ev.solved = tonumber(p.solved) or ev.solved
  add_result(ev, p.sample)
  M.refresh_view(ev)
end

local function on_eval_finished(p, root)
  if type(p) ~= 'table' or not present(p.evalId) then
    return
  end
  local ev = ensure_eval(root, p.evalId)
  ev.status = opt(p.status) or 'completed'
  ev.report = opt(p.report) or ev.report
  ev.done = tonumber(p.done) or ev.done
  ev.total = tonumber(p.total) or ev.total
  ev.solved = tonumber(p.solved) or ev.solved
  M.refresh_view(ev)
  local text
  if ev.status == 'cancelled' then
    text = string.format(
      'hydra: evaluation %s cancelled after %d/%d samples (%d solved); report: %s',
      ev.id,
      ev.done or 0,
      ev.total or 0,
      ev.solved or 0,
      ev.report or '?'
    )
  else
    text = string.format(
      'hydra: evaluation %s %s: %d/%d solved; report: %s',
      ev.id,
      ev.status,
      ev.solved or 0,
      ev.total or 0,
      ev.report or '?'
    )
  end
  vim.notify(text, vim.log.levels.INFO)
  read_report(ev)
end

local function on_server_exited(_, root)
  for _, ev in pairs(M.evals) do
    if ev.root == root and ev.status == 'running' then
      ev.status = 'interrupted'
      M.refresh_view(ev)
    end
  end
end

client.on(protocol.eval_sample, on_eval_sample)
client.on(protocol.eval_finished, on_eval_finished)
client.on(client.server_exited, on_server_exited)

-- Requests --------------------------------------------------------------

--- Puts a broken eval set's place (EvalSetError's data: {file, line,
--- column, message}; line and column 0 when unknown) in the quickfix list,
--- and opens it. A set that is not there has no place to go to.
function M.list_set_error(data)
  if type(data) ~= 'table' or type(data.file) ~= 'string' or vim.fn.filereadable(data.file) == 0 then
    return
  end
  local line, column = tonumber(data.line) or 0, tonumber(data.column) or 0
  vim.fn.setqflist({}, ' ', {
    title = 'hydra: the eval set ' .. data.file .. ' is broken',
    items = {
      {
        filename = data.file,
        lnum = line,
        col = column,
        text = tostring(opt(data.message) or 'the eval set is broken'),
        type = 'E',
      },
    },
  })
  vim.cmd('botright copen')
end

--- Why hydra refused an evaluation, in words: its own message (for a broken
--- eval set "FILE:LINE:COLUMN: ..."; for an agent that cannot run here,
--- without the whole PATH it looked in), or what a hydra without an
--- evaluation mode means.
function M.refusal_text(err)
  if type(err) ~= 'table' then
    return tostring(err)
  end
  if err.code == protocol.errors.method_not_found then
    return 'this hydra has no evaluation mode (hydra/evalRun): use a newer hydra'
  end
  if err.code == protocol.errors.agent_unavailable and type(err.message) == 'string' then
    return ui.short_problem(err.message) or err.message
  end
  local data = type(err.data) == 'table' and err.data or nil
  if err.code == protocol.errors.eval_set_error and data and type(data.file) == 'string' then
    local where = string.format('%s:%d:%d', data.file, tonumber(data.line) or 0, tonumber(data.column) or 0)
    -- hydra's message names the place; one that does not gets it here.
    if not (err.message or ''):find(data.file, 1, true) then
      return where .. ': ' .. tostring(opt(data.message) or err.message)
    end
  end
  return err.message or 'hydra refused the evaluation'
end

--- Starts an evaluation in `root`: params of hydra/evalRun ({set, agents?,
--- samples?, passK?, out?, resume?}). Opens its buffer once hydra answered
--- and calls callback(err, evaluation).
function M.start(root, params, callback)
  client.request(root, protocol.eval_run, params, function(err, result)
    if err then
      if err.code == protocol.errors.eval_set_error then
        M.list_set_error(err.data)
      end
      vim.notify('hydra: the evaluation did not start: ' .. M.refusal_text(err), vim.log.levels.ERROR)
      if callback then
        callback(err, nil)
      end
      return
    end
    local ev = ensure_eval(root, result.evalId, true)
    ev.name = opt(result.name)
    ev.report = opt(result.report) or ev.report
    ev.cases = tonumber(result.cases)
    ev.agents = type(result.agents) == 'table' and result.agents or {}
    ev.samples = tonumber(result.samples)
    ev.passK = type(result.passK) == 'table' and result.passK or {}
    ev.total = tonumber(result.total) or ev.total
    -- Samples may have been reported before the answer was read.
    ev.done = math.max(tonumber(result.done) or 0, ev.done or 0)
    ev.solved = ev.solved or 0
    M.open(ev)
    vim.notify(
      string.format(
        'hydra: evaluation %s started: %s on %s, %s',
        ev.id,
        ev.name or '?',
        table.concat(ev.agents, ', '),
        util.plural(ev.total or 0, 'sample')
      ),
      vim.log.levels.INFO
    )
    if callback then
      callback(nil, ev)
    end
  end)
end

--- Cancels evaluation `eval_id` of `root`; callback(err, result) once hydra
--- answered ({cancelled}). It ends with hydra/evalFinished, "cancelled".
function M.cancel(root, eval_id, callback)
  client.request(root, protocol.eval_cancel, { evalId = eval_id }, function(err, result)
    if err then
      client.notify_error(err, 'cancel')
    elseif result.cancelled then
      vim.notify('hydra: cancelled evaluation ' .. eval_id, vim.log.levels.INFO)
    else
      vim.notify('hydra: nothing to cancel: evaluation ' .. eval_id .. ' had already finished', vim.log.levels.INFO)
    end
    if callback then
      callback(err, result)
    end
  end)
end

--- Reads a report with hydra/evalReport ({report?, evalId?}; neither: the
--- newest under .hydra/evals) rendered as text, and opens it. callback(err,
--- buf) once shown.
function M.report(root, params, callback)
  params = vim.tbl_extend('force', params or {}, { format = 'text' })
  client.request(root, protocol.eval_report, params, function(err, result)
    if err then
      client.notify_error(err, 'eval report')
      if callback then
        callback(err, nil)
      end
      return
    end
    local buf = M.open_report(root, result)
    if callback then
      callback(nil, buf)
    end
  end)
end

return M
