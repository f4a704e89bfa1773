-- hydra/scores answers made by hand, shaped as docs/protocol.md documents
-- them, for the specs that render what the plugin says of scores without a
-- server.

local S = {}

--- A check that passed (`rankings[].checks.*`), with `fields` changed.
function S.check(fields)
  return vim.tbl_extend('force', {
    command = 'make',
    skipped = false,
    exitCode = 0,
    timedOut = false,
    durationMs = 10,
    output = '',
    outputTruncated = false,
    tests = vim.NIL,
    lint = vim.NIL,
    format = '',
  }, fields or {})
end

--- A build and tests that passed, no lint, with `checks` changed.
function S.checks(checks)
  return vim.tbl_extend('force', { build = S.check(), tests = S.check(), lint = vim.NIL }, checks or {})
end

--- The ranking of an agent that completed and can win, no check
--- configured, with `extra` fields changed.
function S.ranking(rank, agent, total, extra)
  return vim.tbl_extend('force', {
    rank = rank,
    agentId = agent,
    agent = agent,
    status = 'completed',
    total = total,
    eligible = true,
    breakdown = { build = 100, tests = 100, lint = vim.NIL, diffSize = 90, speed = 70 },
    checks = { build = vim.NIL, tests = vim.NIL, lint = vim.NIL },
    diff = { linesAdded = 1, linesRemoved = 1, filesChanged = 1 },
  }, extra or {})
end

--- n names: prefix1, prefix2, ...
function S.names(prefix, n)
  local out = {}
  for i = 1, n do
    out[i] = prefix .. i
  end
  return out
end

return S
