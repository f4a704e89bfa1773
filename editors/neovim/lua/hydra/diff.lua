-- Reviewing an agent's changes: its changed files in the quickfix list, and a
-- tab with the base and agent versions of one file side by side in diff mode.
-- The versions come from hydra/diff (git's objects, never a worktree on
-- disk), fetched when a file is first shown. Going to another quickfix entry
-- (:cnext, <CR> in the list) shows that file's pair in the same tab.

local client = require('hydra.client')
local config = require('hydra.config')
local protocol = require('hydra.protocol')
local ui = require('hydra.ui')

local M = {}

-- agent-version buffer -> { root, raceId, agentId, path, base_buf, agent_buf, loaded }
local pairs_by_buf = {}
-- Set while this module moves buffers between windows, so that its own
-- BufWinEnter handler does not rearrange the tab again.
local arranging = false

--- The keys (ui.find_buffer) of the buffers holding an agent's version and
--- the base version of `path` (an agent id never contains '~', so the two
--- cannot collide).
function M.agent_key(race_id, agent_id, path)
  return 'hydra://' .. race_id .. '/' .. agent_id .. '/' .. path
end

function M.base_key(race_id, agent_id, path)
  return 'hydra://' .. race_id .. '/' .. agent_id .. '~base/' .. path
end

-- A name for people, "careful: cart.py": a tab label shortens every folder
-- of a buffer's name to its first letter, so the names hold no '/'. When
-- another buffer has it (the same file name in another folder, the same
-- agent in another race), the folder, then the race, tell them apart.
local function titles(race_id, agent_id, path, extra)
  local file = vim.fn.fnamemodify(path, ':t')
  local folder = vim.fn.fnamemodify(path, ':h')
  local first = agent_id .. ': ' .. file
  local notes = extra and { extra } or {}
  local out = { first .. (#notes > 0 and (' (' .. table.concat(notes, ', ') .. ')') or '') }
  if folder ~= '.' and folder ~= '' then
    table.insert(notes, 'in ' .. (folder:gsub('/', ' › ')))
    table.insert(out, first .. ' (' .. table.concat(notes, ', ') .. ')')
  end
  table.insert(notes, 'race ' .. race_id)
  table.insert(out, first .. ' (' .. table.concat(notes, ', ') .. ')')
  return out
end

--- The names of the buffers holding an agent's version and the base version
--- of `path`, in the order they are tried (ui.scratch_buffer): "careful:
--- cart.py" and "careful: cart.py (base)", what a tab label shows.
function M.agent_title(race_id, agent_id, path)
  return titles(race_id, agent_id, path, nil)
end

function M.base_title(race_id, agent_id, path)
  return titles(race_id, agent_id, path, 'base')
end

local function version_buffer(key, name, path)
  local buf = ui.find_buffer(key)
  if buf then
    return buf
  end
  buf = ui.scratch_buffer(name, nil, key)
  vim.bo[buf].modifiable = false
  -- Highlight it as the file it is a version of.
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent! doautocmd filetypedetect BufRead ' .. vim.fn.fnameescape(path))
  end)
  return buf
end

local function version_lines(result, side)
  local text = result[side]
  if text == nil or text == vim.NIL then
    return {}
  end
  if result.binary or result.encoding ~= 'utf-8' then
    return { string.format('(%s: not shown here)', result.binary and 'binary file' or 'not UTF-8 text') }
  end
  return ui.text_lines(text)
end

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
end

local function load(pair)
  if pair.loaded or pair.loading then
    return
  end
  pair.loading = true
  local params = { raceId = pair.raceId, agentId = pair.agentId, path = pair.path }
  client.request(pair.root, protocol.diff, params, function(err, result)
    pair.loading = false
    if err then
      client.notify_error(err, 'the versions of ' .. pair.path)
      return
    end
    pair.loaded = true
    set_lines(pair.base_buf, version_lines(result, 'base'))
    set_lines(pair.agent_buf, version_lines(result, 'agent'))
    for _, win in ipairs(vim.fn.win_findbuf(pair.agent_buf)) do
      vim.api.nvim_win_call(win, function()
        vim.cmd('diffupdate')
      end)
    end
  end)
end

local function is_review_tab()
  local ok, value = pcall(vim.api.nvim_tabpage_get_var, 0, 'hydra_review')
  return ok and value == true
end

local function new_review_tab()
  vim.cmd('tabnew')
  local empty = vim.api.nvim_get_current_buf()
  vim.api.nvim_tabpage_set_var(0, 'hydra_review', true)
  return empty
end

local function drop_if_empty(buf)
  if
    vim.api.nvim_buf_is_valid(buf)
    and vim.api.nvim_buf_get_name(buf) == ''
    and not vim.bo[buf].modified
    and #vim.fn.win_findbuf(buf) == 0
  then
    vim.api.nvim_buf_delete(buf, {})
  end
end

--- Shows `pair` in window `win` of the current tab: the base version on the
--- left, the agent's on the right, in diff mode. Other windows of the tab
--- (but the quickfix list) are closed.
local function show_pair(pair, win)
  arranging = true
  local ok, err = pcall(function()
    vim.api.nvim_set_current_win(win)
    -- A buffer hidden while in diff mode stays in the tab's diff (unless
    -- 'diffopt' has "hiddenoff"): the previous pair would be diffed against
    -- this one and every line would show as changed. `:diffoff!` takes every
    -- buffer of this tab, hidden ones too, out of the diff first.
    vim.cmd('diffoff!')
    vim.api.nvim_win_set_buf(win, pair.agent_buf)
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if w ~= win and vim.fn.getwinvar(w, '&buftype') ~= 'quickfix' then
        vim.api.nvim_win_close(w, true)
      end
    end
    vim.cmd('leftabove vsplit')
    local base_win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(base_win, pair.base_buf)
    for _, w in ipairs({ base_win, win }) do
      vim.api.nvim_win_call(w, function()
        vim.cmd('diffthis')
      end)
    end
    vim.api.nvim_set_current_win(win)
  end)
  arranging = false
  if not ok then
    error(err)
  end
  load(pair)
