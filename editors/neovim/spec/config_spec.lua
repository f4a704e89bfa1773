-- setup() options, :HydraRace's argument syntax, how events read, and the
-- score colours: the parts that need no server.

local H = require('helpers')
local config = require('hydra.config')
local hydra = require('hydra')
local race = require('hydra.race')
local transcript = require('hydra.transcript')
local ui = require('hydra.ui')

describe('setup()', function()
  before_each(function()
    H.capture_notifications()
  end)
  after_each(function()
    config.setup({})
    H.restore_notifications()
  end)

  it('applies valid options and reports nothing', function()
    local ok = hydra.setup({
      server = { cmd = { '/opt/hydra/bin/hydra', 'serve', '--log-level', 'debug' } },
      agents = { 'claude', 'codex' },
      window = { layout = 'vertical', border = 'single', follow = false, scores_on_finish = false },
      output = { update_interval_ms = 250 },
      keymaps = { merge = false, diff = 'D' },
    })
    assert.is_true(ok)
    assert.are.same({}, H.notifications)
    local o = config.options
    assert.are.same({ '/opt/hydra/bin/hydra', 'serve', '--log-level', 'debug' }, o.server.cmd)
    assert.are.same({ 'claude', 'codex' }, o.agents)
    assert.are.equal('vertical', o.window.layout)
    assert.are.equal('single', o.window.border)
    assert.is_false(o.window.follow)
    assert.are.equal(250, o.output.update_interval_ms)
    assert.is_false(o.keymaps.merge)
    assert.are.equal('D', o.keymaps.diff)
    -- What was not given keeps its default.
    assert.are.equal('q', o.keymaps.close)
  end)

  it('warns about unknown keys, naming them, and keeps the rest', function()
    local ok = hydra.setup({ agents = { 'codex' }, layuot = 'tab', window = { bordr = 'single' } })
    assert.is_false(ok)
    local warnings = H.messages(vim.log.levels.WARN)
    table.sort(warnings)
    assert.are.same({ "hydra: unknown option 'layuot'", "hydra: unknown option 'window.bordr'" }, warnings)
    assert.are.same({ 'codex' }, config.options.agents)
    assert.are.same({}, H.take_errors())
  end)

  it('reports a value of the wrong type as an error and keeps the default', function()
    local ok = hydra.setup({
      server = { cmd = 'hydra serve' },
      window = { layout = 'diagonal' },
      output = { update_interval_ms = 0 },
      keymaps = { close = true },
    })
    assert.is_false(ok)
    local errors = H.take_errors()
    assert.are.equal(4, #errors)
    local text = table.concat(errors, '\n')
    assert.truthy(text:find("option 'server.cmd' must be a non-empty list of strings", 1, true))
    assert.truthy(text:find("option 'window.layout' must be one of 'tab', 'vertical', 'horizontal', 'none'", 1, true))
    assert.truthy(text:find("option 'output.update_interval_ms' must be a positive integer", 1, true))
    assert.truthy(text:find("option 'keymaps.close' must be a key or false", 1, true))
    assert.are.same({ 'hydra', 'serve' }, config.options.server.cmd)
    assert.are.equal('tab', config.options.window.layout)
    assert.are.equal(100, config.options.output.update_interval_ms)
    assert.are.equal('q', config.options.keymaps.close)
  end)

  it('rejects options that are not a table', function()
    assert.is_false(hydra.setup('fast'))
    assert.are.equal(1, #H.take_errors())
    assert.are.same(config.defaults(), config.options)
  end)
end)

describe(':HydraRace arguments', function()
  it('take agents, then the task after --', function()
    local agents, task = hydra.parse_race_args('claude codex -- fix the  flaky test -- now')
    assert.are.same({ 'claude', 'codex' }, agents)
    assert.are.equal('fix the  flaky test -- now', task)
  end)

  it('may give only agents, only a task, or nothing', function()
    local agents, task = hydra.parse_race_args('claude claude')
    assert.are.same({ 'claude', 'claude' }, agents)
    assert.is_nil(task)
    agents, task = hydra.parse_race_args('-- add a README')
    assert.are.same({}, agents)
    assert.are.equal('add a README', task)
    agents, task = hydra.parse_race_args('codex --')
    assert.are.same({ 'codex' }, agents)
    assert.is_nil(task)
    agents, task = hydra.parse_race_args('')
    assert.are.same({}, agents)
    assert.is_nil(task)
  end)

  it('are completed with agent names before the --', function()
    -- Without a server, the names come from setup(); the server adds every
    -- name it accepts (race_spec covers that).
    config.setup({ agents = { 'codex', 'claude', 'copilot' } })
    local names = hydra.complete_agents('co', 'HydraRace co')
    assert.truthy(vim.tbl_contains(names, 'codex'))
    assert.truthy(vim.tbl_contains(names, 'copilot'))
    assert.is_false(vim.tbl_contains(names, 'claude'))
    assert.are.same({}, hydra.complete_agents('', 'HydraRace codex -- fix '))
    config.setup({})
  end)
end)

describe('agent events', function()
  it('read like an agent log', function()
    local cases = {
      { { kind = 'text', text = 'I will fix it' }, 'I will fix it', nil },
      { { kind = 'toolCall', tool = 'Edit', detail = 'shop/cart.py\nmore' }, '→ Edit shop/cart.py', 'HydraToolCall' },
      { { kind = 'toolResult', tool = 'Bash', detail = 'exit 1', isError = true }, '  ← Bash: exit 1 (error)', 'HydraError' },
      { { kind = 'toolResult', detail = '3 passed' }, '  ← result: 3 passed', 'HydraToolResult' },
      { { kind = 'fileChange', path = 'a.py', change = 'update' }, '✎ update a.py', 'HydraFileChange' },
      { { kind = 'usage', usage = { inputTokens = 10, outputTokens = 2 } }, '· tokens: 10 in, 2 out', 'HydraMuted' },
      { { kind = 'error', text = 'rate limited' }, '✗ rate limited', 'HydraError' },
      {
        { kind = 'summary', text = 'All done', turns = 3, usage = { costUsd = 0.5 } },
        '■ done · 3 turns · $0.5000\nAll done',
        'HydraSummary',
      },
      {
        { kind = 'summary', isError = true, turns = 2, warnings = { 'permission denied: Write /etc/hosts' } },
        '■ ended with an error · 2 turns\n⚠ permission denied: Write /etc/hosts',
        'HydraError',
      },
      { { kind = 'raw', text = 'plain line' }, 'plain line', nil },
    }
    for _, c in ipairs(cases) do
      local text, group = transcript.render_event(c[1])
      assert.are.equal(c[2], text)
      assert.are.equal(c[3], group)
    end
    -- A summary that says nothing but "it ended" takes no line.
    assert.is_nil((transcript.render_event({ kind = 'summary', isError = false })))
  end)

  it('read back from what hydra stored: the last words said once, stderr marked', function()
    local entries = transcript.entries({
      { kind = 'error', text = 'rate limited', stream = 'stderr' },
      { kind = 'text', text = 'to stderr', stream = 'stderr' },
      { kind = 'text', text = 'Done.', stream = 'stdout' },
      { kind = 'summary', text = 'Done.', turns = 1, stream = 'stdout' },
      { kind = 'summary', isError = false, stream = 'stdout' },
    })
    assert.are.same({
      { '✗ rate limited', 'HydraError' },
      { 'to stderr', 'HydraStderr' },
      { 'Done.', nil },
      { '■ done · 1 turns', 'HydraSummary' },
    }, entries)
    assert.are.equal('■ failed · exit 3 · 0.2 s', transcript.finished_line('failed', 3, 200, nil))
    assert.are.equal('■ cancelled · 1.5 s · tokens: 5 in', transcript.finished_line('cancelled', vim.NIL, 1500, { inputTokens = 5 }))
  end)

  it(':HydraLog reads a race, an agent and raw, each optional', function()
    assert.are.same({}, hydra.parse_log_args(''))
    assert.are.same({ agent = 'fixer' }, hydra.parse_log_args('fixer'))
    assert.are.same({ agent = 'fixer', raw = true }, hydra.parse_log_args(' fixer raw '))
    assert.are.same({ race = '20261121-101500-a3f9', agent = 'fixer', raw = true }, hydra.parse_log_args('20261121-101500-a3f9 fixer raw'))
    assert.are.same({ race = '20261121-101500-a3f9' }, hydra.parse_log_args('20261121-101500-a3f9'))
    assert.are.same({ raw = true }, hydra.parse_log_args('raw'))
  end)

  it('are told from JSON stream lines', function()
    assert.is_true(race.looks_like_json('{"type":"assistant","message":{}}'))
    assert.is_false(race.looks_like_json('fix: reading lib.sh'))
    assert.is_false(race.looks_like_json('{ not closed'))
  end)
end)

describe('score colours', function()
  it('are green above 80, yellow from 50 to 80 and red below 50', function()
    assert.are.equal('HydraScoreGood', ui.score_group(100))
    assert.are.equal('HydraScoreGood', ui.score_group(80.1))
    assert.are.equal('HydraScoreFair', ui.score_group(80))
    assert.are.equal('HydraScoreFair', ui.score_group(50))
    assert.are.equal('HydraScorePoor', ui.score_group(49.9))
    assert.are.equal('HydraScorePoor', ui.score_group(0))
  end)

  it('are highlight groups a user or colour scheme can override', function()
    vim.cmd('highlight HydraScoreGood guifg=#123456')
    -- What the plugin does after every :colorscheme.
    ui.define_highlights()
    local hl = vim.api.nvim_get_hl_by_name('HydraScoreGood', true)
    assert.are.equal(0x123456, hl.foreground)
    vim.cmd('highlight clear HydraScoreGood')
    ui.define_highlights()
    hl = vim.api.nvim_get_hl_by_name('HydraScoreGood', true)
    -- Neovim 0.10's own green, or the plugin's before it.
    local expected = vim.fn.has('nvim-0.10') == 1 and vim.api.nvim_get_hl_by_name('DiagnosticOk', true).foreground
      or 0x3fb950
    assert.are.equal(expected, hl.foreground)
  end)
end)
