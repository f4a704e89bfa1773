-- Commands that look at a race's results: :HydraScores, :HydraDiff,
-- :HydraFindings and :HydraLog.

local client = require('hydra.client')
local config = require('hydra.config')
local findings = require('hydra.findings')
local protocol = require('hydra.protocol')
local race = require('hydra.race')
local scoreboard = require('hydra.scoreboard')
local targets = require('hydra.actions.target')
local transcript = require('hydra.transcript')
local ui = require('hydra.ui')

local M = {}

--- :HydraScores: the scoreboard of the current race.
function M.scores(target)
  target = target or {}
  targets.with_race(target, function(_, r)
    scoreboard.open(r, target.callback)
  end)
end

--- :HydraDiff [agent]: the agent's changed files in a panel and the
--- quickfix list, and a review tab with your file and the agent's version
--- side by side. With `target.other`, the versions of two agents compared.
function M.diff(target)
  target = target or {}
  targets.with_race(target, function(root, r)
    if target.other then
      return require('hydra.diff').compare(root, r.id, target.agent, target.other, target.callback)
    end
    targets.with_agent(root, r, target.agent, function(agent)
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
  targets.with_race(target, function(root, r)
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
  targets.with_race(target, function(root, r)
    targets.with_agent(root, r, target.agent, function(agent)
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

return M
