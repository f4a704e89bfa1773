-- What the plugin draws: highlight groups, floating windows, the scoreboard
-- and the race list. Pure rendering from the server's answers; no requests.

local util = require('hydra.util')

local present = util.present

local M = {}

M.ns = vim.api.nvim_create_namespace('hydra')

-- Every group is defined with `default`, so a colour scheme or the user's
-- own `:highlight` wins. The score colours follow the seed: green above 80,
-- yellow from 50 to 80, red below 50.
local groups = {
  'highlight default link HydraScoreNone Comment',
  'highlight default link HydraTitle Title',
  'highlight default link HydraWinner Special',
  'highlight default link HydraHeader Comment',
  'highlight default link HydraAgentState Identifier',
  'highlight default link HydraToolCall Function',
  'highlight default link HydraToolResult Comment',
  'highlight default link HydraFileChange Type',
  'highlight default link HydraError ErrorMsg',
  'highlight default link HydraSummary Title',
  'highlight default link HydraMuted Comment',
  'highlight default link HydraStderr WarningMsg',
  'highlight default link HydraFlag WarningMsg',
}

-- Groups that take the score colours: green for what was added or merged,
-- red for what was removed, yellow for what changed.
local score_followers = {
  'highlight default link HydraMerged HydraScoreGood',
  'highlight default link HydraAdded HydraScoreGood',
  'highlight default link HydraRemoved HydraScorePoor',
  'highlight default link HydraChanged HydraScoreFair',
  'highlight default link HydraCurrentFile Visual',
}

local has_0_10 = vim.fn.has('nvim-0.10') == 1

-- Neovim 0.10's default colours have green, yellow and red diagnostics made
-- to be read on its floats, in dark and light: the scores use them, and the
-- floats keep NormalFloat. Before 0.10, NormalFloat is the completion menu's
-- magenta, on which green and yellow cannot be read: the floats take Normal's
-- colours, and the scores colours of their own for each 'background'
-- (the 256-colour ones for terminals without 'termguicolors').
local score_links = {
  HydraScoreGood = 'DiagnosticOk',
  HydraScoreFair = 'DiagnosticWarn',
  HydraScorePoor = 'DiagnosticError',
}
local score_colours = {
  dark = {
    HydraScoreGood = { '#3fb950', 10 },
    HydraScoreFair = { '#d29922', 11 },
    HydraScorePoor = { '#f85149', 9 },
  },
  light = {
    HydraScoreGood = { '#1a7f37', 28 },
    HydraScoreFair = { '#9a6700', 130 },
    HydraScorePoor = { '#cf222e', 124 },
  },
}
-- group -> the foreground this module gave it last, to tell its own
-- colours (replaced when 'background' changes) from the user's (kept).
local given = {}

local function foreground(group)
  local ok, hl = pcall(vim.api.nvim_get_hl_by_name, group, true)
  return ok and hl.foreground or nil
end

local function define_score_colours()
  local colours = score_colours[vim.o.background] or score_colours.dark
  for group, colour in pairs(colours) do
    local current = foreground(group)
    local definition =
      string.format('%s guifg=%s ctermfg=%d gui=bold cterm=bold', group, colour[1], colour[2])
    if current ~= nil and current == given[group] then
      vim.cmd('highlight ' .. definition)
    else
      vim.cmd('highlight default ' .. definition)
    end
    local wanted = tonumber(colour[1]:sub(2), 16)
    given[group] = foreground(group) == wanted and wanted or nil
  end
end

function M.define_highlights()
  for _, cmd in ipairs(groups) do
    vim.cmd(cmd)
  end
  if has_0_10 then
    for group, link in pairs(score_links) do
      vim.cmd('highlight default link ' .. group .. ' ' .. link)
    end
    vim.cmd('highlight default link HydraFloat NormalFloat')
    vim.cmd('highlight default link HydraFloatBorder FloatBorder')
  else
    define_score_colours()
    vim.cmd('highlight default link HydraFloat Normal')
    vim.cmd('highlight default link HydraFloatBorder Normal')
  end
  -- After the score colours, which these follow.
  for _, cmd in ipairs(score_followers) do
    vim.cmd(cmd)
  end
end

--- The highlight group for a score (0-100).
function M.score_group(score)
  if score > 80 then
    return 'HydraScoreGood'
  elseif score >= 50 then
    return 'HydraScoreFair'
  end
  return 'HydraScorePoor'
end

--- Text that came from an agent (its output, its file names, its messages)
--- with its control characters made visible, as the terminal and VS Code
--- show them: C0 controls but newline and tab in caret notation (ESC "^[",
--- BEL "^G", CR "^M"), DEL "^?", the C1 controls U+0080..U+009F as
--- "\u009b". A sequence an agent printed (a clipboard write, a title, a
--- link) then shows as what it is, in buffers, floats and messages alike.
function M.visible(text)
  text = tostring(text):gsub('[%z\1-\8\11-\31\127]', function(c)
    local byte = c:byte()
    return byte == 127 and '^?' or ('^' .. string.char(byte + 64))
  end)
  text = text:gsub('\194([\128-\159])', function(c)
    return string.format('\\u%04x', c:byte())
  end)
  return text
end

