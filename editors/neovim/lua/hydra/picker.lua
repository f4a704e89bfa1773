-- Picking the agents of a race in one step: a floating window listing every
-- agent hydra can race here (hydra/agents), the available ones first, each
-- with a box to tick. <Space> (or x) picks or drops the agent under the
-- cursor, + races it once more, - once fewer, <CR> races the agents picked
-- and q or <Esc> closes the list without racing. An agent that is not
-- available is listed with why, and refused when picked.

local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

local present = util.present

-- How many times one agent may be picked: one digit in its box.
local MAX_COUNT = 9

--- The agents of hydra/agents in the order the list shows them: the
--- available ones first, each group in hydra's order.
function M.order(agents)
  local list = {}
  for i, a in ipairs(agents or {}) do
    table.insert(list, { agent = a, order = i })
  end
  table.sort(list, function(a, b)
    if a.agent.available ~= b.agent.available then
      return a.agent.available == true
    end
    return a.order < b.order
  end)
  return vim.tbl_map(function(item)
    return item.agent
  end, list)
end

--- "[x]" for an agent picked once, "[3]" three times, "[ ]" not picked,
--- "[-]" for one that cannot be picked.
function M.box(agent, count)
  if not agent.available then
    return '[-]'
  elseif count == 0 then
    return '[ ]'
  elseif count == 1 then
    return '[x]'
  end
  return '[' .. count .. ']'
end

-- The list's lines, highlights and which agent (index into `list`) is on
-- each line (1-based).
local function render(list, counts)
  local width = 0
  for _, a in ipairs(list) do
    width = math.max(width, vim.fn.strdisplaywidth(a.name))
  end
  local b = ui.builder()
  b:line('Agents to race', 'HydraTitle')
  b:line('')
  local agent_at = {}
  for i, a in ipairs(list) do
    local name = a.name .. string.rep(' ', width - vim.fn.strdisplaywidth(a.name))
    if a.available then
      b:add('  ' .. M.box(a, counts[i]) .. ' ', counts[i] > 0 and 'HydraScoreGood' or nil)
      b:add(name, counts[i] > 0 and 'HydraTitle' or nil)
      local about = present(a.version) and a.version or a.adapter
      if present(about) and about ~= '' then
        b:add('  ' .. ui.one_line(about), 'HydraMuted')
      end
    else
      local why = ui.short_problem(a.problem)
      b:add('  ' .. M.box(a, 0) .. ' ' .. name, 'HydraMuted')
      b:add('  not available' .. (why and (': ' .. why) or ''), 'HydraError')
    end
    b:newline()
    agent_at[#b.lines] = i
  end
  b:line('')
  b:line('<Space> pick/drop · + once more · - once fewer · <CR> race · q cancel', 'HydraMuted')
  return b.lines, b.highlights, agent_at
end

--- The names to race: each agent picked, as many times as it was, in the
--- list's order.
function M.names(list, counts)
  local out = {}
  for i, a in ipairs(list) do
    for _ = 1, counts[i] or 0 do
      table.insert(out, a.name)
    end
  end
  return out
end

--- The key (ui.find_buffer) of the list's buffer for repository `root`.
function M.key(root)
  return 'hydra://' .. root .. '/agents'
end

--- Opens the list of `agents` (hydra/agents' answer) for repository `root`,
--- hydra.toml's available agents picked. on_pick(names) gets the agents to
--- race once the user confirms with <CR>; closing the list calls nothing.
--- Returns the list's buffer and window.
function M.open(root, agents, on_pick)
  local list = M.order(agents)
  local counts = {}
  for i, a in ipairs(list) do
    counts[i] = (a.available and a.configured) and 1 or 0
  end
  local lines, highlights, agent_at = render(list, counts)
  local buf, win = ui.open_float(M.key(root), lines, highlights, 'hydraagents', 'hydra: agents to race')
  for line = 1, #lines do
    if agent_at[line] then
      vim.api.nvim_win_set_cursor(win, { line, 0 })
      break
    end
  end

  local function redraw()
    local cursor = vim.api.nvim_win_get_cursor(win)
    lines, highlights, agent_at = render(list, counts)
    ui.fill(buf, lines, highlights)
    vim.api.nvim_win_set_cursor(win, cursor)
  end

  -- Calls fn(i) with the agent under the cursor, when it can be picked.
  local function on_agent(fn)
    return function()
      local i = agent_at[vim.api.nvim_win_get_cursor(win)[1]]
      if not i then
        return
      end
      local a = list[i]
      if not a.available then
        local why = present(a.problem) and a.problem or 'hydra cannot run it here'
        return vim.notify('hydra: ' .. a.name .. ' cannot race here: ' .. why, vim.log.levels.WARN)
      end
      fn(i)
      redraw()
    end
  end

  local toggle = on_agent(function(i)
    counts[i] = counts[i] > 0 and 0 or 1
  end)
  ui.map(buf, '<Space>', toggle, 'Pick or drop this agent')
  ui.map(buf, 'x', toggle, 'Pick or drop this agent')
  ui.map(buf, '+', on_agent(function(i)
    counts[i] = math.min(counts[i] + 1, MAX_COUNT)
  end), 'Race this agent once more')
  ui.map(buf, '-', on_agent(function(i)
    counts[i] = math.max(counts[i] - 1, 0)
  end), 'Race this agent once fewer')
  ui.map(buf, '<CR>', function()
    local names = M.names(list, counts)
    if #names == 0 then
      return vim.notify('hydra: pick at least one agent (<Space> on its line)', vim.log.levels.WARN)
    end
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
    on_pick(names)
  end, 'Race the agents picked')
  return buf, win
end

return M
