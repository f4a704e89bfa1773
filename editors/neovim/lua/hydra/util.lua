-- Small helpers every part of the plugin uses, defined once. Nothing here
-- knows about races, buffers or hydra's requests.

local M = {}

--- Whether a value hydra sent is there: neither missing nor JSON null
--- (vim.NIL).
function M.present(v)
  return v ~= nil and v ~= vim.NIL
end

--- `v` when it is there, else nil: JSON null becomes nil.
function M.opt(v)
  return M.present(v) and v or nil
end

--- The first line of `text` ('' for nil).
function M.first_line(text)
  return ((text or ''):match('^[^\n]*'))
end

--- `line` cut to `max` characters, ending in "..." when it was longer.
function M.shorten(line, max)
  if #line > max then
    return line:sub(1, max - 3) .. '...'
  end
  return line
end

--- "1 sample", "3 samples": a count and its noun, plural when it is not 1.
function M.plural(n, word)
  return string.format('%d %s%s', n, word, n == 1 and '' or 's')
end

return M
