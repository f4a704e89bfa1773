-- :checkhealth hydra, as Neovim runs it.

local H = require('helpers')

local function checkhealth()
  vim.cmd('silent checkhealth hydra')
  local text = H.buffer_text(0)
  vim.cmd('silent! tabclose')
  return text
end

local function find(haystack, needle)
  return haystack:find(needle, 1, true) ~= nil
end

describe(':checkhealth hydra', function()
  local root

  setup(function()
    root = H.make_repo()
    vim.cmd('cd ' .. vim.fn.fnameescape(root))
  end)

  after_each(function()
    require('hydra').setup({})
    H.reset_windows()
  end)

  it('reports the binary, its version, the repository and the agents', function()
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } } })
    local version = H.run({ H.hydra_bin, '--version' })[1]
    local text = checkhealth()
    assert.truthy(find(text, 'found ' .. H.hydra_bin), text)
    assert.truthy(find(text, 'version: ' .. version), text)
    assert.truthy(find(text, 'git repository: ' .. root), text)
    assert.truthy(find(text, 'hydra.toml found'), text)
    assert.truthy(find(text, 'hydra runs eval sets (`hydra eval`, :HydraEval)'), text)
    -- The repository's scripted agents are available; hydra names their binary.
    for _, name in ipairs({ 'breaker', 'chatty', 'fixer', 'sleeper' }) do
      assert.truthy(find(text, name .. ' (command): ' .. H.agent_script), text)
    end
    -- The stand-in for claude answered --version.
    assert.truthy(find(text, 'replay (claude): ' .. H.fixtures .. '/claude-replay.sh  2.1.197 (Claude Code)'), text)
    -- Its hydra.toml asks for no sandbox: said, not warned about.
    assert.truthy(find(text, 'agents run unconfined: [general] sandbox = "off" in hydra.toml'), text)
    assert.is_false(find(text, 'ERROR'), text)
    -- Built-in agents not installed here say so each, and the PATH searched comes once.
    assert.truthy(find(text, "'aider' not found on PATH"), text)
    local _, times = text:gsub(vim.pesc('PATH searched: ' .. vim.env.PATH), '')
    assert.are.equal(1, times, text)
  end)

  it('says whether agents run confined, and what to do when they cannot be', function()
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } } })
    local config = H.read_file(root .. '/hydra.toml')
    H.write_file(root .. '/hydra.toml', (config:gsub('sandbox = "off"', 'sandbox = "auto"')))
    local confined = checkhealth()
    assert.truthy(find(confined, 'agents run confined by bubblewrap'), confined)
    -- A bwrap that cannot make its namespaces, first on the PATH.
    local bin = H.broken_bwrap_dir()
    local path = vim.env.PATH
    vim.env.PATH = bin .. ':' .. path
    local unconfined = checkhealth()
    H.write_file(root .. '/hydra.toml', (config:gsub('sandbox = "off"', 'sandbox = "bubblewrap"')))
    local refused = checkhealth()
    vim.env.PATH = path
    H.write_file(root .. '/hydra.toml', config)
    assert.truthy(find(unconfined, 'WARNING'), unconfined)
    assert.truthy(find(unconfined, 'agents run unconfined: '), unconfined)
    assert.truthy(find(unconfined, 'No permissions'), unconfined)
    assert.truthy(find(unconfined, 'apt install bubblewrap'), unconfined)
    assert.truthy(find(refused, 'ERROR'), refused)
    assert.truthy(find(refused, 'races are refused'), refused)
  end)

  it('says whether the running hydra serve runs eval sets, and counts the eval reports', function()
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } } })
    vim.fn.mkdir(root .. '/.hydra/evals', 'p')
    H.write_file(root .. '/.hydra/evals/basics-20261126T051500.json', '{}')
    H.request(root, 'hydra/ping')
    local text = checkhealth()
    H.stop_servers()
    vim.fn.delete(root .. '/.hydra/evals', 'rf')
    assert.truthy(find(text, 'hydra serve runs eval sets (:HydraEval)'), text)
    assert.truthy(find(text, '1 eval report under .hydra/evals (:HydraEvalReport shows the newest)'), text)
  end)

  it('reports a missing binary as an error', function()
    require('hydra').setup({ server = { cmd = { '/nonexistent/hydra', 'serve' } } })
    local text = checkhealth()
    assert.truthy(find(text, 'ERROR'), text)
    assert.truthy(find(text, "'/nonexistent/hydra' not found"), text)
  end)

  it('warns outside a git repository', function()
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } } })
    local outside = vim.fn.tempname()
    vim.fn.mkdir(outside, 'p')
    vim.cmd('cd ' .. vim.fn.fnameescape(outside))
    local text = checkhealth()
    vim.cmd('cd ' .. vim.fn.fnameescape(root))
    assert.truthy(find(text, 'WARNING'), text)
    assert.truthy(find(text, 'not inside a git repository'), text)
  end)
end)
