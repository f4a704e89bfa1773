-- An agent's output as a person reads it: each event its adapter read (its
-- words, tool calls and results, file changes, errors, its summary) as a line
-- with a highlight group. Output buffers render the events hydra/agentOutput
-- carries as they arrive; for an agent this editor did not watch, and for
-- :HydraLog, the same events come back from what hydra stored
-- (hydra/agentEvents), and the raw log from hydra/log.

local client = require('hydra.client')
local protocol = require('hydra.protocol')
local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

local present = util.present

-- `prefix` and `v` when `v` is there and not empty, else ''.
local function prefixed(v, prefix)
  return present(v) and v ~= '' and ((prefix or '') .. v) or ''
end

--- "tokens: 400 in, 80 out, 0 cached · $0.0040", or nil when `usage` says nothing.
function M.usage_text(usage)
  if not present(usage) then
    return nil
  end
  local parts = {}
  if present(usage.inputTokens) then
    table.insert(parts, usage.inputTokens .. ' in')
  end
  if present(usage.outputTokens) then
    table.insert(parts, usage.outputTokens .. ' out')
  end
  if present(usage.cachedInputTokens) then
    table.insert(parts, usage.cachedInputTokens .. ' cached')
  end
  local text = #parts > 0 and ('tokens: ' .. table.concat(parts, ', ')) or nil
  if present(usage.costUsd) then
    text = (text and (text .. ' · ') or '') .. string.format('$%.4f', usage.costUsd)
  end
  return text
end

local function non_nil(list)
  return vim.tbl_filter(function(p)
    return p ~= nil
  end, list)
end

