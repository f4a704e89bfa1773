-- The plugin's options: defaults, and the validation setup() applies to what
-- the user passes. A value of the wrong type is reported and its default
-- kept, so one typo never leaves the plugin unusable; an unknown key is
-- reported as a warning (it is most likely a misspelt option).

local M = {}

local function list_of_strings(v, allow_empty)
  if type(v) ~= 'table' or (not allow_empty and #v == 0) then
    return false
  end
  for k, item in pairs(v) do
    if type(k) ~= 'number' or type(item) ~= 'string' or item == '' then
      return false
    end
  end
  return true
end

local function one_of(...)
  local allowed = { ... }
  return function(v)
    return vim.tbl_contains(allowed, v)
  end, 'one of ' .. table.concat(
    vim.tbl_map(function(a)
      return "'" .. a .. "'"
    end, allowed),
    ', '
  )
end

local function positive_integer(v)
  return type(v) == 'number' and v >= 1 and math.floor(v) == v
end

local function key_or_false(v)
  return v == false or (type(v) == 'string' and v ~= '')
end

local function boolean(v)
  return type(v) == 'boolean'
end

local layouts, layouts_expected = one_of('tab', 'vertical', 'horizontal', 'none')
local borders, borders_expected = one_of('none', 'single', 'double', 'rounded', 'solid', 'shadow')

-- Each leaf: { default, check, what the check expects }.
local schema = {
  server = {
    -- The command that starts the server; hydra serve answers on stdio.
    cmd = {
      { 'hydra', 'serve' },
      function(v)
        return list_of_strings(v, false)
      end,
      'a non-empty list of strings',
    },
  },
  -- Agents :HydraRace uses when none are named; empty: ask each time.
  agents = {
    {},
    function(v)
      return list_of_strings(v, true)
    end,
    'a list of agent names',
  },
  window = {
    -- Where the agents' output buffers open: a new tab with one window per
    -- agent side by side, splits in the current tab, or nowhere.
    layout = { 'tab', layouts, layouts_expected },
    -- Keep output windows scrolled to the newest line while the cursor is on the last one.
    follow = { true, boolean, 'a boolean' },
    border = { 'rounded', borders, borders_expected },
    -- Open the scoreboard by itself when a race this editor started is scored.
    scores_on_finish = { true, boolean, 'a boolean' },
  },
  output = {
    -- Output is written to the buffers in batches, this often, so that a
    -- chatty agent never makes typing lag.
    update_interval_ms = { 100, positive_integer, 'a positive integer' },
  },
  -- Keys in the output buffers and the scoreboard; false turns one off.
  keymaps = {
    close = { 'q', key_or_false, 'a key or false' },
    diff = { 'd', key_or_false, 'a key or false' },
    merge = { 'm', key_or_false, 'a key or false' },
    log = { 'L', key_or_false, 'a key or false' },
    cancel = { 'c', key_or_false, 'a key or false' },
    scores = { 's', key_or_false, 'a key or false' },
  },
}

local function is_leaf(node)
  return node[1] ~= nil or type(node[2]) == 'function'
end

local function defaults_of(node)
  if is_leaf(node) then
    return vim.deepcopy(node[1])
  end
  local out = {}
  for key, child in pairs(node) do
    out[key] = defaults_of(child)
  end
  return out
end

-- Checks `user` against `node`, writing what passes into `into` and
-- collecting problems; returns nothing.
local function merge_checked(node, user, into, path, problems)
  for key, value in pairs(user) do
    local name = path == '' and tostring(key) or (path .. '.' .. tostring(key))
    local child = type(key) == 'string' and node[key] or nil
    if child == nil then
      table.insert(problems, { level = 'warn', message = "unknown option '" .. name .. "'" })
    elseif is_leaf(child) then
      if child[2](value) then
        into[key] = vim.deepcopy(value)
      else
        table.insert(problems, {
          level = 'error',
          message = string.format("option '%s' must be %s, got %s; using the default", name, child[3], vim.inspect(value)),
        })
      end
    elseif type(value) ~= 'table' then
      table.insert(problems, {
        level = 'error',
        message = string.format("option '%s' must be a table, got %s; using the default", name, vim.inspect(value)),
      })
    else
      merge_checked(child, value, into[key], name, problems)
    end
  end
end

--- The defaults, as a fresh table.
function M.defaults()
  return defaults_of(schema)
end

--- Validates `user` options. Returns the resulting options (defaults where the
--- user gave nothing, or something invalid) and a list of problems
--- `{level = 'warn'|'error', message}`.
function M.resolve(user)
  local options = defaults_of(schema)
  local problems = {}
  if user == nil then
    return options, problems
  end
  if type(user) ~= 'table' then
    table.insert(problems, { level = 'error', message = 'setup() takes a table of options, got ' .. vim.inspect(user) })
    return options, problems
  end
  merge_checked(schema, user, options, '', problems)
  return options, problems
end

-- The options in force; setup() replaces them.
M.options = M.defaults()

--- Applies `user` options, reporting each problem through vim.notify.
--- Returns true when there was none.
function M.setup(user)
  local options, problems = M.resolve(user)
  M.options = options
  for _, p in ipairs(problems) do
    vim.notify('hydra: ' .. p.message, p.level == 'warn' and vim.log.levels.WARN or vim.log.levels.ERROR)
  end
  return #problems == 0
end

return M