--- Builds lines with highlights piece by piece, tracking byte columns (the
--- marks ✓, ✗ and — take several bytes each).
local Builder = {}
Builder.__index = Builder

function M.builder()
  return setmetatable({ lines = {}, highlights = {}, current = nil }, Builder)
end

function Builder:add(text, group)
  -- What a view shows may quote an agent (a test name, a warning, a file).
  text = M.visible(text)
  self.current = self.current or ''
  if group then
    table.insert(self.highlights, { #self.lines, #self.current, #self.current + #text, group })
  end
  self.current = self.current .. text
  return self
end

function Builder:newline()
  table.insert(self.lines, self.current or '')
  self.current = nil
  return self
end

function Builder:line(text, group)
  return self:add(text or '', group):newline()
end

--- A text's lines, the way a buffer holds them (no empty last line for the
--- final newline); none for nil.
function M.text_lines(text)
  if not present(text) then
    return {}
  end
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- Writes lines and highlights into a buffer (replacing its contents).
function M.fill(buf, lines, highlights)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  for _, h in ipairs(highlights or {}) do
    vim.api.nvim_buf_add_highlight(buf, M.ns, h[4], h[1], h[2], h[3])
  end
end

-- The plugin's buffers by key ('hydra://RACE/AGENT', ...): a key says what
-- a buffer shows, its name is for people (:ls, tab labels). Neovim makes a
-- name without a scheme absolute, so buffers are found by key, not by name.
local keyed = {}

--- A scratch buffer that is not a file: nothing to save, no swap file.
--- `name` is its name, or a list of names to try in turn (the first that no
--- other buffer has). Found again with find_buffer(key) (default key: its
--- first name).
function M.scratch_buffer(name, filetype, key)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  local names = type(name) == 'table' and name or { name }
  -- A name is for people: when other buffers have every one, this one goes without.
  for _, candidate in ipairs(names) do
    if pcall(vim.api.nvim_buf_set_name, buf, candidate) then
      break
    end
  end
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  key = key or names[1]
  if key then
    keyed[key] = buf
    vim.api.nvim_buf_set_var(buf, 'hydra_key', key)
  end
  return buf
end

--- The plugin's buffer with this key, if there is one.
function M.find_buffer(key)
  local buf = keyed[key]
  if buf and vim.api.nvim_buf_is_valid(buf) then
    return buf
  end
  keyed[key] = nil
  return nil
end

--- Maps `lhs` in normal mode in `buf` when the user has not turned it off.
function M.map(buf, lhs, fn, desc)
  if lhs then
    vim.keymap.set('n', lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
end

--- "d diff", "q close", ... for the pairs { key, what } whose key is set
--- (a key mapped to false in setup() is left out).
function M.key_help(keys)
  local help = {}
  for _, k in ipairs(keys) do
    if k[1] then
      table.insert(help, k[1] .. ' ' .. k[2])
    end
  end
  return help
end

--- Ends builder `b` with a line of the keys of a view (M.key_help), after a
--- blank one; nothing when no key is set.
function M.add_key_help(b, keys)
  local help = M.key_help(keys)
  if #help > 0 then
    b:line('')
    b:line(table.concat(help, ' · '), 'HydraMuted')
  end
end

--- The window options of a view read line by line (a collaboration's
--- iterations, an evaluation): no wrapping, numbers or signs; the line
--- under the cursor marked.
function M.set_view_window_options(win)
  vim.wo[win].wrap = false
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].signcolumn = 'no'
  vim.wo[win].cursorline = true
end

--- Closes the current window, or when it is the last of its tab the tab,
--- or when it is the last window of all switches to the alternate buffer.
function M.close_window()
  if #vim.api.nvim_tabpage_list_wins(0) > 1 then
    vim.cmd('close')
  elseif vim.fn.tabpagenr('$') > 1 then
    vim.cmd('tabclose')
  else
    pcall(vim.cmd, 'buffer #')
  end
end

--- Opens `lines` in a centred floating window, in a buffer found by `key`
--- and named `title`; returns its buffer and window.
function M.open_float(key, lines, highlights, filetype, title)
  local options = require('hydra.config').options
  -- The same view opened again replaces the old one (closing its window wipes its buffer).
  local old = M.find_buffer(key)
  if old then
    for _, win in ipairs(vim.fn.win_findbuf(old)) do
      vim.api.nvim_win_close(win, true)
    end
    if vim.api.nvim_buf_is_valid(old) then
      vim.api.nvim_buf_delete(old, { force = true })
    end
  end
  -- 'background' may have changed since (OptionSet does not fire for a
  -- change made while Neovim starts): colours for the one in force.
  M.define_highlights()
  local buf = M.scratch_buffer(title, filetype, key)
  vim.bo[buf].bufhidden = 'wipe'
  M.fill(buf, lines, highlights)

  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 1, vim.o.columns - 4)
  local height = math.min(#lines, math.max(vim.o.lines - 6, 3))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    row = math.max(math.floor((vim.o.lines - height) / 2) - 1, 0),
    col = math.max(math.floor((vim.o.columns - width) / 2), 0),
    width = width,
    height = height,
    style = 'minimal',
    border = options.window.border,
  })
  vim.wo[win].cursorline = true
  vim.wo[win].wrap = false
  vim.wo[win].winhighlight = 'NormalFloat:HydraFloat,FloatBorder:HydraFloatBorder'
  local close = function()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_close(win, true)
    end
  end
  M.map(buf, options.keymaps.close, close, 'Close')
  M.map(buf, '<Esc>', close, 'Close')
  -- A float left behind would cover whatever the user goes to next.
  vim.api.nvim_create_autocmd('BufLeave', { buffer = buf, once = true, callback = close })
  return buf, win