--- One parsed event as (text, highlight group), the way a person reads an
--- agent's log; nil when it adds nothing worth a line.
function M.render_event(event)
  local kind = event.kind
  if kind == 'text' then
    return event.text or '', nil
  elseif kind == 'toolCall' then
    return '→ ' .. prefixed(event.tool) .. prefixed(util.first_line(event.detail), ' '), 'HydraToolCall'
  elseif kind == 'toolResult' then
    local text = '  ← ' .. (present(event.tool) and event.tool or 'result') .. prefixed(util.first_line(event.detail), ': ')
    if event.isError == true then
      return text .. ' (error)', 'HydraError'
    end
    return text, 'HydraToolResult'
  elseif kind == 'fileChange' then
    return '✎ ' .. (present(event.change) and event.change or 'change') .. ' ' .. prefixed(event.path), 'HydraFileChange'
  elseif kind == 'usage' then
    return '· ' .. (M.usage_text(event.usage) or 'usage'), 'HydraMuted'
  elseif kind == 'error' then
    return '✗ ' .. prefixed(event.text), 'HydraError'
  elseif kind == 'summary' then
    local warnings = present(event.warnings) and event.warnings or {}
    if
      not (present(event.turns) or M.usage_text(event.usage) or prefixed(event.text) ~= '' or event.isError == true or #warnings > 0)
    then
      -- Nothing beyond "it ended", which hydra/agentFinished says anyway.
      return nil, nil
    end
    local parts = { '■ ' .. (event.isError == true and 'ended with an error' or 'done') }
    if present(event.turns) then
      table.insert(parts, event.turns .. ' turns')
    end
    table.insert(parts, M.usage_text(event.usage))
    local lines = { table.concat(non_nil(parts), ' · ') }
    for _, w in ipairs(warnings) do
      table.insert(lines, '⚠ ' .. w)
    end
    if present(event.text) and event.text ~= '' then
      table.insert(lines, event.text)
    end
    return table.concat(lines, '\n'), event.isError == true and 'HydraError' or 'HydraSummary'
  end
  -- raw, and kinds a newer hydra may add: the text as it came.
  return prefixed(event.text) ~= '' and event.text or prefixed(event.detail), nil
end

--- The line an agent's output ends with: "■ failed · exit 3 · 0.2 s · tokens: ...".
function M.finished_line(status, exit_code, duration_ms, usage)
  local parts = { '■ ' .. status }
  if present(exit_code) then
    table.insert(parts, 'exit ' .. exit_code)
  end
  if present(duration_ms) then
    table.insert(parts, string.format('%.1f s', duration_ms / 1000))
  end
  table.insert(parts, M.usage_text(usage))
  return table.concat(non_nil(parts), ' · ')
end

-- Bytes of an agent's plain output kept to recognise its end in a summary.
M.tail_bytes = 32 * 1024

--- `tail` (what an agent printed so far, or nil) with `line` added, kept
--- to its last M.tail_bytes (whole lines).
function M.add_to_tail(tail, line)
  tail = (tail or '') .. line .. '\n'
  if #tail > M.tail_bytes then
    local cut = tail:find('\n', #tail - M.tail_bytes, true)
    tail = cut and tail:sub(cut + 1) or ''
  end
  return tail
end

--- Whether a summary's text only repeats the end of what the agent printed
--- (`tail`, M.add_to_tail's): a plain command or text CLI has no final
--- message of its own, and hydra stands the end of its output for one.
function M.repeats_tail(text, tail)
  if not present(text) or text == '' or not tail then
    return false
  end
  return vim.endswith(vim.trim(tail), vim.trim(text))
end

--- Stored events as entries { text, group }, in order. A summary that
--- repeats the agent's last words (or the end of its plain output) leaves
--- them out; stderr is marked.
function M.entries(events)
  local out, last_text, tail = {}, nil, nil
  for _, event in ipairs(events) do
    local plain = (event.kind == 'raw' or event.kind == 'text') and event.stream ~= 'stderr'
    if event.kind == 'summary' and present(event.text) and (event.text == last_text or M.repeats_tail(event.text, tail)) then
      event = vim.tbl_extend('force', event, { text = vim.NIL })
    elseif event.kind == 'text' then
      last_text = event.text
    end
    if plain and present(event.text) then
      tail = M.add_to_tail(tail, event.text)
    end
    local text, group = M.render_event(event)
    if text then
      table.insert(out, { text, group or (event.stream == 'stderr' and 'HydraStderr' or nil) })
    end
  end
  return out
end

--- Reads a whole log, a range at a time: callback(err, text).
function M.read_log(root, race_id, agent_id, stream, callback)
  local chunks = {}
  local function step(offset)
    local params = { raceId = race_id, agentId = agent_id, offset = offset, stream = stream }
    client.request(root, protocol.log, params, function(err, result)
      if err then
        return callback(err, nil)
      end
      table.insert(chunks, result.data)
      if result.nextOffset < result.totalSize and result.nextOffset > offset then
        step(result.nextOffset)
      else
        callback(nil, table.concat(chunks))
      end
    end)
  end
  step(0)
end

--- Every event hydra stored of an agent, a page at a time: callback(err, events).
function M.read_events(root, race_id, agent_id, callback)
  local events = {}
  local function step(offset)
    local params = { raceId = race_id, agentId = agent_id, offset = offset }
    client.request(root, protocol.agent_events, params, function(err, result)
      if err then
        return callback(err, nil)
      end
      vim.list_extend(events, result.events or {})
      if present(result.nextOffset) and result.nextOffset > offset then
        step(result.nextOffset)
      else
        callback(nil, events)
      end
    end)
  end
  step(0)
end

--- An agent's whole log as it printed it: callback(err, stdout, stderr).
function M.read_raw(root, race_id, agent_id, callback)
  M.read_log(root, race_id, agent_id, 'stdout', function(err, stdout)
    if err then
      return callback(err, nil, nil)
    end
    M.read_log(root, race_id, agent_id, 'stderr', function(err2, stderr)
      if err2 then
        return callback(err2, nil, nil)
      end
      callback(nil, stdout, stderr)
    end)
  end)
end

--- What hydra recorded of an agent, as entries: its stored events; for an
--- agent whose adapter read nothing of its output but how it ended (a plain
--- command: no event worth a line), its log, which is all there is, and
--- what its summaries add to it (hydra stands the end of a plain output for
--- a final message: that is in the log already). callback(err, entries).
function M.read(root, race_id, agent_id, callback)
  M.read_events(root, race_id, agent_id, function(err, events)
    if err then
      return callback(err, nil)
    end
    local entries = M.entries(events)
    local read = false
    for _, event in ipairs(events) do
      read = read or event.kind ~= 'summary'
    end
    if read and #entries > 0 then
      return callback(nil, entries)
    end
    M.read_raw(root, race_id, agent_id, function(err2, stdout, stderr)
      if err2 then
        return callback(err2, nil)
      end
      local out = {}
      for _, l in ipairs(ui.text_lines(stdout)) do
        table.insert(out, { l, nil })
      end
      for _, l in ipairs(ui.text_lines(stderr)) do
        table.insert(out, { l, 'HydraStderr' })
      end
      for _, event in ipairs(events) do
        if present(event.text) and stdout:find(vim.trim(event.text), 1, true) then
          event = vim.tbl_extend('force', event, { text = vim.NIL })
        end
        local text, group = M.render_event(event)
        if text then
          table.insert(out, { text, group })
        end
      end
      callback(nil, out)
    end)
  end)
end

return M
