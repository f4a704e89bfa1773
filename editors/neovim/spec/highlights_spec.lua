-- The scoreboard as the screen shows it: the colours of every score on the
-- float's background, resolved the way Neovim draws them (the window's
-- 'winhighlight', links, Normal, the terminal's own colours), must be
-- readable: a contrast of at least 4.5:1 (WCAG's level for text).

local hydra = require('hydra')
local ui = require('hydra.ui')

-- xterm's palette, for colours given as terminal colour numbers.
local function xterm(n)
  local base16 = {
    0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
    0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
  }
  if n < 16 then
    return base16[n + 1]
  elseif n < 232 then
    local steps = { 0, 95, 135, 175, 215, 255 }
    local i = n - 16
    local r, g, b = steps[math.floor(i / 36) + 1], steps[math.floor(i / 6) % 6 + 1], steps[i % 6 + 1]
    return r * 65536 + g * 256 + b
  end
  local v = 8 + (n - 232) * 10
  return v * 65536 + v * 256 + v
end

local function luminance(rgb)
  local function channel(c)
    c = c / 255
    return c <= 0.03928 and c / 12.92 or ((c + 0.055) / 1.055) ^ 2.4
  end
  local r, g, b = math.floor(rgb / 65536), math.floor(rgb / 256) % 256, rgb % 256
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
end

local function contrast(a, b)
  local la, lb = luminance(a), luminance(b)
  return (math.max(la, lb) + 0.05) / (math.min(la, lb) + 0.05)
end

-- The colours (as RGB) of text in `group` drawn in floating window `win`,
-- with 'termguicolors' on (`rgb`) or off (terminal colour numbers).
local function drawn(win, group, rgb)
  local function attrs(name)
    local ok, hl = pcall(vim.api.nvim_get_hl_by_name, name, rgb)
    return ok and hl or {}
  end
  local map = {}
  for from, to in vim.wo[win].winhighlight:gmatch('([%w_]+):([%w_]+)') do
    map[from] = to
  end
  local window, normal, text = attrs(map.NormalFloat or 'NormalFloat'), attrs('Normal'), attrs(group)
  local dark = vim.o.background == 'dark'
  -- What the terminal shows where nothing sets a colour.
  local terminal_fg, terminal_bg = dark and 0xe5e5e5 or 0x000000, dark and 0x000000 or 0xffffff
  local function resolve(value, default)
    if value == nil then
      return default
    end
    return rgb and value or xterm(value)
  end
  local bg = resolve(window.background or normal.background, terminal_bg)
  local window_fg = resolve(window.foreground or normal.foreground, terminal_fg)
  if window.reverse then
    bg = window_fg
  end
  local fg = resolve(text.foreground, window_fg)
  if text.background then
    bg = resolve(text.background, bg)
  end
  if text.reverse then
    fg, bg = bg, fg
  end
  return fg, bg
end

local model = {
  raceId = '20261121-101500-a3f9',
  task = 'fix the flaky login test',
  winner = 'careful',
  allFailed = false,
  autoMergeEligible = false,
  rankings = {
    { rank = 1, agentId = 'careful', total = 97.1, breakdown = { build = 100, tests = 100, lint = vim.NIL, diffSize = 100, speed = 71.4 } },
    { rank = 2, agentId = 'sprawler', total = 62.5, breakdown = { build = 100, tests = 60, lint = vim.NIL, diffSize = 52, speed = 46 } },
    { rank = 3, agentId = 'breaker', total = 25.0, breakdown = { build = 0, tests = 0, lint = vim.NIL, diffSize = 100, speed = 100 } },
  },
}

-- With 'termguicolors' off, colours are the terminal's own palette, which
-- its theme tunes for its background: only xterm's default palette (for a
-- dark background) can be checked here.
local cases = {
  { background = 'dark', termguicolors = true },
  { background = 'dark', termguicolors = false },
  { background = 'light', termguicolors = true },
}

describe('the scoreboard float', function()
  after_each(function()
    vim.cmd('silent! only!')
    vim.cmd('set background=dark')
    vim.o.termguicolors = false
  end)

  for _, case in ipairs(cases) do
    local name = string.format("is readable with background=%s and %s", case.background, case.termguicolors and "'termguicolors'" or 'terminal colours')
    it(name, function()
      vim.cmd('set background=' .. case.background)
      vim.o.termguicolors = case.termguicolors
      local buf, win = hydra.show_scores({ id = model.raceId, root = vim.fn.getcwd() }, model)
      assert.are_not.equal('', vim.api.nvim_win_get_config(win).relative)
      local seen = {}
      local marks = vim.api.nvim_buf_get_extmarks(buf, ui.ns, 0, -1, { details = true })
      for _, m in ipairs(marks) do
        local group = m[4].hl_group
        if group:find('^HydraScore') then
          seen[group] = true
          local fg, bg = drawn(win, group, case.termguicolors)
          local ratio = contrast(fg, bg)
          assert.is_true(
            ratio >= 4.5,
            string.format('%s: #%06x on #%06x has a contrast of %.2f', group, fg, bg, ratio)
          )
        end
      end
      assert.are.same(
        { HydraScoreFair = true, HydraScoreGood = true, HydraScoreNone = true, HydraScorePoor = true },
        seen
      )
    end)
  end

  it("keeps the user's score colours when 'background' changes", function()
    vim.cmd('highlight HydraScoreGood guifg=#123456')
    vim.cmd('set background=light')
    ui.define_highlights()
    assert.are.equal(0x123456, vim.api.nvim_get_hl_by_name('HydraScoreGood', true).foreground)
    vim.cmd('highlight clear HydraScoreGood')
    ui.define_highlights()
  end)
end)
