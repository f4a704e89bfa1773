-- What Neovim tells the user about confinement, against the real hydra: a
-- race hydra cannot confine says so when it starts, and an agent that
-- reaches outside its worktree is named, with what it did.

local H = require('helpers')
local race = require('hydra.race')

local find = H.find

-- `root`'s hydra.toml with `from` replaced by `to` (plain text), committed.
local function edit_config(root, from, to)
  local text = H.read_file(root .. '/hydra.toml')
  local at = text:find(from, 1, true)
  assert(at, 'hydra.toml has no ' .. from)
  text = text:sub(1, at - 1) .. to .. text:sub(at + #from)
  H.write_file(root .. '/hydra.toml', text)
  H.git(root, 'commit', '-q', '-am', 'hydra.toml for this spec')
end

describe('confinement, as Neovim shows it', function()
  setup(function()
    H.capture_notifications()
  end)

  teardown(H.clean_up)

  after_each(function()
    H.stop_servers()
    H.reset_windows()
    H.assert_no_errors()
  end)

  it('a race that runs unconfined because bubblewrap does not work says so when it starts', function()
    local root = H.make_repo()
    edit_config(root, 'sandbox = "off"', 'sandbox = "auto"')
    -- A machine where bubblewrap cannot make its namespaces (a container
    -- that forbids them): a bwrap that fails, first on hydra's PATH.
    local bin = H.broken_bwrap_dir()
    local path = vim.env.PATH
    vim.env.PATH = bin .. ':' .. path
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } }, window = { scores_on_finish = false } })
    vim.cmd('cd ' .. vim.fn.fnameescape(root))
    local ok, err = pcall(function()
      local r = H.start_race(root, { 'fixer' }, 'make add() add')
      local said = H.wait_message('race ' .. r.id .. ' runs its agents unconfined: ', vim.log.levels.WARN)
      assert.truthy(find(said, 'No permissions'), said)
      H.wait_race(r.id)
    end)
    vim.env.PATH = path
    assert(ok, err)
  end)

  it('an agent that moved your branch is named with what it did, and cannot win', function()
    local root = H.make_repo()
    H.git(root, 'tag', 'v1')
    H.add_hostile_agent(root, 'evil', 'move_refs.sh')
    local main = H.git(root, 'rev-parse', 'main')[1]
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } }, window = { scores_on_finish = false } })
    vim.cmd('cd ' .. vim.fn.fnameescape(root))

    local r = H.start_race(root, { 'evil' }, 'anything')
    local said = H.wait_message('evil (race ' .. r.id .. ') reached outside its worktree and cannot win: ', vim.log.levels.ERROR)
    assert.truthy(find(said, 'refs/heads/main'), said)
    assert.truthy(find(said, 'put back'), said)
    H.take_errors()
    H.wait_race(r.id)
    assert.are.equal(main, H.git(root, 'rev-parse', 'main')[1], 'hydra put main back')

    -- Its output says so too, after how it ended.
    race.show(r, 'tab')
    local buf = H.find_buffer(race.output_key(r.id, 'evil'))
    H.wait(function()
      race.flush()
      return find(H.buffer_text(buf), 'outside its worktree: refs/heads/main')
    end, "the agent's output to name what it did")
  end)
end)
