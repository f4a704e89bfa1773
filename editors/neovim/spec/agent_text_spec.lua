-- An agent's text is shown as text, against the real hydra: an agent that
-- prints terminal control sequences (a clipboard write, a title, a link,
-- screen clearing, C1 controls) and names a file with more of them. Its
-- output buffer, the scoreboard, the diff's quickfix list and tab names and
-- every message show them visibly escaped, as the terminal does
-- ("^[]52;c;...^G"), and hold no control character themselves.

local H = require('helpers')
local race = require('hydra.race')
local ui = require('hydra.ui')

local find = H.find

-- The first control character in `text` (tab and newline aside), as a byte, or nil.
local function control_in(text)
  local at = text:find('[%z\1-\8\11-\31\127]') or text:find('\194[\128-\159]')
  return at and text:byte(at) or nil
end

local function assert_plain(texts, what)
  for _, text in ipairs(texts) do
    local byte = control_in(text)
    assert(byte == nil, string.format('%s holds control character %d: %s', what, byte or 0, vim.inspect(text)))
  end
end

describe("an agent's control sequences", function()
  local root, r

  setup(function()
    root = H.prepare({ scores_on_finish = false })
    H.add_hostile_agent(root, 'escapes', 'terminal_escapes.sh')
  end)

  teardown(H.clean_up)

  it('show as text in visible form', function()
    assert.are.equal(
      'a^[]52;c;aGk=^Gb cr^M del^? c1 \\u009b6n tab\tok',
      ui.visible('a\27]52;c;aGk=\7b cr\r del\127 c1 \194\1556n tab\tok')
    )
  end)

  it('never reach the output buffer, the scoreboard, the diff or a message as themselves', function()
    r = H.start_race(root, { 'escapes', 'fixer' }, 'make add() add')
    H.wait_race(r.id)
    race.show(r, 'tab')
    race.flush()
    local buf = H.find_buffer(race.output_key(r.id, 'escapes'))
    H.wait(function()
      race.flush()
      return find(H.buffer_text(buf), 'the end ')
    end, "the agent's last line")
    local lines = H.buffer_lines(buf)
    assert.is_not_nil(H.line_with(lines, '^[]52;c;c2VjcmV0^Gclipboard'))
    assert.is_not_nil(H.line_with(lines, '^[]8;;https://evil.example/^[\\link^[]8;;^[\\'))
    assert.is_not_nil(H.line_with(lines, '\\u009b6n c1 csi \\u009d52;c;eA==\\u009c'))
    assert.is_not_nil(H.line_with(lines, 'on stderr ^[]52;c;c3RkZXJy^G'))
    assert_plain(lines, 'the output buffer')

    -- The scoreboard quotes its failure and stderr.
    local board
    require('hydra').scores({
      race = r.id,
      callback = function(buf)
        board = buf
      end,
    })
    H.wait(function()
      return board ~= nil
    end, 'the scoreboard')
    assert.truthy(find(H.buffer_text(board), 'escapes'))
    assert_plain(H.buffer_lines(board), 'the scoreboard')

    -- The file it named: in the quickfix list and the buffer names, escaped.
    H.open_diff({ race = r.id, agent = 'escapes' })
    local shown = {}
    for _, item in ipairs(vim.fn.getqflist()) do
      table.insert(shown, item.module)
      table.insert(shown, item.text)
      table.insert(shown, vim.fn.bufname(item.bufnr))
    end
    assert.is_not_nil(H.line_with(shown, 'evil^[]52;c;bmFtZQ==^G.txt'))
    assert_plain(shown, 'the diff')

    assert_plain(H.messages(), 'a message')
  end)
end)
