-- lua/hydra/protocol.lua mirrors the names hydra declares once in C++:
-- every method and notification of protocol/methods.h, and the error codes
-- of protocol/errors.h, and the params members of each request as
-- protocol/params.json lists them. A name renamed or added on one side and not
-- on the other fails here, not in a race.

local H = require('helpers')
local protocol = require('hydra.protocol')
local client = require('hydra.client')

-- "WorkDoneProgressCreate" -> "work_done_progress_create",
-- "NotARepository" -> "not_a_repository": the Lua mirror's spelling.
local function snake(name)
  return (name:gsub('(%l)(%u)', '%1_%2'):gsub('(%u)(%u%l)', '%1_%2'):lower())
end

local function read(path)
  return H.read_file(H.repository .. '/' .. path)
end

-- The names methods.h declares: { constant = value } ("kRaceFinished" = "hydra/raceFinished").
local function declared_methods()
  local out = {}
  for constant, value in read('protocol/methods.h'):gmatch('inline constexpr std::string_view (k%w+) = "([^"]*)";') do
    out[constant] = value
  end
  return out
end

-- The codes of errors.h's ErrorCode: { Name = code }.
local function declared_errors()
  local header = read('protocol/errors.h')
  local enum = assert(header:match('enum class ErrorCode : int {(.-)};'), 'no ErrorCode in protocol/errors.h')
  local out = {}
  for name, code in enum:gmatch('(%u%w*) = (%-%d+)') do
    out[name] = tonumber(code)
  end
  return out
end

describe('the protocol mirror', function()
  it('has every method and notification of protocol/methods.h, under its name', function()
    local declared = declared_methods()
    local names = vim.tbl_keys(declared)
    assert.is_true(#names >= 30, 'read ' .. #names .. ' names from methods.h: ' .. vim.inspect(declared))
    for constant, value in pairs(declared) do
      -- kDollarPrefix ("$/") starts names; it is no name itself.
      if value:sub(-1) ~= '/' then
        local key = snake(constant:sub(2))
        assert.are.equal(value, protocol[key], string.format('protocol.%s (methods.h %s)', key, constant))
      end
    end
  end)

  it('names nothing that protocol/methods.h does not declare', function()
    local values = {}
    for _, value in pairs(declared_methods()) do
      values[value] = true
    end
    for key, value in pairs(protocol) do
      if type(value) == 'string' then
        assert.is_true(values[value] == true, string.format("protocol.%s = '%s' is not in methods.h", key, value))
      end
    end
  end)

  it("has each error code of protocol/errors.h it names, and every one of hydra's own", function()
    local declared = declared_errors()
    assert.are.equal(-32010, declared.UnknownRace, vim.inspect(declared))
    local by_key = {}
    for name, code in pairs(declared) do
      by_key[snake(name)] = code
    end
    for key, code in pairs(protocol.errors) do
      assert.are.equal(by_key[key], code, string.format('protocol.errors.%s (errors.h)', key))
    end
    -- hydra's application codes (-32010 and below) all have a name here.
    for name, code in pairs(declared) do
      if code <= -32010 and code >= -32099 then
        assert.are.equal(code, protocol.errors[snake(name)], string.format('protocol.errors.%s (errors.h %s)', snake(name), name))
      end
    end
  end)

  it('lists the params members of every request as protocol/params.json does', function()
    local listed = vim.json.decode(read('protocol/params.json'))
    listed['//'] = nil
    local requests = vim.tbl_keys(listed)
    assert.is_true(#requests >= 16, 'read ' .. #requests .. ' requests from params.json')
    table.sort(requests)
    local mirrored = vim.tbl_keys(protocol.params)
    table.sort(mirrored)
    assert.are.same(requests, mirrored)
    for method, members in pairs(listed) do
      local mine = vim.deepcopy(protocol.params[method])
      table.sort(members)
      table.sort(mine)
      assert.are.same(members, mine, method)
    end
  end)

  it('refuses to send a member its request does not take, before starting a server', function()
    local root = vim.fn.tempname()
    local got
    client.request(root, protocol.race, { task = 'x', agent = 'claude' }, function(err, result)
      got = { err = err, result = result }
    end)
    assert.is_not_nil(got, 'answered at once')
    assert.is_nil(got.result)
    assert.matches("hydra/race takes no parameter 'agent'", got.err.message, 1, true)
    assert.is_nil(client.get(root), 'no server was started for it')
    assert.is_nil(protocol.unknown_param(protocol.race, { task = 'x', agents = { 'a' }, base = 'main' }))
    assert.is_nil(protocol.unknown_param('initialize', { anything = true }))
  end)
end)
