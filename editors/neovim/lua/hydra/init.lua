-- hydra for Neovim: race coding agents on the current repository, watch them,
-- read the scoreboard, review each agent's diff and merge the one you want.
-- Everything that decides anything happens in `hydra serve`; this plugin asks
-- and shows (docs/protocol.md describes every request used here).

local client = require('hydra.client')
local collab = require('hydra.collab')
local config = require('hydra.config')
local eval = require('hydra.eval')
local findings = require('hydra.findings')
local protocol = require('hydra.protocol')
local race = require('hydra.race')
local transcript = require('hydra.transcript')
local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

ui.define_highlights()
local group = vim.api.nvim_create_augroup('hydra', { clear = true })
-- A colour scheme clears every group first; put the defaults back after it.
vim.api.nvim_create_autocmd('ColorScheme', { group = group, callback = ui.define_highlights })
-- The score colours of Neovim before 0.10 depend on 'background'.
vim.api.nvim_create_autocmd('OptionSet', { group = group, pattern = 'background', callback = ui.define_highlights })

--- Configures the plugin; see :help hydra-setup. Returns true when every
--- option was valid (problems are reported through vim.notify).
function M.setup(options)
  return config.setup(options)
end

local present = util.present

local function repository_root()
  local root = client.find_root()
  if not root then
    vim.notify('hydra: not inside a git repository (hydra races agents on a repository)', vim.log.levels.ERROR)
  end
  return root
end

-- Calls fn(root, race) with the race a command acts on: `target.race` when
-- given, else the current one (race.current).
local function with_race(target, fn)
  local root = target.root or repository_root()
  if not root then
    return
  end
  local got = function(err, r)
    if err then
      client.notify_error(err)
    else
      race.set_latest(root, r.id)
      fn(root, r)
    end
  end
  if target.race then
    race.lookup(root, target.race, got)
  else
    race.current(root, got)
  end
end

local function buffer_agent(r)
  local ok_race, buf_race = pcall(vim.api.nvim_buf_get_var, 0, 'hydra_race')
  local ok_agent, buf_agent = pcall(vim.api.nvim_buf_get_var, 0, 'hydra_agent')
  if ok_race and ok_agent and buf_race == r.id then
    return buf_agent
  end
  return nil
end

-- Calls fn(agentId) with the agent a review command is about: the one named,
-- else the one whose output buffer is current, else the winner, else the
-- only agent, else the one the user picks. In a collaboration the agents to
-- pick from are its iterations ("builder@2").
local function with_agent(root, r, explicit, fn)
  if explicit then
    return fn(explicit)
  end
  local agent = buffer_agent(r)
  if agent then
    return fn(agent)
  end
  local function pick()
    if r.winner then
      return fn(r.winner)
    end
    local is_collab = race.is_collab(r)
    local choices = is_collab and collab.iteration_ids(r) or r.order
    if #choices == 1 then
      return fn(choices[1])
    end
    if #choices == 0 then
      if is_collab then
        return vim.notify('hydra: collaboration ' .. r.id .. ' has no iteration yet', vim.log.levels.ERROR)
      end
      return vim.notify('hydra: race ' .. r.id .. ' has no agents', vim.log.levels.ERROR)
    end
    local prompt = is_collab and ('Iteration of collaboration ' .. r.id .. ':') or ('Agent of race ' .. r.id .. ':')
    vim.ui.select(choices, { prompt = prompt }, function(choice)
      if choice then
        fn(choice)
      end
    end)
  end
  if r.winner or r.state ~= 'completed' or r.scores_asked then
    return pick()
  end
  -- A race this editor did not see finish: its winner is in its scores.
  r.scores_asked = true
  client.request(root, protocol.scores, { raceId = r.id }, function(err, result)
    if not err and present(result.winner) then
      r.winner = result.winner
    end
    pick()
  end)
end

--- Splits :HydraRace's arguments, "claude codex -- fix the flaky test", into
--- agent names and a task (nil when there is no task after "--").
function M.parse_race_args(args)
  local padded = ' ' .. (args or '') .. ' '
  local s, e = padded:find('%s%-%-%s')
  local names, task = padded, nil
  if s then
    names = padded:sub(1, s)
    task = vim.trim(padded:sub(e + 1))
    if task == '' then
      task = nil
    end
  end
  return vim.split(vim.trim(names), '%s+', { trimempty = true }), task
end

-- Asks the user for the agents in one step: the list of hydra/agents to
-- pick from (hydra.picker). Calls fn(names) once they confirmed.
local function pick_agents(root, fn)
  client.request(root, protocol.agents, vim.empty_dict(), function(err, result)
    if err then
      return client.notify_error(err, 'could not list the agents')
    end
    require('hydra.picker').open(root, result.agents or {}, fn)
  end)
end

