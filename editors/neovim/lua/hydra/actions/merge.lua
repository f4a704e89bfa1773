-- :HydraMerge: what merging an agent would do, the question, the merge,
-- and the buffers and the scoreboard brought up to date after it.

local client = require('hydra.client')
local protocol = require('hydra.protocol')
local race = require('hydra.race')
local scoreboard = require('hydra.scoreboard')
local targets = require('hydra.actions.target')
local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

local present = util.present

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
      return scoreboard.open(r, function()
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
  targets.with_race(target, function(root, r)
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

return M
