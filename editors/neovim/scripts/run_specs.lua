-- Runs the busted specs inside this headless Neovim, so that they drive the
-- real editor: `nvim --headless --clean -c "luafile scripts/run_specs.lua"`
-- (Neovim 0.7 has no `nvim -l`). scripts/test.sh sets HYDRA_PLUGIN_DIR and
-- HYDRA_BIN. Exits 0 when every spec passed, 1 otherwise.
--
-- An error that escapes into `-c` would leave Neovim running (or exiting 0),
-- so everything runs under pcall and the exit code is set here.

local plugin = assert(os.getenv('HYDRA_PLUGIN_DIR'), 'HYDRA_PLUGIN_DIR is not set')

-- Debian's busted and its libraries are Lua 5.1 modules; LuaJIT loads them too.
package.path = table.concat({
  plugin .. '/spec/?.lua',
  '/usr/share/lua/5.1/?.lua',
  '/usr/share/lua/5.1/?/init.lua',
  package.path,
}, ';')
package.cpath = '/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;' .. package.cpath

-- The plugin, loaded the way a plugin manager loads it.
vim.opt.runtimepath:prepend(plugin)
vim.cmd('runtime plugin/hydra.lua')

local function finish(code)
  io.stdout:flush()
  io.stderr:flush()
  -- Stop the servers the specs left running before leaving, so that no
  -- hydra process outlives the run.
  pcall(function()
    local client = require('hydra.client')
    for _, root in ipairs(client.roots()) do
      client.stop(root)
    end
    vim.wait(5000, function()
      return #client.roots() == 0
    end, 20)
  end)
  os.exit(code)
end

local pattern = os.getenv('HYDRA_SPEC_FILTER')
arg = { [0] = 'busted', '--output=TAP', '--pattern=_spec', plugin .. '/spec' }
if pattern and pattern ~= '' then
  table.insert(arg, 3, '--filter=' .. pattern)
end

local ok, err = pcall(require('busted.runner'), { standalone = false })
-- With standalone = false busted returns when every spec passed and raises
-- error(nil) when one failed; any other error is the runner's own.
if ok then
  finish(0)
end
if err ~= nil then
  io.stderr:write('busted runner error: ' .. tostring(err) .. '\n')
end
finish(1)