-- Calls fn(names) when hydra can race every agent named; otherwise says
-- which it cannot and why (race.unknown_agent_text, race.unavailable_text),
-- and calls failed(err). `what` is what did not start (default: the race).
local function check_agents(root, names, fn, failed, what)
  what = what or 'the race'
  client.request(root, protocol.agents, vim.empty_dict(), function(err, result)
    if err then
      client.notify_error(err, what .. ' did not start')
      return failed(err)
    end
    local by_name, known = {}, {}
    for _, a in ipairs(result.agents or {}) do
      by_name[a.name] = a
      table.insert(known, a.name)
    end
    local problems, seen = {}, {}
    for _, name in ipairs(names) do
      local agent = by_name[name]
      if not seen[name] then
        seen[name] = true
        if not agent then
          table.insert(problems, race.unknown_agent_text(name, race.closest_name(name, known)))
        elseif not agent.available then
          table.insert(problems, race.unavailable_text(name, agent.problem))
        end
      end
    end
    if #problems > 0 then
      local message = what .. ' did not start: ' .. table.concat(problems, '; ')
      vim.notify('hydra: ' .. message, vim.log.levels.ERROR)
      return failed({ message = message })
    end
    fn(names)
  end)
end

--- Starts a race. `opts.agents` (names) and `opts.task` are asked for when
--- missing (the agents only when setup() gave no default ones): the agents
--- first, then the task. Agents named without a task are checked before the
--- task is asked for; with one, hydra checks them as the race starts.
--- Either way, an unknown or unavailable agent starts nothing.
--- opts.callback(err, race) runs once hydra answered.
function M.race(opts)
  opts = opts or {}
  local root = opts.root or repository_root()
  if not root then
    return
  end
  local has_task = opts.task ~= nil and vim.trim(opts.task) ~= ''
  local failed = function(err)
    if opts.callback then
      opts.callback(err, nil)
    end
  end
  local function with_agents(fn)
    local named = opts.agents and #opts.agents > 0 and opts.agents
      or (#config.options.agents > 0 and config.options.agents)
      or nil
    if not named then
      return pick_agents(root, fn)
    end
    if has_task then
      return fn(named)
    end
    check_agents(root, named, fn, failed)
  end
  local function with_task(fn)
    if has_task then
      return fn(opts.task)
    end
    vim.ui.input({ prompt = 'Task for the agents: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        fn(input)
      end
    end)
  end
  with_agents(function(agents)
    with_task(function(task)
      race.start(root, task, agents, opts.callback)
    end)
  end)
end

--- :HydraRace [agent ...] [-- task]
function M.race_command(args)
  local agents, task = M.parse_race_args(args)
  M.race({ agents = agents, task = task })
end

--- Splits :HydraCollab's arguments, "bob rita -- add the cart", into
--- { builder?, reviewer?, task? }; nil and why when it names more than two
--- agents.
function M.parse_collab_args(args)
  local names, task = M.parse_race_args(args)
  if #names > 2 then
    return nil, ':HydraCollab takes a builder and a reviewer (or neither, for [collaboration]\'s), then -- and the task'
  end
  return { builder = names[1], reviewer = names[2], task = task }
end

--- Starts a collaboration: `opts.builder` builds, `opts.reviewer` reviews
--- (either may be left to hydra.toml's [collaboration]), on `opts.task`,
--- asked for when missing; `opts.maxIterations`, `opts.untilScore` and
--- `opts.base` go to hydra as they are. Agents named without a task are
--- checked before the task is asked for. opts.callback(err, race) runs once
--- hydra answered.
function M.collab(opts)
  opts = opts or {}
  local root = opts.root or repository_root()
  if not root then
    return
  end
  local failed = function(err)
    if opts.callback then
      opts.callback(err, nil)
    end
  end
  local names = vim.tbl_filter(function(n)
    return n ~= nil
  end, { opts.builder, opts.reviewer })
  local function start(task)
    local params = {
      task = task,
      builder = opts.builder,
      reviewer = opts.reviewer,
      maxIterations = opts.maxIterations,
      untilScore = opts.untilScore,
      base = opts.base,
    }
    collab.start(root, params, opts.callback)
  end
  if opts.task ~= nil and vim.trim(opts.task) ~= '' then
    return start(opts.task)
  end
  local function ask()
    vim.ui.input({ prompt = 'Task for the collaboration: ' }, function(input)
      if input and vim.trim(input) ~= '' then
        start(input)
      end
    end)
  end
  if #names == 0 then
    return ask()
  end
  check_agents(root, names, ask, failed, 'the collaboration')
end

--- :HydraCollab [builder [reviewer]] [-- task]
function M.collab_command(args)
  local opts, why = M.parse_collab_args(args)
  if not opts then
    return vim.notify('hydra: ' .. why, vim.log.levels.ERROR)
  end
  M.collab(opts)
end

--- :HydraIterations [race]: the view of a collaboration's iterations (the
--- current race's by default), as hydra has it now.
function M.iterations(target)
  target = target or {}
  with_race(target, function(_, r)
    if not race.is_collab(r) then
      return vim.notify('hydra: race ' .. r.id .. ' is a race, not a collaboration (:HydraScores shows its results)', vim.log.levels.ERROR)
    end
    local function open()
      local buf = collab.open(r)
      if target.callback then
        target.callback(buf)
      end
    end
    -- One that runs here is drawn live; any other is read again.
    if r.started_here and not protocol.finished_race_states[r.state] then
      return open()
    end
    race.refresh(r, function(err)
      if err then
        return client.notify_error(err)
      end
      open()
    end)
  end)
end

-- The options :HydraEval takes after the eval set, and how each is read:
-- into the key of M.eval's options.
local eval_options = {
  ['--agents'] = { 'agents', 'names' },
  ['--samples'] = { 'samples', 'count' },
  ['--pass-k'] = { 'passK', 'counts' },
  ['--out'] = { 'out', 'path' },
  ['--resume'] = { 'resume', 'path' },
}

local function positive_integer(text)
  local n = tonumber(text)
  if text:match('^%d+$') and n and n >= 1 then
    return n
  end
  return nil
end

-- Reads the value of an option of :HydraEval; nil and why when it is not one.
local function eval_option_value(name, kind, text)
  if kind == 'names' or kind == 'counts' then
    local items = vim.split(text, ',', { plain = true, trimempty = true })
    if #items == 0 then
      return nil, name .. ' takes a list separated by commas'
    end
    if kind == 'names' then
      return items
    end
    local out = {}
    for _, item in ipairs(items) do
      local n = positive_integer(item)
      if not n then
        return nil, string.format("%s takes whole numbers >= 1 separated by commas, not '%s'", name, text)
      end
      table.insert(out, n)
    end
    return out
  elseif kind == 'count' then
    local n = positive_integer(text)
    if not n then
      return nil, string.format("%s takes a whole number >= 1, not '%s'", name, text)
    end
    return n
  end
  return text
end

--- Reads :HydraEval's arguments, "evals/basics.toml --agents claude,codex
--- --samples 5 --pass-k 1,5" (also "--agents=claude,codex"; --out and
--- --resume take a report's path), as a string or the list of its words,
--- into M.eval's options; nil and why when they cannot be read.
function M.parse_eval_args(args)
  local opts = {}
  local words = type(args) == 'table' and args or vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  words = vim.tbl_filter(function(w)
    return w ~= ''
  end, words)
  local i = 1
  while i <= #words do
    local word = words[i]
    local name, value = word:match('^(%-%-[%w-]+)=(.*)$')
    name = name or word
    local option = eval_options[name]
    if option then
      if not value then
        i = i + 1
        value = words[i]
        if not value then
          return nil, name .. ' needs a value'
        end
      end
      local read, why = eval_option_value(name, option[2], value)
      if read == nil then
        return nil, why
      end
      opts[option[1]] = read
    elseif vim.startswith(word, '-') then
      local known = vim.tbl_keys(eval_options)
      table.sort(known)
      return nil, string.format("unknown option '%s' (:HydraEval takes %s)", word, table.concat(known, ', '))
    elseif opts.set then
      return nil, ':HydraEval takes one eval set, then its options: ' .. opts.set .. ' and ' .. word
    else
      opts.set = word
    end
    i = i + 1
  end
  if not opts.set then
    return nil, ':HydraEval needs an eval set: :HydraEval {set.toml} [--agents a,b] [--samples N] [--pass-k 1,2]'
  end
  return opts
end

-- A path the user typed (relative to the current directory), as hydra
-- takes it: absolute (hydra reads a relative one from the repository root).
local function absolute(path)
  return path and vim.fn.fnamemodify(path, ':p') or nil
end

--- Runs an eval set: `opts.set` (a path), and `opts.agents`, `opts.samples`,
--- `opts.passK`, `opts.out`, `opts.resume` as hydra/evalRun takes them (the
--- set's own when left out). Opens the evaluation's buffer once hydra
--- answered; opts.callback(err, evaluation) runs then.
function M.eval(opts)
  opts = opts or {}
  local root = opts.root or repository_root()
  if not root then
    return
  end
  if not opts.set or opts.set == '' then
    return vim.notify('hydra: which eval set? :HydraEval {set.toml}', vim.log.levels.ERROR)
  end
  local params = {
    set = absolute(opts.set),
    agents = opts.agents,
    samples = opts.samples,
    passK = opts.passK,
    out = absolute(opts.out),
    resume = absolute(opts.resume),
  }
  eval.start(root, params, opts.callback)
end

--- :HydraEval {set.toml} [--agents a,b] [--samples N] [--pass-k 1,2]
--- (`args`: its words, Neovim's `fargs`, or the whole line)
function M.eval_command(args)
  local opts, why = M.parse_eval_args(args)
  if not opts then
    return vim.notify('hydra: ' .. why, vim.log.levels.ERROR)
  end
  M.eval(opts)
end

--- :HydraEvalCancel [evalId]: cancels an evaluation (default: the latest
--- one started here that still runs). target.callback(err, result) once
--- hydra answered.
function M.eval_cancel(target)
  target = target or {}
  local root = target.root or repository_root()
  if not root then
    return
  end
  local id = target.eval
  if not id then
    local running = eval.latest_running(root)
    if not running then
      return vim.notify('hydra: no evaluation started here is running (:HydraEvalCancel EVALID names one)', vim.log.levels.ERROR)
    end
    id = running.id
  end
  eval.cancel(root, id, target.callback)
end

--- :HydraEvalReport [report.json]: a report's tables and samples, as hydra
--- renders them, in a tab (default: the newest report of the repository).
--- target.callback(err, buf) once shown.
function M.eval_report(target)
  target = target or {}
  local root = target.root or repository_root()
  if not root then
    return
  end
  local params = {}
  if target.report and target.report ~= '' then
    params.report = absolute(target.report)
  elseif target.eval then
    params.evalId = target.eval
  end
  eval.report(root, params, target.callback)
end

--- :HydraStatus: every race of the repository in a floating window.
function M.status(opts)
  opts = opts or {}
  local root = opts.root or repository_root()
  if not root then
    return
  end
  client.request(root, protocol.status, vim.empty_dict(), function(err, result)
    if err then
      return client.notify_error(err)
    end
    local lines, highlights, race_at = ui.race_list(root, result.races or {})
    local buf = ui.open_float(
      'hydra://' .. root .. '/status',
      lines,
      highlights,
      'hydrastatus',
      'hydra: races of ' .. vim.fn.fnamemodify(root, ':t')
    )
    local function at_cursor(fn)
      return function()
        local id = race_at[vim.api.nvim_win_get_cursor(0)[1]]
        if id then
          ui.close_window()
          fn(id)
        end
      end
    end
    ui.map(buf, config.options.keymaps.scores, at_cursor(function(id)
      M.scores({ root = root, race = id })
    end), 'Scores of this race')
    ui.map(buf, '<CR>', at_cursor(function(id)
      race.lookup(root, id, function(lookup_err, r)
        if lookup_err then
          return client.notify_error(lookup_err)
        end
        race.set_latest(root, id)
        if not race.is_collab(r) then
          return race.show(r, 'tab')
        end
        -- A collaboration: its iterations above its agents' output, as hydra has them now.
        race.refresh(r, function()
          collab.show(r, 'tab')
        end)
      end)
    end), 'Output of this race (of a collaboration: its iterations too)')
    if opts.callback then
      opts.callback(buf, result)
    end
  end)
end

--- :HydraCancel [agent]: cancels the current race, or one of its agents.
function M.cancel(target)
  target = target or {}
  with_race(target, function(root, r)
    local params = { raceId = r.id, agentId = target.agent }
    client.request(root, protocol.cancel, params, function(err, result)
      if err then
        return client.notify_error(err)
      end
      local kind = race.is_collab(r) and 'collaboration ' or 'race '
      local what = target.agent and (target.agent .. ' of ' .. kind .. r.id) or (kind .. r.id)
      if result.cancelled then
        vim.notify('hydra: cancelled ' .. what, vim.log.levels.INFO)
      else
        vim.notify('hydra: nothing to cancel: ' .. what .. ' had already finished', vim.log.levels.INFO)
      end
      if target.callback then
        target.callback(result)
      end
    end)
  end)
end

-- `m` on the scoreboard or an agent's details: merges the agent unless the
-- scores say it cannot be (it cannot win, or the race was merged already),
-- then shows the scoreboard again.
local function merge_from_scores(r, model, target)
  if present(model.merged) then
    return vim.notify(ui.merged_already_text(r.id, model.merged), vim.log.levels.WARN)
  end
  -- An agent that cannot win is never offered for merging.
  local cannot_win = ui.ineligible_label(race.ranking_of({ rankings = model.rankings }, target.agent))
  if cannot_win then
    return vim.notify('hydra: ' .. target.agent .. ' cannot be merged (' .. cannot_win .. ')', vim.log.levels.WARN)
  end
  M.merge(vim.tbl_extend('force', target, { scores = true }))
end

--- Opens the scoreboard of race record `r` from `model` (race.score_model).
function M.show_scores(r, model)
  local lines, highlights, agent_at = ui.scoreboard(model)
  local buf, win =
    ui.open_float('hydra://' .. r.id .. '/scores', lines, highlights, 'hydrascores', 'hydra: scores (race ' .. r.id .. ')')
  -- The winner's own line: the first of the lines that belong to it (its
  -- notes follow it, and pairs() visits them in no order).
  local winner_line
  for line, agent in pairs(agent_at) do
    if agent == (model.rankings[1] and model.rankings[1].agentId) and (not winner_line or line < winner_line) then
      winner_line = line
    end
  end
  if winner_line then
    vim.api.nvim_win_set_cursor(win, { winner_line, 0 })
  end
  local keys = config.options.keymaps
  local function at_cursor(fn)
    return function()
      local agent = agent_at[vim.api.nvim_win_get_cursor(0)[1]]
      if not agent then
        return vim.notify("hydra: put the cursor on an agent's line", vim.log.levels.WARN)
      end
      ui.close_window()
      fn({ root = r.root, race = r.id, agent = agent })
    end
  end
  ui.map(buf, keys.diff, at_cursor(M.diff), "Review this agent's diff")
  ui.map(buf, keys.merge, at_cursor(function(target)
    merge_from_scores(r, model, target)
  end), "Merge this agent's branch")
  ui.map(buf, keys.log, at_cursor(M.log), "This agent's full log")
  ui.map(buf, '<CR>', at_cursor(function(target)
    M.show_details(r, model, target.agent)
  end), "This agent's details")
  return buf, win, agent_at
end

--- Opens the details of agent `agent_id` of race record `r`, from the
--- scoreboard's `model`: everything its line there shortens (ui.agent_details).
function M.show_details(r, model, agent_id)
  local lines, highlights = ui.agent_details(model, agent_id)
  local buf, win = ui.open_float(
    'hydra://' .. r.id .. '/' .. agent_id .. '~details',
    lines,
    highlights,
    'hydradetails',
    'hydra: ' .. agent_id .. ' details (race ' .. r.id .. ')'
  )
  local keys = config.options.keymaps
  local target = function()
    return { root = r.root, race = r.id, agent = agent_id }
  end
  local function act(fn)
    return function()
      ui.close_window()
      fn(target())
    end
  end
  ui.map(buf, keys.diff, act(M.diff), "Review this agent's diff")
  ui.map(buf, keys.merge, act(function(t)
    merge_from_scores(r, model, t)
  end), "Merge this agent's branch")
  ui.map(buf, keys.log, act(M.log), "This agent's full log")
  ui.map(buf, keys.scores, function()
    ui.close_window()
    M.show_scores(r, model)
  end, 'Back to the scoreboard')
  return buf, win
end

-- Opens the scoreboard of race record `r` as hydra has it now: its scores,
-- and whether it was merged (hydra/status). callback(buf, win, scores).
local function open_scores(r, callback)
  race.refresh(r, function()
    client.request(r.root, protocol.scores, { raceId = r.id }, function(err, result)
      if err then
        return client.notify_error(err)
      end
      race.set_scores(r, result)
      local buf, win = M.show_scores(r, race.score_model(r, result))
      if callback then
        callback(buf, win, result)
      end
    end)
  end)
end

--- :HydraScores: the scoreboard of the current race.
function M.scores(target)
  target = target or {}
  with_race(target, function(_, r)
    open_scores(r, target.callback)
  end)
end

--- :HydraDiff [agent]: the agent's changed files in a panel and the
--- quickfix list, and a review tab with your file and the agent's version
--- side by side. With `target.other`, the versions of two agents compared.
function M.diff(target)
  target = target or {}
  with_race(target, function(root, r)
    if target.other then
      return require('hydra.diff').compare(root, r.id, target.agent, target.other, target.callback)
    end
    with_agent(root, r, target.agent, function(agent)
      require('hydra.diff').open(root, r.id, agent, target.callback)
    end)
  end)
end

--- :HydraDiff's arguments: none, an agent, or two agents to compare.
function M.diff_command(args)
  local agents = vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  if #agents > 2 then
    return vim.notify('hydra: :HydraDiff takes one agent, or two to compare', vim.log.levels.ERROR)
  end
  M.diff({ agent = agents[1], other = agents[2] })
end

--- :HydraFindings [agent]: what the build and lint of the current race
--- said about the agent's files (default: every agent's), in the quickfix
--- list, each in the agent's worktree. callback(items) once listed.
function M.findings(target)
  target = target or {}
  with_race(target, function(root, r)
    if target.agent and not r.agents[target.agent] then
      return vim.notify(string.format("hydra: race %s has no agent '%s'", r.id, target.agent), vim.log.levels.ERROR)
    end
    local function list()
      local items = findings.quickfix_items(r.id, target.agent and { target.agent } or r.order)
      local whose = target.agent and (target.agent .. "'s") or "the agents'"
      local title = string.format('hydra: %s build and lint findings (race %s)', whose, r.id)
      vim.fn.setqflist({}, ' ', { title = title, items = items })
      if #items == 0 then
        vim.notify(string.format('hydra: no build or lint findings in %s files (race %s)', whose, r.id), vim.log.levels.INFO)
      else
        vim.cmd('botright copen')
      end
      if target.callback then
        target.callback(items)
      end
    end
    if r.rankings then
      return list()
    end
    client.request(root, protocol.scores, { raceId = r.id }, function(err, result)
      if err then
        return client.notify_error(err, 'findings')
      end
      race.set_scores(r, result)
      list()
    end)
  end)
end

local function resolved(path)
  return vim.fn.resolve(vim.fn.fnamemodify(path, ':p'))
end

-- The loaded buffers of files under `root` among `files` (relative paths).
local function buffers_of(root, files)
  local wanted = {}
  for _, f in ipairs(files) do
    wanted[resolved(root .. '/' .. f)] = true
  end
  local out = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(buf)
    if vim.api.nvim_buf_is_loaded(buf) and name ~= '' and vim.bo[buf].buftype == '' and wanted[resolved(name)] then
      table.insert(out, buf)
    end
  end
  return out
end

local function reload(bufs)
  for _, buf in ipairs(bufs) do
    if not vim.bo[buf].modified then
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent edit')
      end)
    end
  end
end

local function list_conflicts(root, result)
  local items = {}
  for _, f in ipairs(result.conflicts or {}) do
    table.insert(items, { filename = root .. '/' .. f, lnum = 1, text = 'conflicts with ' .. result.branch })
  end
  vim.fn.setqflist({}, ' ', {
    title = string.format('hydra: merging %s into %s would conflict; nothing was changed', result.branch, result.targetBranch),
    items = items,
  })
end

-- hydra tells the user itself (window/showMessage) why it refused a merge.
local shown_by_server = {
  [protocol.errors.dirty_working_tree] = true,
  [protocol.errors.merge_refused] = true,
}

local outcomes = ui.merge_outcomes

-- Once race `r` was merged: records it (hydra/status), and shows its
-- scoreboard again when the merge came from it or it is open; then done().
local function show_merged(r, target, done)
  race.refresh(r, function()
    local board = ui.find_buffer('hydra://' .. r.id .. '/scores')
    if target.scores or (board and #vim.fn.win_findbuf(board) > 0) then
      return open_scores(r, function()
        done()
      end)
    end
    done()
  end)
end

local function merge_error(r, target, err)
  if not (type(err) == 'table' and shown_by_server[err.code]) then
    client.notify_error(err, 'merge')
  end
  -- Merged meanwhile (elsewhere, or by auto_merge): what the scoreboard
  -- showed is out of date.
  if type(err) == 'table' and type(err.data) == 'table' and err.data.reason == 'alreadyMerged' then
    show_merged(r, target, function() end)
  end
end

-- Calls fn(concerns) with what speaks against merging `agent_id` of race `r`
-- (hydra.concerns), from the race's scores.
local function with_merge_concerns(root, r, agent_id, fn)
  client.request(root, protocol.scores, { raceId = r.id }, function(err, scores)
    fn(require('hydra.concerns').of(not err and scores or nil, agent_id))
  end)
end

--- :HydraMerge [agent]: shows what merging the agent (default: the winner)
--- would do, asks, then merges and reloads the buffers of changed files.
function M.merge(target)
  target = target or {}
  local done = target.callback or function() end
  with_race(target, function(root, r)
    if not target.agent and r.allFailed == true then
      vim.notify('hydra: race ' .. r.id .. ': ' .. ui.all_failed .. ' to merge', vim.log.levels.WARN)
      return done({ message = ui.all_failed }, nil)
    end
    local params = { raceId = r.id, agentId = target.agent, dryRun = true }
    client.request(root, protocol.merge, params, function(err, dry)
      if err then
        merge_error(r, target, err)
        return done(err, nil)
      end
      if dry.outcome == 'conflict' then
        list_conflicts(root, dry)
        vim.notify(
          string.format(
            'hydra: merging %s into %s would conflict in %s; nothing was changed',
            dry.branch,
            dry.targetBranch,
            table.concat(dry.conflicts, ', ')
          ),
          vim.log.levels.WARN
        )
        return done(nil, dry)
      end
      if dry.outcome == 'upToDate' then
        vim.notify('hydra: ' .. dry.targetBranch .. ' already has ' .. dry.branch, vim.log.levels.INFO)
        return done(nil, dry)
      end
      local unsaved = vim.tbl_filter(function(buf)
        return vim.bo[buf].modified
      end, buffers_of(root, dry.files))
      if #unsaved > 0 then
        local names = vim.tbl_map(function(buf)
          return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':.')
        end, unsaved)
        vim.notify(
          'hydra: the merge would change files with unsaved changes: ' .. table.concat(names, ', ') .. '; save or undo them first',
          vim.log.levels.ERROR
        )
        return done({ message = 'unsaved changes' }, nil)
      end
      local question = string.format(
        'Merge %s (%s) into %s as a %s, changing %d file(s): %s?',
        dry.agentId,
        dry.branch,
        dry.targetBranch,
        outcomes[dry.outcome] or dry.outcome,
        #dry.files,
        table.concat(dry.files, ', ')
      )
      with_merge_concerns(root, r, dry.agentId, function(concerns)
        -- The scoreboard's concerns; when it has none, hydra's own (its dry
        -- run's), so that nothing it would refuse without force goes unsaid.
        if #concerns == 0 and type(dry.concerns) == 'table' then
          concerns = dry.concerns
        end
        local items, prompt, confirm, kind = { 'Merge', 'Cancel' }, question, 'Merge', 'hydra_merge'
        if #concerns > 0 then
          -- Not the merge hydra would pick: say why, and put Cancel first,
          -- where a quick <CR> or a picker's first entry lands. A kind of
          -- its own lets a vim.ui.select replacement show it as a warning.
          confirm = 'Merge anyway'
          items = { 'Cancel', confirm }
          kind = 'hydra_merge_warning'
          prompt = 'Warning: ' .. dry.agentId .. ' is not a safe pick: ' .. table.concat(concerns, '; ') .. '.\n' .. question
        end
        vim.ui.select(items, { prompt = prompt, kind = kind }, function(choice)
          if choice ~= confirm then
            vim.notify('hydra: merge cancelled; nothing was changed', vim.log.levels.INFO)
            return done(nil, nil)
          end
          -- Asked and answered here: hydra merges a pick it warned of only with force.
          local real = { raceId = r.id, agentId = dry.agentId, force = #concerns > 0 or nil }
          client.request(root, protocol.merge, real, function(merge_err, result)
            if merge_err then
              merge_error(r, target, merge_err)
              return done(merge_err, nil)
            end
            if result.outcome == 'conflict' then
              list_conflicts(root, result)
              return done(nil, result)
            end
            reload(buffers_of(root, result.files))
            vim.notify(
              string.format(
                'hydra: merged %s into %s (%s%s): %d file(s)',
                result.branch,
                result.targetBranch,
                outcomes[result.outcome] or result.outcome,
                present(result.commit) and (', now at ' .. result.commit:sub(1, 12)) or '',
                #result.files
              ),
              vim.log.levels.INFO
            )
            show_merged(r, target, function()
              done(nil, result)
            end)
          end)
        end)
      end)
    end)
  end)
end

--- The key (ui.find_buffer) of the buffer :HydraLog shows an agent's
--- transcript in, or with `raw` its raw log.
function M.log_key(race_id, agent_id, raw)
  return 'hydra://' .. race_id .. '/' .. agent_id .. (raw and '~raw' or '~log')
end

--- The heading of the part of :HydraLog that shows the agent's checks.
M.log_checks_heading = '── checks: what hydra ran to score it ──'

-- Adds to `lines` and `highlights` the checks hydra ran on the agent's work
-- (ui.add_checks: each failed one with its output), once the race is
-- scored; then calls done().
local function add_log_checks(root, race_id, agent_id, lines, highlights, done)
  client.request(root, protocol.scores, { raceId = race_id }, function(err, scores)
    -- A race still running, or cancelled before scoring, ran no checks.
    local ranking = not err and race.ranking_of(scores, agent_id) or nil
    if ranking and #ui.checks_of(ranking) > 0 then
      local b = ui.builder()
      b:line('')
      b:line(M.log_checks_heading, 'HydraHeader')
      ui.add_checks(b, ranking, '')
      local offset = #lines
      vim.list_extend(lines, b.lines)
      for _, h in ipairs(b.highlights) do
        table.insert(highlights, { h[1] + offset, h[2], h[3], h[4] })
      end
    end
    done()
  end)
end

-- Calls fn(lines, highlights) with what :HydraLog shows: the transcript of
-- what hydra recorded (transcript.read) followed by the checks hydra ran on
-- the agent's work, or with `raw` the log as printed, stdout then stderr.
local function read_for_log(root, race_id, agent_id, raw, fn)
  if not raw then
    return transcript.read(root, race_id, agent_id, function(err, entries)
      if err then
        return client.notify_error(err)
      end
      local lines, highlights = {}, {}
      for _, e in ipairs(entries) do
        for _, l in ipairs(vim.split(e[1], '\n', { plain = true })) do
          table.insert(lines, l)
          if e[2] then
            table.insert(highlights, { #lines - 1, 0, -1, e[2] })
          end
        end
      end
      add_log_checks(root, race_id, agent_id, lines, highlights, function()
        fn(lines, highlights)
      end)
    end)
  end
  transcript.read_raw(root, race_id, agent_id, function(err, stdout, stderr)
    if err then
      return client.notify_error(err)
    end
    local lines = ui.text_lines(stdout)
    local highlights = {}
    if stderr ~= '' then
      table.insert(lines, '')
      table.insert(lines, '── stderr ──')
      table.insert(highlights, { #lines - 1, 0, -1, 'HydraHeader' })
      vim.list_extend(lines, ui.text_lines(stderr))
    end
    fn(lines, highlights)
  end)
end

--- :HydraLog [race] [agent] [raw]: an agent's whole output, in a tab of its
--- own: the transcript of what hydra recorded (its words, tool calls, file
--- changes, summary), or with `raw` the log as it printed it.
function M.log(target)
  target = target or {}
  with_race(target, function(root, r)
    with_agent(root, r, target.agent, function(agent)
      read_for_log(root, r.id, agent, target.raw, function(lines, highlights)
        local key = M.log_key(r.id, agent, target.raw)
        local title = string.format('hydra: %s %slog (race %s)', agent, target.raw and 'raw ' or '', r.id)
        local buf = ui.find_buffer(key) or ui.scratch_buffer(title, 'hydralog', key)
        ui.fill(buf, lines, highlights)
        vim.api.nvim_buf_set_var(buf, 'hydra_root', root)
        ui.map(buf, config.options.keymaps.close, ui.close_window, 'Close')
        local wins = vim.fn.win_findbuf(buf)
        if #wins > 0 then
          vim.api.nvim_set_current_win(wins[1])
        else
          -- A log is read like a file: a tab of its own, not a strip at
          -- the bottom of whatever layout the current tab has.
          vim.cmd('tab sbuffer ' .. buf)
        end
        if target.callback then
          target.callback(buf)
        end
      end)
    end)
  end)
end

--- Reads :HydraLog's arguments, "[race] [agent] [raw]", into a target.
function M.parse_log_args(args)
  local target = {}
  local words = vim.split(vim.trim(args or ''), '%s+', { trimempty = true })
  if words[#words] == 'raw' then
    target.raw = true
    table.remove(words)
  end
  if words[1] and words[1]:match('^%d%d%d%d%d%d%d%d%-%d%d%d%d%d%d%-%x+$') then
    target.race = table.remove(words, 1)
  end
  target.agent = words[1]
  return target
end

--- :HydraLog's command line.
function M.log_command(args)
  M.log(M.parse_log_args(args))
end

--- Completion for :HydraRace: the default agents and, once the server runs,
--- every agent name it accepts (hydra.toml's and the built-in adapters').
function M.complete_agents(arglead, cmdline)
  if cmdline:find('%s%-%-%s') then
    return {}
  end
  local names = vim.deepcopy(config.options.agents)
  local root = client.find_root()
  local caps = root and client.capabilities(root)
  if caps and type(caps.agents) == 'table' then
    vim.list_extend(names, caps.agents)
  end
  local seen, out = {}, {}
  for _, n in ipairs(names) do
    if not seen[n] and vim.startswith(n, arglead) then
      seen[n] = true
      table.insert(out, n)
    end
  end
  return out
end

--- Completion for :HydraLog: the races and agents known here, and `raw`.
function M.complete_log(arglead)
  local out = M.complete_race_agents(arglead, true)
  local root = client.find_root()
  for id, r in pairs(race.races) do
    if r.root == root and vim.startswith(id, arglead) then
      table.insert(out, id)
    end
  end
  if vim.startswith('raw', arglead) then
    table.insert(out, 'raw')
  end
  return out
end

--- Completion for the commands that take one agent of the current race:
--- of a collaboration, its iterations too ("builder@2"), unless
--- `agents_only`.
function M.complete_race_agents(arglead, agents_only)
  local root = client.find_root()
  local out = {}
  for _, r in pairs(race.races) do
    if r.root == root then
      local iterations = (race.is_collab(r) and not agents_only) and collab.iteration_ids(r) or {}
      local ids = vim.list_extend(vim.deepcopy(r.order), iterations)
      for _, id in ipairs(ids) do
        if vim.startswith(id, arglead) and not vim.tbl_contains(out, id) then
          table.insert(out, id)
        end
      end
    end
  end
  table.sort(out)
  return out
end

--- Completion for :HydraEvalCancel: the evaluations started here, newest first.
function M.complete_evals(arglead)
  local root = client.find_root()
  return vim.tbl_filter(function(id)
    return vim.startswith(id, arglead)
  end, root and eval.ids(root) or {})
end

--- Completion for :HydraIterations: the collaborations known here.
function M.complete_collabs(arglead)
  local root = client.find_root()
  local out = {}
  for id, r in pairs(race.races) do
    if r.root == root and race.is_collab(r) and vim.startswith(id, arglead) then
      table.insert(out, id)
    end
  end
  table.sort(out)
  return out
end

return M
