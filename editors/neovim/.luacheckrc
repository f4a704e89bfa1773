-- luacheck (Debian's lua-check): `luacheck .` from this folder.
std = 'luajit'
-- The plugin sets options through vim.bo, vim.wo and vim.g; the specs replace vim.notify and vim.ui.
globals = { 'vim' }
max_line_length = false
files['spec/'] = { std = '+busted' }
-- busted reads its command line from the global `arg`.
files['scripts/run_specs.lua'] = { globals = { 'arg' } }
