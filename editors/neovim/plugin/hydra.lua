-- hydra: race coding agents from Neovim. Only the commands live here; the
-- code is loaded the first time one of them runs (lua/hydra/).
if vim.g.loaded_hydra then
  return
end
vim.g.loaded_hydra = true

if vim.fn.has('nvim-0.7') ~= 1 then
  vim.api.nvim_err_writeln('hydra needs Neovim 0.7 or later')
  return
end

local function hydra()
  return require('hydra')
end

local function agent_target(opts)
  -- Neovim 0.7 gives an empty first argument when there is none.
  local agent = opts.fargs[1]
  return { agent = agent ~= '' and agent or nil }
end

local command = vim.api.nvim_create_user_command

command('HydraRace', function(opts)
  hydra().race_command(opts.args)
end, {
  nargs = '*',
  desc = 'Race agents on a task: :HydraRace [agent ...] [-- task]',
  complete = function(arglead, cmdline)
    return hydra().complete_agents(arglead, cmdline)
  end,
})

command('HydraCollab', function(opts)
  hydra().collab_command(opts.args)
end, {
  nargs = '*',
  desc = 'A builder and a reviewer agent in rounds: :HydraCollab [builder [reviewer]] [-- task]',
  complete = function(arglead, cmdline)
    return hydra().complete_agents(arglead, cmdline)
  end,
})

command('HydraIterations', function(opts)
  local id = opts.fargs[1]
  hydra().iterations({ race = id ~= '' and id or nil })
end, {
  nargs = '?',
  desc = "The iterations of a collaboration (default: the current one): :HydraIterations [race]",
  complete = function(arglead)
    return hydra().complete_collabs(arglead)
  end,
})

command('HydraStatus', function()
  hydra().status()
end, { nargs = 0, desc = "The repository's races" })

-- A command about agents of the current race: one (nargs '?') or more; of
-- a collaboration, its iterations too ("builder@2"), unless `agents_only`.
local function race_agent_command(name, run, desc, nargs, agents_only)
  command(name, run, {
    nargs = nargs or '?',
    desc = desc,
    complete = function(arglead)
      return hydra().complete_race_agents(arglead, agents_only)
    end,
  })
end

race_agent_command('HydraCancel', function(opts)
  hydra().cancel(agent_target(opts))
end, 'Cancel the current race, or one of its agents', nil, true)
race_agent_command('HydraMerge', function(opts)
  hydra().merge(agent_target(opts))
end, "Merge an agent's branch (default: the winner), or a collaboration's iteration: builder@N")
race_agent_command('HydraFindings', function(opts)
  hydra().findings(agent_target(opts))
end, "The build and lint findings of an agent's files (default: every agent's), in the quickfix list", nil, true)
race_agent_command('HydraDiff', function(opts)
  hydra().diff_command(opts.args)
end, "Review an agent's (or an iteration's, builder@N) changes against your files, or compare two: :HydraDiff [agent [agent]]", '*')

command('HydraLog', function(opts)
  hydra().log_command(opts.args)
end, {
  nargs = '*',
  desc = "An agent's complete output: :HydraLog [race] [agent] [raw]",
  complete = function(arglead)
    return hydra().complete_log(arglead)
  end,
})

command('HydraScores', function()
  hydra().scores()
end, { nargs = 0, desc = 'The scoreboard of the current race' })

-- complete = 'file' also has Neovim expand `%`, `#` and `~` in the arguments.
command('HydraEval', function(opts)
  hydra().eval_command(opts.fargs)
end, {
  nargs = '+',
  complete = 'file',
  desc = 'Run an eval set: :HydraEval {set.toml} [--agents a,b] [--samples N] [--pass-k 1,2]',
})

command('HydraEvalCancel', function(opts)
  local id = opts.fargs[1]
  hydra().eval_cancel({ eval = id ~= '' and id or nil })
end, {
  nargs = '?',
  desc = 'Cancel an evaluation (default: the latest one started here that runs): :HydraEvalCancel [evalId]',
  complete = function(arglead)
    return hydra().complete_evals(arglead)
  end,
})

command('HydraEvalReport', function(opts)
  local report = opts.fargs[1]
  hydra().eval_report({ report = report ~= '' and report or nil })
end, {
  nargs = '?',
  complete = 'file',
  desc = "An eval report's tables (default: the newest one): :HydraEvalReport [report.json]",
})
