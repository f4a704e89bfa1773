-- The plugin's modules require each other without a cycle: the commands
-- (lua/hydra/actions/) require the views and what is under them, never the
-- other way round, and nothing requires init.lua back. Read from the source
-- (a require inside a function counts, though it runs later), and checked
-- again by loading every module, with `require` traced, in a separate
-- Neovim.

local H = require('helpers')

local lua_dir = H.plugin_dir .. '/lua'

-- Every module of the plugin, by name ('hydra', 'hydra.actions.race', ...),
-- with its file.
local function plugin_modules()
  local out = {}
  for _, path in ipairs(vim.fn.globpath(lua_dir .. '/hydra', '**/*.lua', false, true)) do
    local name = path:sub(#lua_dir + 2, -5):gsub('/', '.'):gsub('%.init$', '')
    out[name] = path
  end
  return out
end

-- The names `source` passes to `require` as a string, anywhere in it (in a
-- function body too), leaving out comments and the text of other strings:
-- `require('hydra')` in a message is no require.
local function required_names(source)
  local found, i, n = {}, 1, #source
  local after_require = false
  while i <= n do
    local c = source:sub(i, i)
    local long = source:match('^%[(=*)%[', i)
    if source:sub(i, i + 1) == '--' then
      local level = source:match('^%-%-%[(=*)%[', i)
      local close = level and source:find(']' .. level .. ']', i, true) or source:find('\n', i, true)
      i = (close or n) + 1
    elseif long then
      local _, close = source:find(']' .. long .. ']', i, true)
      i = (close or n) + 1
      after_require = false
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and source:sub(j, j) ~= c do
        j = j + (source:sub(j, j) == '\\' and 2 or 1)
      end
      if after_require then
        table.insert(found, source:sub(i + 1, j - 1))
      end
      after_require = false
      i = j + 1
    elseif c:match('[%a_]') then
      local word = source:match('^[%w_]+', i)
      -- `x.require` or `x:require` is some other function.
      local before = i > 1 and source:sub(i - 1, i - 1) or ''
      after_require = word == 'require' and before ~= '.' and before ~= ':'
      i = i + #word
    elseif c == '(' or c:match('%s') then
      i = i + 1
    else
      after_require = false
      i = i + 1
    end
  end
  return found
end

-- module -> the plugin's modules it requires (a set).
local function require_graph(modules)
  local graph = {}
  for name, path in pairs(modules) do
    graph[name] = {}
    for _, wanted in ipairs(required_names(H.read_file(path))) do
      if modules[wanted] then
        graph[name][wanted] = true
      end
    end
  end
  return graph
end

-- A cycle of `graph` as the list of its modules (the first one again at the
-- end), or nil when there is none.
local function find_cycle(graph)
  local state, path = {}, {}
  local function visit(name)
    state[name] = 'open'
    table.insert(path, name)
    local wanted = vim.tbl_keys(graph[name])
    table.sort(wanted)
    for _, next_name in ipairs(wanted) do
      if state[next_name] == 'open' then
        local cycle = {}
        for k = #path, 1, -1 do
          table.insert(cycle, 1, path[k])
          if path[k] == next_name then
            break
          end
        end
        table.insert(cycle, next_name)
        return cycle
      elseif not state[next_name] then
        local cycle = visit(next_name)
        if cycle then
          return cycle
        end
      end
    end
    table.remove(path)
    state[name] = 'done'
    return nil
  end
  local names = vim.tbl_keys(graph)
  table.sort(names)
  for _, name in ipairs(names) do
    if not state[name] then
      local cycle = visit(name)
      if cycle then
        return cycle
      end
    end
  end
  return nil
end

-- Loads every module in another Neovim with `require` traced. Returns the
-- requires seen ({from, to}) and what went wrong: a module requiring one that
-- is still loading, or one that does not load.
local function load_traced(names)
  local nvim = assert(os.getenv('HYDRA_NVIM'), 'HYDRA_NVIM is not set (run scripts/test.sh)')
  local job = vim.fn.jobstart({ nvim, '--embed', '--headless', '--clean', '-n', '-i', 'NONE' }, { rpc = true })
  assert.is_true(job > 0)
  local result = vim.rpcrequest(
    job,
    'nvim_exec_lua',
    [[
      local plugin, names = ...
      vim.opt.runtimepath:prepend(plugin)
      local real_require = require
      local loading, stack, edges, problems = {}, {}, {}, {}
      _G.require = function(name)
        if type(name) ~= 'string' or not (name == 'hydra' or name:find('^hydra%.')) then
          return real_require(name)
        end
        local from = stack[#stack]
        if from then
          table.insert(edges, { from, name })
          if loading[name] then
            table.insert(problems, from .. ' requires ' .. name .. ', which is still loading')
          end
        end
        loading[name] = true
        table.insert(stack, name)
        local ok, module = pcall(real_require, name)
        table.remove(stack)
        loading[name] = nil
        if not ok then
          table.insert(problems, name .. ' did not load: ' .. tostring(module))
          return nil
        end
        return module
      end
      for _, name in ipairs(names) do
        require(name)
      end
      _G.require = real_require
      return { edges = edges, problems = problems }
    ]],
    { H.plugin_dir, names }
  )
  vim.rpcnotify(job, 'nvim_command', 'qall!')
  assert.are.same({ 0 }, vim.fn.jobwait({ job }, 20000))
  return result.edges, result.problems
end

describe('the modules', function()
  it('are read for their requires, in function bodies too, but not in strings or comments', function()
    local source = [==[
      local a = require('hydra.a')
      local b = require "hydra.b"
      local function later() return require('hydra') end
      -- require('hydra.comment')
      --[[ require('hydra.long_comment') ]]
      local text = "set server.cmd in require('hydra').setup()"
      local long = [[ require('hydra.long_string') ]]
      local other = x.require('hydra.method')
    ]==]
    assert.are.same({ 'hydra.a', 'hydra.b', 'hydra' }, required_names(source))
    assert.are.same(
      { 'hydra', 'hydra.race', 'hydra' },
      find_cycle({ ['hydra'] = { ['hydra.race'] = true }, ['hydra.race'] = { ['hydra'] = true } })
    )
  end)

  it('require each other without a cycle', function()
    local modules = plugin_modules()
    assert.truthy(modules['hydra'], vim.inspect(modules))
    assert.truthy(modules['hydra.actions.race'], vim.inspect(modules))
    local graph = require_graph(modules)
    assert.is_true(graph['hydra']['hydra.actions.race'], vim.inspect(graph['hydra']))
    local cycle = find_cycle(graph)
    assert.is_nil(cycle, 'a require cycle: ' .. table.concat(cycle or {}, ' -> '))
    -- Nothing requires init.lua: it is what plugin/hydra.lua and a user's config call.
    for name, wanted in pairs(graph) do
      assert.is_nil(wanted['hydra'], name .. ' requires hydra (init.lua)')
    end
  end)

  it('all load in a separate Neovim, none requiring one that is still loading', function()
    local modules = plugin_modules()
    local names = vim.tbl_keys(modules)
    table.sort(names)
    local edges, problems = load_traced(names)
    assert.are.same({}, problems)
    -- What loading required, the reading of the source found too.
    local graph = require_graph(modules)
    assert.is_true(#edges > #names, vim.inspect(edges))
    for _, edge in ipairs(edges) do
      assert.is_true(graph[edge[1]][edge[2]] == true, edge[1] .. ' requires ' .. edge[2] .. ' when it loads')
    end
  end)
end)