end

local function on_agent_buffer_shown(pair)
  if arranging then
    return
  end
  local win = vim.api.nvim_get_current_win()
  -- Rearranging windows inside BufWinEnter confuses the command that is
  -- still displaying the buffer: do it right after.
  vim.schedule(function()
    if not (vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == pair.agent_buf) then
      return
    end
    client.guarded(function()
      if is_review_tab() and vim.api.nvim_get_current_win() == win then
        show_pair(pair, win)
      else
        -- Reached from another tab (the quickfix list is global): review it
        -- in a tab of its own rather than closing the user's windows.
        local empty = new_review_tab()
        show_pair(pair, vim.api.nvim_get_current_win())
        drop_if_empty(empty)
      end
    end)
  end)
end

local function ensure_pair(root, race_id, agent_id, path)
  local agent_buf =
    version_buffer(M.agent_key(race_id, agent_id, path), M.agent_title(race_id, agent_id, path), path)
  local pair = pairs_by_buf[agent_buf]
  if pair then
    return pair
  end
  pair = {
    root = root,
    raceId = race_id,
    agentId = agent_id,
    path = path,
    agent_buf = agent_buf,
    base_buf = version_buffer(M.base_key(race_id, agent_id, path), M.base_title(race_id, agent_id, path), path),
  }
  pairs_by_buf[agent_buf] = pair
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = agent_buf,
    callback = function()
      on_agent_buffer_shown(pair)
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = agent_buf,
    callback = function()
      pairs_by_buf[agent_buf] = nil
    end,
  })
  local close = config.options.keymaps.close
  for _, buf in ipairs({ agent_buf, pair.base_buf }) do
    vim.api.nvim_buf_set_var(buf, 'hydra_root', root)
    ui.map(buf, close, ui.close_window, 'Close')
  end
  return pair
end

--- The pair shown in (or belonging to) buffer `buf`, if any: for the specs and other plugins.
function M.pair_of(buf)
  return pairs_by_buf[buf]
end

local function describe(file)
  if file.binary then
    return file.status .. ' (binary)'
  end
  local text = string.format('%s +%d -%d', file.status, file.additions or 0, file.deletions or 0)
  if file.oldPath and file.oldPath ~= vim.NIL then
    text = text .. ' (from ' .. file.oldPath .. ')'
  end
  return text
end

--- Lists what `agent_id` changed in race `race_id` in the quickfix list and
--- opens a review tab on the first file. callback(err, files) when done.
function M.open(root, race_id, agent_id, callback)
  callback = callback or function() end
  local params = { raceId = race_id, agentId = agent_id }
  client.request(root, protocol.diff, params, function(err, result)
    if err then
      client.notify_error(err, 'diff of ' .. agent_id)
      callback(err, nil)
      return
    end
    local files = result.files or {}
    if #files == 0 then
      vim.notify('hydra: ' .. agent_id .. ' changed nothing', vim.log.levels.INFO)
      callback(nil, files)
      return
    end
    local items = {}
    local first
    for _, file in ipairs(files) do
      local pair = ensure_pair(root, race_id, agent_id, file.path)
      first = first or pair
      table.insert(items, { bufnr = pair.agent_buf, module = file.path, lnum = 1, text = describe(file) })
    end
    vim.fn.setqflist({}, ' ', {
      title = string.format('hydra: %s changed %d file(s), +%d -%d (race %s)', agent_id, #files, result.additions or 0, result.deletions or 0, race_id),
      items = items,
    })
    local empty = new_review_tab()
    local main = vim.api.nvim_get_current_win()
    vim.cmd('botright copen')
    arranging = true
    vim.api.nvim_set_current_win(main)
    arranging = false
    show_pair(first, main)
    drop_if_empty(empty)
    callback(nil, files)
  end)
end

return M
