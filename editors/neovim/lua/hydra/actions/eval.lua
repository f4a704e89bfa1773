-- Commands about evaluations: :HydraEval (its options), :HydraEvalCancel
-- and :HydraEvalReport.

local eval = require('hydra.eval')
local targets = require('hydra.actions.target')

local M = {}

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
  local root = opts.root or targets.repository_root()
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
  local root = target.root or targets.repository_root()
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
  local root = target.root or targets.repository_root()
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

return M
