-- What speaks against merging an agent, read from the race's scores: it cannot
-- win (hydra refuses to merge it), it is not the winner, its checks failed, it
-- did not end normally, every agent failed, it broke or dropped tests that
-- passed at the base, hydra flagged it (it would not merge it by itself), or
-- nothing checked its work. :HydraMerge shows these before it asks, and then
-- makes "Cancel" the first choice.

local ui = require('hydra.ui')
local util = require('hydra.util')

local M = {}

local present = util.present

--- The concerns about merging `agent_id`, as phrases ("its build failed
--- (exit 2)"); empty when there is none. `scores` is hydra/scores' answer, or
--- nil when the race was not scored.
function M.of(scores, agent_id)
  local out = {}
  if not scores then
    table.insert(out, 'the race was not scored: nothing checked its work')
    return out
  end
  local rankings = scores.rankings or {}
  local ranking, best
  for _, r in ipairs(rankings) do
    if r.agentId == agent_id then
      ranking = r
    end
    if r.rank == 1 then
      best = r
    end
  end
  if not ranking then
    table.insert(out, 'it was not ranked: nothing checked its work')
    return out
  end
  if ranking.eligible == false then
    local why = present(ranking.ineligible) and ranking.ineligible or 'ineligible'
    table.insert(out, 'it cannot win or be merged: ' .. why)
  end
  if ranking.rank ~= 1 then
    local text = string.format('it ranked #%d of %d (%.1f / 100', ranking.rank, #rankings, ranking.total)
    if best then
      text = text .. string.format('; the winner, %s, has %.1f', best.agentId, best.total)
    end
    table.insert(out, text .. ')')
  end
  if scores.allFailed == true then
    table.insert(out, 'every agent failed: even the best total is below the fail threshold')
  end
  if present(ranking.status) and ranking.status ~= 'completed' then
    table.insert(out, 'the agent ended ' .. ranking.status .. ', not completed')
  end
  local checks = ranking.checks or {}
  local build = ui.check_failure(checks.build)
  if build then
    table.insert(out, 'its build ' .. build)
  end
  local tests = checks.tests
  if type(tests) == 'table' and type(tests.tests) == 'table' and (tests.tests.failed or 0) > 0 then
    local counts = tests.tests
    table.insert(out, string.format('%d of %d tests failed', counts.failed, counts.passed + counts.failed))
  else
    local why = ui.check_failure(tests)
    if why then
      table.insert(out, 'its tests ' .. why)
    end
  end
  local changes = type(ranking.testChanges) == 'table' and ranking.testChanges or {}
  local broken = type(changes.broken) == 'table' and changes.broken or {}
  local removed = type(changes.removed) == 'table' and changes.removed or {}
  if #broken > 0 then
    table.insert(out, string.format('it broke %d test(s) that passed at the base: %s', #broken, ui.capped_list(broken, 5)))
  end
  if #removed > 0 then
    table.insert(out, string.format('%d test(s) that ran at the base did not run: %s', #removed, ui.capped_list(removed, 5)))
  end
  local skipped = type(changes.skipped) == 'table' and changes.skipped or {}
  if #skipped > 0 then
    table.insert(out, string.format('%d test(s) that ran at the base are skipped or xfailed now (scored as failed): %s',
      #skipped, ui.capped_list(skipped, 5)))
  end
  -- Flags do not stop a merge by hand, but they are why hydra would not make it.
  local flags = type(ranking.flags) == 'table' and ranking.flags or {}
  if #flags > 0 then
    table.insert(out, 'hydra would not merge it by itself: ' .. table.concat(vim.tbl_map(ui.one_line, flags), '; '))
  end
  -- Without names a deleted test reads as a passing one: said beside the
  -- concerns, not one by itself (hydra merges such a winner unasked too; the
  -- scoreboard and the details say it).
  if #out > 0 and ranking.testsByCountsOnly == true then
    table.insert(out, ui.counts_only)
  end
  return out
end

return M