end

-- A score with one decimal, as the CLI shows it: never higher than it is,
-- so 99.96 is "99.9", not "100.0".
local function fixed1(v)
  if v < 100 and v > 99.9 then
    v = 99.9
  end
  return string.format('%.1f', v)
end

--- A part of a score (one cell) as a whole number, as the CLI shows it:
--- 99.7 is "99", so only 100 reads "100" and 2 failing tests of 704 never
--- look like none.
function M.part_score_text(v)
  if v < 100 and v >= 99.5 then
    return '99'
  end
  return tostring(math.floor(v + 0.5))
end

-- `text` padded with blanks to `width` display cells.
local function pad(text, width)
  local w = vim.fn.strdisplaywidth(text)
  return w < width and (text .. string.rep(' ', width - w)) or text
end
M.pad = pad

-- The first line of `text`, cut to `max` characters.
local function first_line(text, max)
  return util.shorten(util.first_line(text), max)
end

local function build_passed(ranking)
  local check = ranking.checks and ranking.checks.build
  if type(check) == 'table' then
    return check.exitCode == 0 and not check.timedOut and not present(check.error)
  end
  return (ranking.breakdown.build or 0) > 0
end


-- Why a collaboration stopped (hydra/iterationFinished's stopReason), in words.
M.stop_words = {
  untilScore = 'an unflagged iteration reached the score it was to reach',
  approved = 'the reviewer approved',
  maxIterations = 'the last iteration allowed was done',
  unchanged = 'the builder changed nothing in its refine',
  builderFailed = 'the builder failed',
  reviewerFailed = 'the reviewer failed',
  cancelled = 'it was cancelled',
  interrupted = 'hydra stopped before it ended',
}

--- "the reviewer approved (its review contained "LGTM")": in words, never
--- the protocol's identifier (`untilScore`, `reviewerFailed`).
function M.stop_text(r)
  local reason = present(r.stopReason) and r.stopReason
    or (type(r.collaboration) == 'table' and present(r.collaboration.stopReason) and r.collaboration.stopReason or nil)
  if not reason then
    return nil
  end
  local text = M.stop_words[reason] or ('for a reason this plugin does not know (' .. reason .. ')')
  local c = type(r.collaboration) == 'table' and r.collaboration or {}
  if reason == 'approved' and present(c.approveMarker) then
    text = text .. ' (its review contained "' .. c.approveMarker .. '")'
  elseif reason == 'untilScore' and type(c.untilScore) == 'number' then
    text = text .. string.format(' (%.1f)', c.untilScore)
  end
  return text
end

--- What a race without a winner is said with.
M.all_failed = 'All agents failed: no winner'
-- The same for a collaboration, whose builder may well have completed.
M.no_good_round = 'No round scored well enough: no result to merge'

local plain_states = { timedOut = 'timed out', setupFailed = 'setup failed', notNeeded = 'not needed' }

--- An agent's state word in plain words: "timed out" for the wire's timedOut,
--- "not needed" for a collaboration's reviewer the loop ended without.
function M.plain_state(state)
  return plain_states[state] or state
end

--- A merge's outcome (hydra/merge, RaceSummary.merged), in words.
M.merge_outcomes = {
  fastForward = 'fast-forward',
  merged = 'merge commit',
  upToDate = 'already up to date',
  conflict = 'conflict',
}

--- "fixer into main (fast-forward, now at 4b1d9c0e7a2f)" for a race's
--- `merged` (RaceSummary.merged); ", by auto_merge" when hydra merged it by
--- itself.
function M.merged_text(merged)
  local how = { M.merge_outcomes[merged.outcome] or merged.outcome or 'merged' }
  if present(merged.commit) and merged.commit ~= '' then
    table.insert(how, 'now at ' .. merged.commit:sub(1, 12))
  end
  if merged.automatic == true then
    table.insert(how, 'by auto_merge')
  end
  local into = present(merged.targetBranch) and merged.targetBranch ~= '' and (' into ' .. merged.targetBranch) or ''
  return merged.agentId .. into .. ' (' .. table.concat(how, ', ') .. ')'
end

-- "✓ merged" after the line of the agent that was merged.
local function mark_merged(b, merged, agent_id)
  if merged and merged.agentId == agent_id then
    b:add('  ✓ merged', 'HydraMerged')
  end
end

--- What the plugin says instead of merging an agent of a merged race.
function M.merged_already_text(race_id, merged)
  return string.format('hydra: race %s was merged already: %s; it has nothing more to merge', race_id, M.merged_text(merged))
end

--- "failed: cannot win" for a ranking (hydra/scores) of an agent that can
--- never win or be merged; nil for one that can.
function M.ineligible_label(ranking)
  if type(ranking) ~= 'table' or ranking.eligible ~= false then
    return nil
  end
  return (present(ranking.ineligible) and ranking.ineligible or 'ineligible') .. ': cannot win'
end

--- Why an agent cannot race, in short: hydra/agents' `problem`, "'claude'
--- not found on PATH (<the whole PATH>)", says it in its first part. nil
--- when there is none.
function M.short_problem(problem)
  if not present(problem) or problem == '' then
    return nil
  end
  return (problem:gsub(' %(.*$', ''))
end

--- Text from an agent (a test name, a warning) on one line: a buffer line
--- cannot hold a line break.
function M.one_line(text)
  return (tostring(text):gsub('%s*[\r\n]+%s*', ' '))
end

--- "a, b, c and 7 more": the first `max` items, each on one line, and how
--- many more there are (a list of test names can run to thousands).
function M.capped_list(items, max)
  local shown = {}
  for i = 1, math.min(#items, max) do
    shown[i] = M.one_line(items[i])
  end
  local text = table.concat(shown, ', ')
  if #items > max then
    text = text .. ' and ' .. (#items - max) .. ' more'
  end
  return text
end

--- The kinds of test changes against the base, in the order they are
--- listed: what each means, its colour (fixed is good news, broken bad,
--- removed a warning: it counts as failed) and, when it differs from the
--- kind, what it is called (marking a failing test xfail is no fix).
M.test_change_kinds = {
  { 'fixed', 'fail → pass', 'HydraScoreGood' },
  { 'broken', 'pass → fail', 'HydraScorePoor' },
  { 'removed', 'ran at the base, not now', 'HydraScoreFair' },
  { 'skipped', 'ran at the base; scored as failed', 'HydraScorePoor', 'skipped or xfailed now' },
}

--- What is said when an agent's tests could not be compared by name.
M.counts_only = 'tests compared by counts only: the test runner did not name each test, '
  .. 'so a deleted test reads as a passing one'

local function list_of(v)
  return type(v) == 'table' and v or {}
end

--- "1 tool call denied", "3 tool calls denied"; nil for none.
function M.denied_text(count)
  if type(count) ~= 'number' or count <= 0 then
    return nil
  end
  return util.plural(count, 'tool call') .. ' denied'
end

--- "not for auto-merge: 2 tool calls denied; ..." for a ranking hydra would
--- not merge by itself (it may still win, and be merged by hand); nil otherwise.
function M.auto_merge_label(ranking)
  local flags = type(ranking) == 'table' and list_of(ranking.flags) or {}
  if #flags == 0 then
    return nil
  end
  return 'not for auto-merge: ' .. table.concat(vim.tbl_map(M.one_line, flags), '; ')
end

--- What its checks ran with, for an agent that changed protected files.
function M.protected_how(ranking)
  return ranking.protectedMode == 'restore' and 'its checks ran with the base versions put back'
    or 'its checks ran with its versions'
end

-- The checks a ranking holds (hydra/scores' `checks`), in the order they run.
M.check_names = { 'build', 'tests', 'lint' }

--- Why a check failed, as "failed (exit 2)", "timed out", "could not run:
--- ..." or "failed (killed by signal 9)"; nil when it passed, was skipped
--- (the build failed) or is not configured (null).
function M.check_failure(check)
  if type(check) ~= 'table' or check.skipped == true then
    return nil
  end
  if check.timedOut == true then
    return 'timed out'
  end
  if present(check.error) and check.error ~= '' then
    return 'could not run: ' .. M.one_line(check.error)
  end
  if not present(check.exitCode) then
    return 'failed (killed by signal ' .. (present(check.signal) and check.signal or '?') .. ')'
  end
  if check.exitCode ~= 0 then
    return 'failed (exit ' .. check.exitCode .. ')'
  end
  return nil
end

-- "3 passed, 1 failed", "2 errors, 0 warnings": what the check's output said, when hydra read it.
local function check_counts(check)
  local parts = {}
  if type(check.tests) == 'table' then
    table.insert(parts, string.format('%d passed, %d failed', check.tests.passed or 0, check.tests.failed or 0))
  end
  if type(check.lint) == 'table' then
    local errors, warnings = check.lint.errors or 0, check.lint.warnings or 0
    table.insert(parts, util.plural(errors, 'error') .. ', ' .. util.plural(warnings, 'warning'))
  end
  return #parts > 0 and table.concat(parts, '; ') or nil
end

--- A check's verdict and its colour: "failed (exit 1): 3 passed, 1 failed",
--- "passed", "4 passed, 0 failed" (it passed), "skipped: the build failed".
function M.check_verdict(check)
  if check.skipped == true then
    return 'skipped: the build failed', 'HydraScoreNone'
  end
  local failure = M.check_failure(check)
  local counts = check_counts(check)
  if not failure then
    return counts or 'passed', 'HydraScoreGood'
  end
  return failure .. (counts and (': ' .. counts) or ''), 'HydraScorePoor'
end

--- The lines of a check's output (its end, as hydra kept it), "[…]" first
--- when hydra cut its beginning off, blank lines at either end dropped.
function M.check_output(check)
  local lines = M.text_lines(check.output)
  while #lines > 0 and vim.trim(lines[#lines]) == '' do
    table.remove(lines)
  end
  while #lines > 0 and vim.trim(lines[1]) == '' do
    table.remove(lines, 1)
  end
  if check.outputTruncated == true and #lines > 0 then
    table.insert(lines, 1, '[…]')
  end
  return lines
end

--- The checks of a ranking that are configured, in the order they run:
--- { {name, check} }.
function M.checks_of(ranking)
  local checks = type(ranking) == 'table' and type(ranking.checks) == 'table' and ranking.checks or {}
  local out = {}
  for _, name in ipairs(M.check_names) do
    if type(checks[name]) == 'table' then
      table.insert(out, { name, checks[name] })
    end
  end
  return out
end

--- Adds the checks of `ranking` to builder `b`, one line each,
--- "✗ build: failed (exit 2) · sh -n lib.sh", each line starting with
--- `indent`; under a check that failed, its output, indented further.
function M.add_checks(b, ranking, indent)
  for _, item in ipairs(M.checks_of(ranking)) do
    local name, check = item[1], item[2]
    local verdict, group = M.check_verdict(check)
    local failed = M.check_failure(check) ~= nil
    local mark = check.skipped == true and '–' or (failed and '✗' or '✓')
    b:add(indent):add(mark .. ' ' .. name .. ': ' .. verdict, group)
    if present(check.command) and check.command ~= '' then
      b:add(' · ' .. M.one_line(check.command), 'HydraMuted')
    end
    b:newline()
    if failed then
      local output = M.check_output(check)
      if #output == 0 then
        b:line(indent .. '    (it printed nothing)', 'HydraMuted')
      end
      for _, l in ipairs(output) do
        b:line(indent .. '    ' .. l)
      end
    end
  end
end

--- The line of a failed check's output that says most about why: the
--- first that speaks of an error or a failure, else the last one.
function M.telling_line(lines)
  local last
  for _, l in ipairs(lines) do
    if l ~= '[…]' and vim.trim(l) ~= '' then
      local lower = l:lower()
      if lower:find('error', 1, true) or lower:find('fail', 1, true) or lower:find('fatal', 1, true) then
        return l
      end
      last = l
    end
  end
  return last
end

-- A note for each failed check of `ranking`, for its line on the
-- scoreboard: "✗ build failed (exit 2): " and the line of its output that
-- tells why (M.telling_line), or the counts hydra read from it.
local function failed_check_notes(ranking)
  local notes = {}
  for _, item in ipairs(M.checks_of(ranking)) do
    local name, check = item[1], item[2]
    local failure = M.check_failure(check)
    if failure then
      local note = { { '✗ ' .. name .. ' ' .. failure, 'HydraScorePoor' } }
      local counts = check_counts(check)
      local telling = M.telling_line(M.check_output(check))
      if counts then
        table.insert(note, { ': ' .. counts })
      elseif telling then
        table.insert(note, { ': ' .. first_line(vim.trim(telling), 80) })
      end
      table.insert(notes, note)
    end
  end
  return notes
end

--- The notes under an agent's line on the scoreboard: the checks that
--- failed (with the line of what each printed that tells why), why hydra
--- would not merge it by itself, the protected files it changed, how its tests compare
--- with the base's, and its warnings (at most `max` of each list).
--- `agent` (optional) is what hydra/status or hydra/agentFinished said of it.
--- Each note is a list of { text, group } pieces.
function M.agent_notes(ranking, agent, max)
  agent = agent or {}
  -- Why it scored low first: the checks that failed, in their own words.
  local notes = failed_check_notes(ranking)
  local not_auto = M.auto_merge_label(ranking)
  -- A hydra that sends no flags yet may still count the denials.
  local denied = not not_auto and M.denied_text(agent.deniedToolCalls)
  if not_auto or denied then
    table.insert(notes, { { '⚠ ' .. (not_auto or ('not for auto-merge: ' .. denied)), 'HydraFlag' } })
  end
  local protected = list_of(ranking.protectedChanges)
  if #protected > 0 then
    table.insert(notes, {
      { 'protected files changed: ', 'HydraFlag' },
      { M.capped_list(protected, max) .. ' (' .. M.protected_how(ranking) .. ')' },
    })
  end
  local changes = ranking.testChanges
  if type(changes) == 'table' then
    for _, kind in ipairs(M.test_change_kinds) do
      local names = list_of(changes[kind[1]])
      if #names > 0 then
        table.insert(notes, {
          { #names .. ' ' .. (kind[4] or kind[1]), kind[3] },
          { ' (' .. kind[2] .. '): ' .. M.capped_list(names, max) },
        })
      end
    end
  elseif ranking.testsByCountsOnly == true then
    table.insert(notes, { { M.counts_only, 'HydraFlag' } })
  end
  local warnings = list_of(agent.warnings)
  for i = 1, math.min(#warnings, max) do
    table.insert(notes, { { '⚠ ' .. M.one_line(warnings[i]), 'HydraFlag' } })
  end
  if #warnings > max then
    table.insert(notes, { { string.format('⚠ and %d more warnings', #warnings - max), 'HydraFlag' } })
  end
  return notes
end

--- What to tell the user of an agent that ended with tool calls denied or
--- warnings (a permission it lacked, a model error, processes hydra had to
--- end); nil when it ended without either, or was cancelled (the user asked
--- for that). `p`: hydra/agentFinished.
function M.finished_notice(p)
  if p.status == 'cancelled' then
    return nil
  end
  local denied = M.denied_text(p.deniedToolCalls)
  local warnings = vim.tbl_map(M.one_line, list_of(p.warnings))
  if not denied and #warnings == 0 then
    return nil
  end
  local parts = {}
  if denied then
    table.insert(parts, 'had ' .. denied .. ', so it is not merged automatically')
  end
  if #warnings > 0 then
    table.insert(parts, (denied and 'and warned: ' or 'warned: ') .. table.concat(warnings, '; '))
  end
  return M.visible(string.format('hydra: %s (race %s) %s', p.agentId, p.raceId, table.concat(parts, ' ')))
end

--- Adds a ranking's breakdown to `b`, as the scoreboard shows it:
--- "[BUILD: ✓] [TESTS: 100] [LINT: n/a] [DIFF: 100] [SPEED: 71]", each
--- cell coloured by its score. `ranking` needs only `breakdown`; its
--- `checks`, when there, say whether the build passed.
function M.add_breakdown(b, ranking)
  local breakdown = ranking.breakdown or {}
  local build_failed = present(breakdown.build) and not build_passed(ranking)
  if present(breakdown.build) then
    local passed = build_passed(ranking)
    b:add('[BUILD: ' .. (passed and '✓' or '✗') .. ']', passed and 'HydraScoreGood' or 'HydraScorePoor')
  else
    b:add('[BUILD: n/a]', 'HydraScoreNone')
  end
  local cells = {
    { 'TESTS', breakdown.tests, build_failed },
    { 'LINT', breakdown.lint, build_failed },
    { 'DIFF', breakdown.diffSize, false },
    { 'SPEED', breakdown.speed, false },
  }
  for _, cell in ipairs(cells) do
    local label, score, skipped = cell[1], cell[2], cell[3]
    local value, group
    if not present(score) then
      value, group = 'n/a', 'HydraScoreNone'
    elseif skipped then
      value, group = '--', 'HydraScoreNone'
    else
      value, group = M.part_score_text(score), M.score_group(score)
    end
    local text = '[' .. label .. ': ' .. value .. ']'
    b:add(' ')
    b:add(text, group)
    -- Pad after the cell, so columns line up without colouring the spaces.
    if cell ~= cells[#cells] then
      b:add(string.rep(' ', math.max(#label + 7 - #text, 0)))
    end
  end
end

--- The scoreboard, in the seed's layout:
---   #1  careful    97.1 / 100    [BUILD: ✓] [TESTS: 100] [LINT: n/a] [DIFF: 100] [SPEED: 71]
--- An agent that can never win is marked "(failed: cannot win)", with its
--- CLI's error below it; below that, its notes (M.agent_notes).
--- `model`: { raceId, task?, rankings, winner?, allFailed, autoMergeEligible, autoMergeEnabled,
--- branches?, errors?, agents?, merged? } (the shape of hydra/scores and
--- hydra/raceFinished; `errors` and `agents`, what hydra/status says of each
--- agent, by agentId; `merged`, RaceSummary's).
--- Returns lines, highlights and the agentId shown on each line (by
--- 1-based line number).
function M.scoreboard(model)
  local merged = present(model.merged) and model.merged or nil
  local b = M.builder()
  local results = model.kind == 'collab' and 'Collaboration Results' or 'Race Results'
  local title = model.task and (results .. ' — Task: "' .. first_line(model.task, 60) .. '"')
    or (results .. ' — ' .. model.raceId)
  b:line(title, 'HydraTitle')
  b:line(string.rep('=', 44), 'HydraTitle')
  b:line('')

  local agent_at = {}
  local name_width = 10
  for _, r in ipairs(model.rankings) do
    name_width = math.max(name_width, #r.agentId + 2)
  end

  for _, r in ipairs(model.rankings) do
    b:add('  #' .. r.rank .. '  ')
    b:add(pad(r.agentId, name_width), r.agentId == model.winner and 'HydraWinner' or nil)
    b:add(string.format('%5s', fixed1(r.total)), M.score_group(r.total))
    b:add(' / 100    ')
    M.add_breakdown(b, r)
    local cannot_win = M.ineligible_label(r)
    if cannot_win then
      b:add('  (' .. cannot_win .. ')', 'HydraMuted')
    elseif r.status and r.status ~= 'completed' then
      b:add('  ' .. r.status, 'HydraMuted')
    end
    mark_merged(b, merged, r.agentId)
    b:newline()
    agent_at[#b.lines] = r.agentId
    local error = model.errors and model.errors[r.agentId]
    if present(error) and error ~= '' then
      b:line('      ' .. first_line(error, 100), 'HydraError')
      agent_at[#b.lines] = r.agentId
    end
    for _, note in ipairs(M.agent_notes(r, model.agents and model.agents[r.agentId], M.scoreboard_names)) do
      b:add('      ')
      for _, piece in ipairs(note) do
        b:add(piece[1], piece[2])
      end
      b:newline()
      agent_at[#b.lines] = r.agentId
    end
  end
  b:line('')

  if model.allFailed or (not present(model.winner) and #model.rankings > 0) then
    local any_eligible = false
    for _, r in ipairs(model.rankings) do
      any_eligible = any_eligible or r.eligible ~= false
    end
    b:add(M.all_failed, 'HydraScorePoor')
    b:add(
      any_eligible and ' (the best total is below the fail threshold).'
        or ' (none finished with a change that could be merged).'
    )
    b:newline()
  end
  if present(model.winner) then
    b:add('Winner: '):add(model.winner, 'HydraWinner')
    local branch = model.branches and model.branches[model.winner]
    -- A merge removes the race's branches.
    if branch and not merged then
      b:add(' (branch: ' .. branch .. ')')
    end
    b:newline()
    local flagged = false
    for _, r in ipairs(model.rankings) do
      local not_auto = r.agentId == model.winner and M.auto_merge_label(r)
      if not_auto then
        flagged = true
        b:line('⚠ the winner is ' .. not_auto, 'HydraFlag')
      end
    end
    -- Merging by itself is hydra.toml's `auto_merge`: only when it is on
    -- does the winner's total say anything about it. A winner good enough
    -- and not flagged is merged as the race ends, unless the merge failed.
    if not merged and not flagged and model.autoMergeEnabled == true then
      if model.autoMergeEligible == true then
        b:line('(good enough to merge automatically, but auto_merge could not merge it)', 'HydraFlag')
      else
        b:line('(below auto_merge_minimum: not merged automatically)', 'HydraMuted')
      end
    end
  elseif #model.rankings == 0 then
    b:line('Nothing was scored.', 'HydraMuted')
  end
  if merged then
    b:add('Merged: ', 'HydraMerged'):add(M.merged_text(merged)):newline()
  end
  local keys = require('hydra.config').options.keymaps
  local help = {}
  -- A merged race has nothing more to merge.
  local keylist = { { '<CR>', 'details' }, { keys.diff, 'diff' }, { not merged and keys.merge, 'merge' }, { keys.log, 'log' }, { keys.close, 'close' } }
  for _, k in ipairs(keylist) do
    if k[1] then
      table.insert(help, k[1] .. ' ' .. k[2])
    end
  end
  if #help > 0 then
    b:line(table.concat(help, ' · ') .. '  (on an agent\'s line)', 'HydraMuted')
  end
  return b.lines, b.highlights, agent_at
end

-- How many test names of each kind a scoreboard note shows; the details show more.
M.scoreboard_names = 5
M.details_names = 50

--- An agent's details, opened from the scoreboard: its rank and total, why it
--- cannot win or be merged by itself, its checks (the output of each that
--- failed: why the build or lint failed), its protected changes, every kind of
--- test change one name a line (at most M.details_names each), its
--- warnings, its error and the last lines of its stderr.
--- `model` as for M.scoreboard. Returns lines and highlights.
function M.agent_details(model, agent_id)
  local ranking
  for _, r in ipairs(model.rankings or {}) do
    if r.agentId == agent_id then
      ranking = r
    end
  end
  ranking = ranking or {}
  local agent = (model.agents and model.agents[agent_id]) or {}
  local error = agent.error or (model.errors and model.errors[agent_id])
  local b = M.builder()
  b:add(agent_id, 'HydraTitle')
  if present(ranking.rank) then
    b:add(string.format('  #%d  ', ranking.rank))
    b:add(fixed1(ranking.total), M.score_group(ranking.total)):add(' / 100')
  end
  local status = present(ranking.status) and ranking.status or agent.state
  if present(status) then
    b:add('  ' .. status, 'HydraAgentState')
  end
  if agent_id == model.winner then
    b:add('  winner', 'HydraWinner')
  end
  b:newline()
  local merged = present(model.merged) and model.merged or nil
  if merged and merged.agentId == agent_id then
    b:add('✓ merged: ', 'HydraMerged'):add(M.merged_text(merged)):newline()
  end
  -- A merge removes the race's branches.
  local branch = not merged and model.branches and model.branches[agent_id]
  if branch then
    b:line('branch: ' .. branch, 'HydraHeader')
  end
  local cannot_win = M.ineligible_label(ranking)
  if cannot_win then
    b:line(cannot_win, 'HydraError')
  end
  local not_auto = M.auto_merge_label(ranking)
  local denied = M.denied_text(agent.deniedToolCalls)
  if not_auto then
    b:line('⚠ ' .. not_auto, 'HydraFlag')
  elseif denied then
    b:line('⚠ ' .. denied, 'HydraFlag')
  end

  -- What hydra ran to score it, and why what failed did.
  if #M.checks_of(ranking) > 0 then
    b:line('')
    b:line('Checks', 'HydraTitle')
    M.add_checks(b, ranking, '  ')
  end

  local function section(title, items, group)
    if #items == 0 then
      return
    end
    b:line('')
    b:line(title, group or 'HydraTitle')
    for i = 1, math.min(#items, M.details_names) do
      b:line('  ' .. M.one_line(items[i]))
    end
    if #items > M.details_names then
      b:line(string.format('  … and %d more', #items - M.details_names), 'HydraMuted')
    end
  end

  section('Protected files changed (' .. M.protected_how(ranking) .. ')', list_of(ranking.protectedChanges), 'HydraFlag')
  local changes = ranking.testChanges
  if type(changes) == 'table' then
    local any = false
    for _, kind in ipairs(M.test_change_kinds) do
      local names = list_of(changes[kind[1]])
      any = any or #names > 0
      section(string.format('Tests %s (%s): %d', kind[4] or kind[1], kind[2], #names), names, kind[3])
    end
    if not any then
      b:line('')
      b:line('Tests as at the base: none fixed, broken, removed or skipped', 'HydraMuted')
    end
  elseif ranking.testsByCountsOnly == true then
    b:line('')
    b:line(M.counts_only, 'HydraFlag')
  end
  section('Warnings', list_of(agent.warnings), 'HydraFlag')
  if present(error) and error ~= '' then
    b:line('')
    b:line('Error', 'HydraError')
    for _, l in ipairs(M.text_lines(error)) do
      b:line('  ' .. l)
    end
  end
  local tail = M.text_lines(agent.stderrTail)
  if #tail > 0 then
    b:line('')
    b:line('stderr (last lines)', 'HydraTitle')
    for _, l in ipairs(tail) do
      b:line('  ' .. l, 'HydraStderr')
    end
  end
  local keys = require('hydra.config').options.keymaps
  M.add_key_help(b, { { keys.diff, 'diff' }, { not merged and keys.merge, 'merge' }, { keys.log, 'log' }, { keys.scores, 'scores' }, { keys.close, 'close' } })
  return b.lines, b.highlights
end

local function seconds(ms)
  if not present(ms) then
    return ''
  end
  return string.format('%.1f s', ms / 1000)
end

-- The total of iteration `agent_id` ("builder@2") among a collaboration's
-- RaceSummary.iterations, when it was scored.
local function iteration_total(race, agent_id)
  for _, it in ipairs(list_of(race.iterations)) do
    if type(it) == 'table' and 'builder@' .. tostring(it.iteration) == agent_id then
      local score = it.score
      if type(score) == 'table' then
        score = score.total
      end
      return type(score) == 'number' and score or nil
    end
  end
  return nil
end

-- The line under a collaboration in the race list: "2 iterations · best:
-- builder@2 (71.3) · stopped: approved".
local function add_collab_summary(b, race)
  local c = type(race.collaboration) == 'table' and race.collaboration or {}
  local count = #list_of(race.iterations)
  b:add('    ' .. util.plural(count, 'iteration'), 'HydraMuted')
  if type(c.maxIterations) == 'number' then
    b:add(' of ' .. c.maxIterations .. ' at most', 'HydraMuted')
  end
  if present(race.winner) then
    b:add(' · best: ', 'HydraMuted'):add(race.winner, 'HydraWinner')
    local total = iteration_total(race, race.winner)
    if total then
      b:add(' (' .. fixed1(total) .. ')', M.score_group(total))
    end
  end
  local stop = M.stop_text(race)
  if stop then
    b:add(' · stopped: ' .. stop, 'HydraMuted')
  end
  b:newline()
end

--- The race list of :HydraStatus, from hydra/status's races. Returns lines,
--- highlights and the raceId shown on each line. A collaboration says so,
--- names its builder's and its reviewer's agents, and has a line with how
--- many iterations it made, the best one and why it stopped.
function M.race_list(root, races)
  local b = M.builder()
  b:line('hydra races in ' .. root, 'HydraTitle')
  b:line('')
  local race_at = {}
  if #races == 0 then
    b:line('No races yet: start one with :HydraRace.', 'HydraMuted')
  end
  for _, race in ipairs(races) do
    local collab = race.kind == 'collab'
    b:add(race.raceId, 'HydraHeader'):add('  ')
    b:add(pad(race.state, 11), 'HydraAgentState')
    if collab then
      b:add('collaboration: ', 'HydraTitle')
    end
    b:add(first_line(race.task, 60))
    if race.allFailed == true then
      b:add('  ' .. M.all_failed, 'HydraError')
    end
    local merged = present(race.merged) and race.merged or nil
    if merged then
      b:add('  ✓ merged: ' .. M.merged_text(merged), 'HydraMerged')
    end
    b:newline()
    race_at[#b.lines] = race.raceId
    -- In a collaboration, builder and reviewer are roles: say who plays them.
    local names, width = {}, 14
    for i, a in ipairs(race.agents or {}) do
      names[i] = a.agentId
      if collab and present(a.agent) and a.agent ~= a.agentId then
        names[i] = a.agentId .. ' (' .. a.agent .. ')'
        width = math.max(width, vim.fn.strdisplaywidth(names[i]) + 2)
      end
    end
    for i, a in ipairs(race.agents or {}) do
      b:add('    ' .. pad(names[i], width))
      b:add(pad(M.plain_state(a.state), 12), 'HydraAgentState')
      b:add(pad(seconds(a.elapsedMs), 10))
      if present(a.exitCode) then
        b:add('exit ' .. a.exitCode)
      end
      if present(a.error) then
        b:add('  ' .. first_line(a.error, 60), 'HydraError')
      end
      mark_merged(b, merged, a.agentId)
      b:newline()
      race_at[#b.lines] = race.raceId
    end
    if collab then
      add_collab_summary(b, race)
      race_at[#b.lines] = race.raceId
    end
  end
  return b.lines, b.highlights, race_at
end

return M
