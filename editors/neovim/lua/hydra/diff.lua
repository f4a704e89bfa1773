-- Reviewing an agent's changes, diffview-like: a tab with a narrow panel of
-- the files the agent changed on the left, and beside it one file at a time
-- in diff mode: the file in your working tree (your own buffer, editable) on
-- the left and the agent's version (read-only) on the right, so that `do`,
-- `dp` and :diffget take single hunks of the agent's change into your file.
-- The files are also in the quickfix list: :cnext, :cc or <CR> in the list
-- show that file's pair in the same tab, as <CR> in the panel does.
--
-- Comparing two agents shows, for each file either of them changed, the
-- first agent's version on the left and the second's on the right, both
-- read-only. Agents' versions come from hydra/diff (git's objects, never a
-- worktree on disk), fetched when a file is first shown.

local client = require('hydra.client')
local config = require('hydra.config')
local findings = require('hydra.findings')
local protocol = require('hydra.protocol')
local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

-- right-hand buffer of a pair -> the pair: { review, path, file, right_buf,
-- left_buf (a version buffer) or worktree (a path), loaded, loading }
local pairs_by_buf = {}
-- panel buffer -> the review it lists
local reviews_by_panel = {}
-- Set while this module moves buffers between windows, so that its own
-- BufWinEnter handler does not rearrange the tab again.
local arranging = false

--- The key (ui.find_buffer) of the buffer holding an agent's version of
--- `path`.
function M.agent_key(race_id, agent_id, path)
  return 'hydra://' .. race_id .. '/' .. agent_id .. '/' .. path
end

--- The key of the buffer holding `agent_id`'s version of `path` when it is
--- compared with `other`'s (an agent id never contains '~').
function M.compare_key(race_id, agent_id, other, path)
  return 'hydra://' .. race_id .. '/' .. agent_id .. '~vs~' .. other .. '/' .. path
end

--- The key of the panel listing the files of a review: of one agent, or of
--- two compared.
function M.panel_key(race_id, agents)
  return 'hydra://' .. race_id .. '/' .. table.concat(agents, '~vs~') .. '~files'
end

-- A name for people, "careful: cart.py": a tab label shortens every folder
-- of a buffer's name to its first letter, so the names hold no '/'. When
-- another buffer has it (the same file name in another folder, the same
-- agent in another race), the folder, then the race, tell them apart.
local function titles(race_id, agent_id, path, extra)
  -- The agent named the file: a tab label shows its control characters, never passes them on.
  path = ui.visible(path)
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

--- The names of the buffer holding an agent's version of `path`, in the
--- order they are tried (ui.scratch_buffer): "careful: cart.py", what a tab
--- label shows.
function M.agent_title(race_id, agent_id, path)
  return titles(race_id, agent_id, path, nil)
end

--- The names of `agent_id`'s version of `path` compared with `other`'s:
--- "careful: cart.py (vs sprawler)".
function M.compare_title(race_id, agent_id, other, path)
  return titles(race_id, agent_id, path, 'vs ' .. other)
end

-- The buffer holding `agent_id`'s version of `path`, alone or compared
-- with `other`'s; made when there is none.
local function version_buffer(race_id, agent_id, path, other)
  local key = other and M.compare_key(race_id, agent_id, other, path) or M.agent_key(race_id, agent_id, path)
  local buf = ui.find_buffer(key)
  if buf then
    return buf
  end
  local name = other and M.compare_title(race_id, agent_id, other, path) or M.agent_title(race_id, agent_id, path)
  buf = ui.scratch_buffer(name, nil, key)
  vim.bo[buf].modifiable = false
  -- Whose version it holds: the agent's build and lint findings go on it.
  vim.api.nvim_buf_set_var(buf, 'hydra_version', { race = race_id, agent = agent_id, path = path })
  -- Highlight it as the file it is a version of.
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('silent! doautocmd filetypedetect BufRead ' .. vim.fn.fnameescape(path))
  end)
  return buf
