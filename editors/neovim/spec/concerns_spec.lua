-- What :HydraMerge warns about, from hydra/scores answers shaped as
-- docs/protocol.md documents them.

local concerns = require('hydra.concerns')
local S = require('scores_by_hand')

local check = S.check

local function ranking(rank, agent, total, checks, status)
  return S.ranking(rank, agent, total, { checks = S.checks(checks), status = status or 'completed' })
end

describe('merge concerns', function()
  it('are none for a winner whose checks passed', function()
    local scores = { rankings = { ranking(1, 'careful', 98.1), ranking(2, 'sprawler', 87.5) }, allFailed = false }
    assert.are.same({}, concerns.of(scores, 'careful'))
  end)

  it('name the rank, the winner and each failed check', function()
    local scores = {
      allFailed = false,
      rankings = {
        ranking(1, 'careful', 98.1),
        ranking(2, 'sprawler', 61.0, { tests = check({ exitCode = 1, tests = { passed = 30, failed = 8, skipped = 0 } }) }),
        ranking(3, 'breaker', 25.0, {
          build = check({ exitCode = 2 }),
          tests = check({ skipped = true, exitCode = vim.NIL }),
        }),
      },
    }
    assert.are.same({
      'it ranked #2 of 3 (61.0 / 100; the winner, careful, has 98.1)',
      '8 of 38 tests failed',
    }, concerns.of(scores, 'sprawler'))
    -- Skipped tests (the build failed) are not a second concern.
    assert.are.same({
      'it ranked #3 of 3 (25.0 / 100; the winner, careful, has 98.1)',
      'its build failed (exit 2)',
    }, concerns.of(scores, 'breaker'))
  end)

  it('warn about the winner too when every agent failed, or it did not end normally', function()
    local scores = {
      allFailed = true,
      rankings = {
        ranking(1, 'slow', 28.0, { build = check({ timedOut = true, exitCode = vim.NIL }) }, 'timedOut'),
      },
    }
    assert.are.same({
      'every agent failed: even the best total is below the fail threshold',
      'the agent ended timedOut, not completed',
      'its build timed out',
    }, concerns.of(scores, 'slow'))
  end)

  it('say when nothing checked the work', function()
    assert.are.same({ 'the race was not scored: nothing checked its work' }, concerns.of(nil, 'careful'))
    local scores = { allFailed = false, rankings = { ranking(1, 'careful', 90) } }
    assert.are.same({ 'it was not ranked: nothing checked its work' }, concerns.of(scores, 'other'))
  end)
end)
