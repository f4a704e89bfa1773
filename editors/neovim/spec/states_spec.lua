-- The states hydra documents for races and agents (docs/protocol.md) are the
-- ones the plugin knows: a state it did not know would leave an agent that
-- has ended looking as if it ran on (no result, no end line, no scores).

local H = require('helpers')
local protocol = require('hydra.protocol')

-- The backquoted words of the sentence of docs/protocol.md that starts with `lead`.
local function documented_states(lead)
  local doc = table.concat(vim.fn.readfile(H.repository .. '/docs/protocol.md'), '\n')
  local start = assert(doc:find(lead, 1, true), lead .. ' is not in docs/protocol.md')
  local sentence = doc:sub(start, doc:find('%.', start) or #doc)
  local states = {}
  for word in sentence:gmatch('`(%a+)`') do
    if word ~= 'state' then
      table.insert(states, word)
    end
  end
  return states
end

describe('states', function()
  it('every agent state but queued and running is an end the plugin knows', function()
    local states = documented_states("An agent's `state` is")
    assert.is_true(vim.tbl_contains(states, 'setupFailed'), vim.inspect(states))
    for _, state in ipairs(states) do
      local ongoing = state == 'queued' or state == 'running'
      assert.are.equal(not ongoing, protocol.finished_agent_states[state] == true, state)
    end
    assert.are.equal(#states - 2, vim.tbl_count(protocol.finished_agent_states))
  end)

  it('every race state but running and scoring is an end the plugin knows', function()
    local states = documented_states("A race's `state` is")
    for _, state in ipairs(states) do
      local ongoing = state == 'running' or state == 'scoring'
      assert.are.equal(not ongoing, protocol.finished_race_states[state] == true, state)
    end
    assert.are.equal(#states - 2, vim.tbl_count(protocol.finished_race_states))
  end)
end)