end

local function version_lines(result, side)
  local text = result[side]
  if not util.present(text) then
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

local function diffupdate(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    vim.api.nvim_win_call(win, function()
      vim.cmd('diffupdate')
    end)
  end
end

-- Fills the pair's version buffers. One agent: its version of the file.
-- Two: each one's version, and for the one that did not change the file,
-- the base version (which the other's answer holds).
local function load(pair)
  if pair.loaded or pair.loading then
    return
  end
  pair.loading = true
  local review = pair.review
  local changed = vim.tbl_filter(function(agent)
    return pair.file.changes[agent] ~= nil
  end, review.agents)
  local answers, waiting, failed = {}, #changed, false
  for _, agent in ipairs(changed) do
    local params = { raceId = review.raceId, agentId = agent, path = pair.path }
    client.request(review.root, protocol.diff, params, function(err, result)
      waiting = waiting - 1
      if err then
        if not failed then
          client.notify_error(err, 'the versions of ' .. pair.path)
        end
        failed = true
      else
        answers[agent] = result
      end
      if waiting > 0 then
        return
      end
      pair.loading = false
      if failed then
        return
      end
      pair.loaded = true
      local any = answers[changed[1]]
      for i, side in ipairs(review.agents) do
        local buf = (#review.agents == 1 or i == 2) and pair.right_buf or pair.left_buf
        local lines = answers[side] and version_lines(answers[side], 'agent') or version_lines(any, 'base')
        set_lines(buf, lines)
        findings.apply(buf)
      end
      diffupdate(pair.right_buf)
    end)
  end
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

local status_letters = { added = 'A', modified = 'M', deleted = 'D', renamed = 'R', typechange = 'T' }
local status_groups = { added = 'HydraAdded', deleted = 'HydraRemoved' }

-- The panel's lines: a heading, then one line per file, "▸ M lib.sh +1 -1"
-- (the file shown marked), and the keys. Returns lines, highlights and the
-- path on each line.
local function panel_lines(review)
  local b = ui.builder()
  local file_at = {}
  if #review.agents == 1 then
    b:line(review.agents[1], 'HydraTitle')
    b:line(string.format('%d file(s)  +%d -%d', #review.files, review.additions, review.deletions), 'HydraMuted')
  else
    b:line(review.agents[1] .. ' vs ' .. review.agents[2], 'HydraTitle')
    b:line(string.format('%d file(s) either changed', #review.files), 'HydraMuted')
  end
  b:line('')
  for _, file in ipairs(review.files) do
    local current = file.path == review.current
    b:add(current and '▸ ' or '  ', current and 'HydraCurrentFile' or nil)
    for _, agent in ipairs(review.agents) do
      local change = file.changes[agent]
      if change then
        b:add(status_letters[change.status] or '?', status_groups[change.status] or 'HydraChanged')
      else
        b:add('·', 'HydraMuted')
      end
    end
    b:add(' ')
    b:add(file.path, current and 'HydraCurrentFile' or nil)
    if #review.agents == 1 then
      local change = file.changes[review.agents[1]]
      if change.binary then
        b:add('  binary', 'HydraMuted')
      else
        b:add('  ')
        b:add('+' .. (change.additions or 0), 'HydraAdded')
        b:add(' ')
        b:add('-' .. (change.deletions or 0), 'HydraRemoved')
      end
      if util.present(change.oldPath) then
        b:add('  ← ' .. change.oldPath, 'HydraMuted')
      end
    end
    b:newline()
    file_at[#b.lines] = file.path
  end
  b:line('')
  -- What the letters say, in lines as narrow as the panel: one column per
  -- agent, in the heading's order.
  if #review.agents > 1 then
    b:line('1st letter: ' .. review.agents[1], 'HydraMuted')
    b:line('2nd letter: ' .. review.agents[2], 'HydraMuted')
  end
  b:line('A added · M modified', 'HydraMuted')
  b:line('D deleted · R renamed', 'HydraMuted')
  b:line('T type changed' .. (#review.agents > 1 and ' · · none' or ''), 'HydraMuted')
  local keys = { '<CR> show' }
  if config.options.keymaps.close then
    table.insert(keys, config.options.keymaps.close .. ' close')
  end
  b:line(table.concat(keys, ' · '), 'HydraMuted')
  return b.lines, b.highlights, file_at
end

local function render_panel(review)
  local buf = review.panel_buf
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    return
  end
  local lines, highlights, file_at = panel_lines(review)
  ui.fill(buf, lines, highlights)
  review.file_at = file_at
  -- The panel's cursor stays on the file shown, where <CR> acts, never on the heading.
  for line, path in pairs(file_at) do
    if path == review.current then
      for _, win in ipairs(vim.fn.win_findbuf(buf)) do
        vim.api.nvim_win_set_cursor(win, { line, 0 })
      end
    end
  end
end

local function panel_width(review)
  local lines = panel_lines(review)
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 1)
  end
  return math.min(width, 40, math.max(math.floor(vim.o.columns / 3), 20))
end

-- Opens the review's panel at the far left of the current tab; returns its window.
local function open_panel(review)
  vim.cmd('topleft vsplit')
  local win = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(win, review.panel_buf)
  vim.api.nvim_win_set_width(win, panel_width(review))
  vim.wo[win].winfixwidth = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = 'no'
  vim.wo[win].foldcolumn = '0'
  vim.wo[win].wrap = false
  vim.wo[win].cursorline = true
  return win
end

-- Makes the file shown the current entry of the review's quickfix list,
-- so that :cnext and :cprevious go on from it.
local function sync_quickfix(review, path)
  if not review.qf_id then
    return
  end
  local list = vim.fn.getqflist({ id = review.qf_id, idx = 0 })
  if list.id ~= review.qf_id then
    return
  end
  for i, file in ipairs(review.files) do
    if file.path == path and list.idx ~= i then
      vim.fn.setqflist({}, 'a', { id = review.qf_id, idx = i })
    end
  end
end

--- Shows `pair` in window `win` of the current tab, the panel of its review
--- at the far left: your file (or the first agent's version) in a window
--- on the left, the agent's version in `win` on the right, in diff mode.
--- Other windows of the tab (but the panel and the quickfix list) are closed.
local function show_pair(pair, win)
  local review = pair.review
  arranging = true
  local ok, err = pcall(function()
    vim.api.nvim_set_current_win(win)
    -- A buffer hidden while in diff mode stays in the tab's diff (unless
    -- 'diffopt' has "hiddenoff"): the previous pair would be diffed against
    -- this one and every line would show as changed. `:diffoff!` takes every
    -- buffer of this tab, hidden ones too, out of the diff first, and gives
    -- your file's window its own options back.
    vim.cmd('diffoff!')
    vim.api.nvim_win_set_buf(win, pair.right_buf)
    local panel_win
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if w ~= win then
        local buf = vim.api.nvim_win_get_buf(w)
        if buf == review.panel_buf and not panel_win then
          panel_win = w
        elseif vim.bo[buf].buftype ~= 'quickfix' then
          vim.api.nvim_win_close(w, true)
        end
      end
    end
    if not panel_win then
      open_panel(review)
      vim.api.nvim_set_current_win(win)
    end
    vim.cmd('leftabove vsplit')
    local left_win = vim.api.nvim_get_current_win()
    if pair.left_buf then
      vim.api.nvim_win_set_buf(left_win, pair.left_buf)
    else
      -- Your own buffer of the file, as :edit gives it (loaded once, with
      -- its unsaved changes if it has any); a file the agent added is a new one.
      vim.cmd('keepalt edit ' .. vim.fn.fnameescape(pair.worktree))
    end
    for _, w in ipairs({ left_win, win }) do
      vim.api.nvim_win_call(w, function()
        vim.cmd('diffthis')
      end)
    end
    vim.cmd('wincmd =')
    vim.api.nvim_set_current_win(win)
  end)
  arranging = false
  if not ok then
    error(err)
  end
  review.current = pair.path
  render_panel(review)
  sync_quickfix(review, pair.path)
  load(pair)
end

local function on_right_buffer_shown(pair)
  if arranging then
    return
  end
  local win = vim.api.nvim_get_current_win()
  -- Rearranging windows inside BufWinEnter confuses the command that is
  -- still displaying the buffer: do it right after.
  vim.schedule(function()
    if not (vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == pair.right_buf) then
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

-- Closes the review's tab (or, in the last tab, its windows but one),
-- taking your file out of diff mode first.
local function close_review()
  vim.cmd('diffoff!')
  if vim.fn.tabpagenr('$') > 1 then
    vim.cmd('tabclose')
  else
    vim.cmd('silent! only')
    vim.cmd('enew')
  end
end

-- The window of the current tab that shows the right-hand side of one of
-- the review's pairs, or a new one right of everything.
local function right_window(review)
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local pair = pairs_by_buf[vim.api.nvim_win_get_buf(w)]
    if pair and pair.review == review then
      return w
    end
  end
  arranging = true
  vim.cmd('botright vsplit')
  arranging = false
  return vim.api.nvim_get_current_win()
end

local function panel_buffer(review)
  local key = M.panel_key(review.raceId, review.agents)
  local buf = ui.find_buffer(key)
  if not buf then
    local what = table.concat(review.agents, ' vs ')
    buf = ui.scratch_buffer('hydra: ' .. what .. ' files (race ' .. review.raceId .. ')', 'hydrafiles', key)
    vim.bo[buf].modifiable = false
    vim.api.nvim_buf_set_var(buf, 'hydra_root', review.root)
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      callback = function()
        reviews_by_panel[buf] = nil
      end,
    })
  end
  reviews_by_panel[buf] = review
  -- The keys find the review the panel lists now (a review opened again
  -- replaces the one before).
  ui.map(buf, '<CR>', function()
    local r = reviews_by_panel[buf]
    local path = r and r.file_at and r.file_at[vim.api.nvim_win_get_cursor(0)[1]]
    if path then
      client.guarded(show_pair, r.pairs[path], right_window(r))
    end
  end, "Show this file's diff")
  ui.map(buf, config.options.keymaps.close, close_review, 'Close the review')
  return buf
end

local function ensure_pair(review, file)
  local race_id, path = review.raceId, file.path
  local right_buf, left_buf
  if #review.agents == 1 then
    right_buf = version_buffer(race_id, review.agents[1], path)
  else
    local a, b = review.agents[1], review.agents[2]
    left_buf = version_buffer(race_id, a, path, b)
    right_buf = version_buffer(race_id, b, path, a)
  end
  local pair = pairs_by_buf[right_buf]
  if not pair then
    pair = { right_buf = right_buf, left_buf = left_buf }
    pairs_by_buf[right_buf] = pair
    vim.api.nvim_create_autocmd('BufWinEnter', {
      buffer = right_buf,
      callback = function()
        on_right_buffer_shown(pairs_by_buf[right_buf])
      end,
    })
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = right_buf,
      callback = function()
        pairs_by_buf[right_buf] = nil
      end,
    })
    local close = config.options.keymaps.close
    for _, buf in ipairs({ right_buf, left_buf }) do
      vim.api.nvim_buf_set_var(buf, 'hydra_root', review.root)
      ui.map(buf, close, ui.close_window, 'Close')
    end
  end
  -- The answer read now holds the latest list: its review replaces the one before.
  pair.review = review
  pair.path = path
  pair.file = file
  if not left_buf then
    -- A file the agent renamed is yours under its old name.
    local change = file.changes[review.agents[1]]
    local old = change.status == 'renamed' and util.opt(change.oldPath) or nil
    pair.worktree = review.root .. '/' .. (old or path)
  end
  review.pairs[path] = pair
  return pair
end

--- The pair shown in (or belonging to) buffer `buf`, if any: for the specs and other plugins.
function M.pair_of(buf)
  return pairs_by_buf[buf]
end

--- The review a panel buffer lists, if any.
function M.review_of_panel(buf)
  return reviews_by_panel[buf]
end

local function describe(file)
  if file.binary then
    return file.status .. ' (binary)'
  end
  local text = string.format('%s +%d -%d', file.status, file.additions or 0, file.deletions or 0)
  if util.present(file.oldPath) then
    text = text .. ' (from ' .. file.oldPath .. ')'
  end
  return text
end

-- Puts the review's files in the quickfix list and opens a review tab on
-- the first one.
local function open_review(review, title)
  review.pairs = {}
  review.panel_buf = panel_buffer(review)
  local items = {}
  for _, file in ipairs(review.files) do
    local pair = ensure_pair(review, file)
    local texts = {}
    for _, agent in ipairs(review.agents) do
      local change = file.changes[agent]
      local text = change and describe(change) or 'unchanged'
      table.insert(texts, #review.agents == 1 and text or (agent .. ': ' .. text))
    end
    table.insert(items, { bufnr = pair.right_buf, module = ui.visible(file.path), lnum = 1, text = table.concat(texts, '; ') })
  end
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  review.qf_id = vim.fn.getqflist({ id = 0 }).id
  local empty = new_review_tab()
  show_pair(review.pairs[review.files[1].path], vim.api.nvim_get_current_win())
  drop_if_empty(empty)
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
    local review = {
      root = root,
      raceId = race_id,
      agents = { agent_id },
      additions = result.additions or 0,
      deletions = result.deletions or 0,
      files = vim.tbl_map(function(file)
        return { path = file.path, changes = { [agent_id] = file } }
      end, files),
    }
    open_review(
      review,
      string.format('hydra: %s changed %d file(s), +%d -%d (race %s)', agent_id, #files, review.additions, review.deletions, race_id)
    )
    callback(nil, files)
  end)
end

--- Compares what agents `a` and `b` of race `race_id` made of each file
--- either of them changed, in the quickfix list and a review tab: a's
--- version on the left, b's on the right. callback(err, paths) when done.
function M.compare(root, race_id, a, b, callback)
  callback = callback or function() end
  if a == b then
    local err = { message = 'compare two different agents (' .. a .. ' twice)' }
    client.notify_error(err)
    return callback(err, nil)
  end
  local answers, waiting, failed = {}, 2, false
  for _, agent in ipairs({ a, b }) do
    client.request(root, protocol.diff, { raceId = race_id, agentId = agent }, function(err, result)
      waiting = waiting - 1
      if err and not failed then
        failed = true
        client.notify_error(err, 'diff of ' .. agent)
        callback(err, nil)
      end
      answers[agent] = result
      if waiting > 0 or failed then
        return
      end
      local by_path, paths = {}, {}
      for _, agent_id in ipairs({ a, b }) do
        for _, file in ipairs(answers[agent_id].files or {}) do
          if not by_path[file.path] then
            by_path[file.path] = { path = file.path, changes = {} }
            table.insert(paths, file.path)
          end
          by_path[file.path].changes[agent_id] = file
        end
      end
      if #paths == 0 then
        vim.notify('hydra: neither ' .. a .. ' nor ' .. b .. ' changed anything', vim.log.levels.INFO)
        return callback(nil, paths)
      end
      table.sort(paths)
      local review = {
        root = root,
        raceId = race_id,
        agents = { a, b },
        files = vim.tbl_map(function(path)
          return by_path[path]
        end, paths),
      }
      open_review(review, string.format('hydra: %s vs %s, %d file(s) either changed (race %s)', a, b, #paths, race_id))
      callback(nil, paths)
    end)
  end
end

return M
