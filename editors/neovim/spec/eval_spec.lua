-- Evaluations, against the real hydra binary and hydra's demo project: the
-- eval set examples/eval/shopcart.toml has one case, the coupon bug, which
-- careful always solves and alternating on even samples only. :HydraEval
-- runs it and its buffer follows the samples, then shows hydra's tables;
-- a broken set, an unknown agent, :HydraEvalCancel and :HydraEvalReport.
-- The steps depend on each other, in order.

local H = require('helpers')
local eval = require('hydra.eval')

local find, line_with, no_line_with = H.find, H.line_with, H.no_line_with

-- The eval set, in the repository this plugin is part of.
local SET = H.repository .. '/examples/eval/shopcart.toml'

-- Waits for an evaluation other than those in `before` (eval.ids) to start
-- in `root`; returns it.
local function next_eval(root, before)
  local seen = {}
  for _, id in ipairs(before) do
    seen[id] = true
  end
  local found
  H.wait(function()
    for _, id in ipairs(eval.ids(root)) do
      if not seen[id] then
        found = eval.evals[id]
        return true
      end
    end
    return false
  end, 'an evaluation to start')
  return found
end

-- Waits until evaluation `ev` is over and its report was read.
local function wait_over(ev, timeout_ms)
  H.wait(function()
    return eval.finished_states[ev.status] and (ev.text ~= nil or ev.report_error ~= nil)
  end, 'evaluation ' .. ev.id .. ' to be over', timeout_ms or 120000)
  assert.is_nil(ev.report_error)
end

-- The sample lines of a buffer: { 'careful #0 solved completed', ... }, as
-- "agent #index verdict status".
local function sample_lines(lines)
  local out = {}
  local at = line_with(lines, 'Samples')
  for i = at + 1, #lines do
    local agent, index, verdict, status = lines[i]:match('^  coupon%-case  (%S+)%s+(#%d+)  (.-)%s%s+(%S+)')
    if agent then
      table.insert(out, table.concat({ agent, index, vim.trim(verdict), status }, ' '))
    end
  end
  return out
end

-- Fails unless `text`'s lines (hydra's rendering) are among `lines` in
-- that order, each whole.
local function holds_text(lines, text)
  local from = 1
  for _, wanted in ipairs(H.lines_of(text)) do
    local at
    for i = from, #lines do
      if lines[i] == wanted then
        at = i
        break
      end
    end
    assert(at, 'no line "' .. wanted .. '" (in order) in:\n' .. table.concat(lines, '\n'))
    from = at + 1
  end
end

-- The cells of a table line, split where hydra's rendering puts two spaces or more.
local function cells(line)
  return vim.split(vim.trim(line), '%s%s+')
end

-- The cell of `agent`'s row in column `column` of the table under the
-- line `title_at` (its title: "Agents", "Case ..."), whose first line
-- names the columns.
local function cell(lines, title_at, agent, column)
  local header = cells(lines[title_at + 1])
  local at
  for i, name in ipairs(header) do
    if name == column then
      at = i
    end
  end
  assert(at, 'no column ' .. column .. ' in: ' .. lines[title_at + 1])
  for i = title_at + 2, #lines do
    if lines[i] == '' then
      break
    end
    local row = cells(lines[i])
    if row[1] == agent then
      return row[at]
    end
  end
  error('no row for ' .. agent .. ' under: ' .. lines[title_at])
end

describe('evaluations', function()
  local root, ev, report_path

  setup(function()
    H.capture_notifications()
    root = H.make_demo_repo()
    require('hydra').setup({ server = { cmd = { H.hydra_bin, 'serve' } } })
    vim.cmd('cd ' .. vim.fn.fnameescape(root))
  end)

  teardown(H.clean_up)
  after_each(H.checked)

  it(':HydraEval runs the set: its buffer follows the samples, then shows the tables hydra renders', function()
    assert.are.equal(1, vim.fn.filereadable(SET), SET)
    vim.cmd('HydraEval ' .. vim.fn.fnameescape(SET) .. ' --agents careful,alternating --samples 2')
    ev = next_eval(root, {})
    H.wait_message('hydra: evaluation ' .. ev.id .. ' started: shopcart on careful, alternating, 4 samples')
    assert.are.same({ 'careful', 'alternating' }, ev.agents)
    assert.are.same({ 1, 2 }, ev.passK)
    assert.are.equal(4, ev.total)

    -- Its buffer, at once, in a tab of its own.
    local buf = H.find_buffer(eval.view_key(ev.id))
    assert.is_not_nil(buf)
    assert.are.equal(buf, vim.api.nvim_get_current_buf())
    assert.are.equal('hydraeval', vim.bo[buf].filetype)
    local lines = H.buffer_lines(buf)
    assert.are.equal('hydra · evaluation ' .. ev.id .. ' · running', lines[1])
    assert.truthy(lines[2]:match('^Evaluating shopcart: [0-4]/4 samples · [0-4] solved$'), lines[2])
    assert.are.equal('agents: careful, alternating · 2 samples each · pass@1, pass@2 · 1 case', lines[3])
    assert.are.equal('report: ' .. ev.report, lines[4])
    assert.truthy(vim.startswith(ev.report, root .. '/.hydra/evals/shopcart-'), ev.report)

    -- A line per sample as it finishes.
    H.wait(function()
      return #sample_lines(H.buffer_lines(buf)) >= 1 and ev.status == 'running'
    end, 'the first sample', 60000)
    wait_over(ev)
    report_path = ev.report
    H.wait_message('hydra: evaluation ' .. ev.id .. ' completed: 3/4 solved; report: ' .. report_path)
    assert.are.equal(1, vim.fn.filereadable(report_path))

    lines = H.buffer_lines(buf)
    assert.are.equal('hydra · evaluation ' .. ev.id .. ' · completed', lines[1])
    assert.are.equal('Evaluated shopcart: 4/4 samples · 3 solved', lines[2])
    assert.are.same({
      'careful #0 solved completed',
      'careful #1 solved completed',
      'alternating #0 solved completed',
      'alternating #1 not solved completed',
    }, sample_lines(lines))
    no_line_with(lines, 'c cancel')

    -- The tables are hydra's own rendering of the report.
    local err, answer = H.request(root, 'hydra/evalReport', { evalId = ev.id, format = 'text' })
    assert.is_nil(err)
    assert.are.equal(report_path, answer.path)
    holds_text(lines, answer.text)
    local by_agent = {}
    for _, a in ipairs(answer.report.agents) do
      by_agent[a.agent] = a
    end
    assert.are.equal(1, by_agent.careful.passAtK['1'])
    assert.are.equal(0.5, by_agent.alternating.passAtK['1'])
    assert.are.equal(1, by_agent.alternating.passAtK['2'])
    -- As the tables show them (hydra writes a share as a percentage):
    -- careful's pass@1 is 1, alternating's 0.5, their pass@2 both 1.
    local agents = line_with(lines, 'Agents')
    assert.are.equal('100.0%', cell(lines, agents, 'careful', 'pass@1'))
    assert.are.equal('50.0%', cell(lines, agents, 'alternating', 'pass@1'))
    assert.are.equal('100.0%', cell(lines, agents, 'alternating', 'pass@2'))
    local case = line_with(lines, 'Case coupon-case')
    assert.are.equal('2', cell(lines, case, 'alternating', 'n'))
    assert.are.equal('1', cell(lines, case, 'alternating', 'c'))
    assert.are.equal('50.0%', cell(lines, case, 'alternating', 'pass@1'))
    assert.are.equal('100.0%', cell(lines, case, 'careful', 'pass@1'))
  end)

  -- Runs :HydraEval with `args` where hydra must refuse; returns the one
  -- error it showed.
  local function refused(args)
    local before = eval.ids(root)
    vim.cmd('HydraEval ' .. args)
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the refusal')
    local errors = H.take_errors()
    assert.are.equal(1, #errors, table.concat(errors, '\n'))
    assert.are.same(before, eval.ids(root), 'nothing started')
    return errors[1]
  end

  it('an unknown agent, or one that cannot run here, starts nothing, and is named', function()
    local unknown = refused(vim.fn.fnameescape(SET) .. ' --agents careful,carefull')
    assert.truthy(
      vim.startswith(unknown, "hydra: the evaluation did not start: unknown agent 'carefull'; did you mean 'careful'?"),
      unknown
    )
    local missing = H.unavailable_agent(root)
    local unavailable = refused(vim.fn.fnameescape(SET) .. ' --agents careful,' .. missing.name)
    local said = "hydra: the evaluation did not start: agent '" .. missing.name .. "' cannot run here: "
    assert.truthy(vim.startswith(unavailable, said), unavailable)
    -- Said short: not the whole PATH hydra looked in.
    assert.is_false(find(unavailable, vim.env.PATH), unavailable)
  end)

  it('a broken eval set (:HydraEval %) puts its file, line and column in the quickfix list', function()
    -- A set that is not there: said, with no place to list.
    vim.fn.setqflist({}, ' ', { title = 'before' })
    local absent = refused('evals/absent.toml')
    assert.truthy(vim.startswith(absent, 'hydra: the evaluation did not start: ' .. root .. '/evals/absent.toml: '), absent)
    assert.are.equal('before', vim.fn.getqflist({ title = 1 }).title)

    local dir = root .. '/evals'
    vim.fn.mkdir(dir, 'p')
    local broken = dir .. '/broken.toml'
    H.write_file(broken, table.concat({
      '[eval]',
      'name = "broken"',
      'agents = ["careful"',
      '',
      '[[cases]]',
      'id = "x"',
    }, '\n') .. '\n')
    vim.cmd('edit ' .. vim.fn.fnameescape(broken))
    local error = refused('%')
    local line, column = error:match('^hydra: the evaluation did not start: ' .. vim.pesc(broken) .. ':(%d+):(%d+): ')
    assert.truthy(line, error)
    assert.are_not.equal('0', line, error)
    local qf = vim.fn.getqflist({ title = 1, items = 1 })
    assert.are.equal(1, #qf.items)
    local item = qf.items[1]
    assert.are.equal(broken, vim.fn.resolve(vim.api.nvim_buf_get_name(item.bufnr)))
    assert.are.equal(tonumber(line), item.lnum)
    assert.are.equal(tonumber(column), item.col)
    assert.are.equal('E', item.type)
    assert.truthy(find(qf.title, broken), qf.title)
    -- The quickfix window is open.
    assert.are.equal('quickfix', vim.bo.buftype)
    H.reset_windows()
    vim.fn.delete(dir, 'rf')
  end)

  it(':HydraEvalCancel ends the running evaluation, keeping the samples that finished; --resume runs the rest', function()
    vim.cmd('HydraEvalCancel')
    assert.are.same({ 'hydra: no evaluation started here is running (:HydraEvalCancel EVALID names one)' }, H.take_errors())

    local before = eval.ids(root)
    require('hydra').eval({ set = SET, agents = { 'careful', 'alternating' }, samples = 8 })
    local running = next_eval(root, before)
    assert.are.equal(16, running.total)
    H.wait(function()
      return (running.done or 0) >= 1
    end, 'a sample to finish', 60000)
    assert.are.equal('running', running.status)
    assert.are.same({ running.id, ev.id }, require('hydra').complete_evals(''))
    vim.cmd('HydraEvalCancel')
    H.wait_message('hydra: cancelled evaluation ' .. running.id)
    wait_over(running, 60000)
    assert.are.equal('cancelled', running.status)
    assert.is_true(running.done < 16, tostring(running.done))
    H.wait_message('hydra: evaluation ' .. running.id .. ' cancelled after ')

    local lines = H.buffer_lines(H.find_buffer(eval.view_key(running.id)))
    assert.are.equal('hydra · evaluation ' .. running.id .. ' · cancelled', lines[1])
    assert.are.equal(string.format('Evaluated shopcart: %d/16 samples · %d solved', running.done, running.solved), lines[2])
    assert.is_true(#sample_lines(lines) >= running.done, table.concat(lines, '\n'))
    line_with(lines, 'Agents')

    -- Once over, there is nothing to cancel; an id never started here is hydra's error.
    vim.cmd('HydraEvalCancel ' .. running.id)
    H.wait_message('hydra: nothing to cancel: evaluation ' .. running.id .. ' had already finished')
    vim.cmd('HydraEvalCancel shopcart-19990101T000000')
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the error')
    local errors = H.take_errors()
    assert.are.equal(1, #errors)
    assert.truthy(vim.startswith(errors[1], 'hydra: cancel: '), errors[1])

    -- --resume runs the samples its report is missing. hydra names the
    -- evaluation after the report it writes: the same evalId, a new run.
    local kept, cancelled_report = running.done, running.report
    local relative = vim.fn.fnamemodify(cancelled_report, ':.')
    assert.are_not.equal(cancelled_report, relative)
    vim.cmd('HydraEval ' .. vim.fn.fnameescape(SET) .. ' --agents careful,alternating --samples 8 --resume ' .. relative)
    local resumed
    H.wait(function()
      resumed = eval.evals[running.id]
      return resumed ~= running
    end, 'the evaluation to resume')
    H.wait_message('hydra: evaluation ' .. resumed.id .. ' started: ')
    assert.are.equal(cancelled_report, resumed.report)
    assert.is_true(resumed.done >= kept, tostring(resumed.done))
    wait_over(resumed, 120000)
    assert.are.equal('completed', resumed.status)
    lines = H.buffer_lines(H.find_buffer(eval.view_key(resumed.id)))
    assert.are.equal('hydra · evaluation ' .. resumed.id .. ' · completed', lines[1])
    assert.are.equal('Evaluated shopcart: 16/16 samples · 12 solved', lines[2])
    assert.are.equal(16, #sample_lines(lines))
    line_with(lines, '16 samples, 1 case, 2 agents')
  end)

  it(':HydraEvalReport shows a report: the one named, or the newest', function()
    H.reset_windows()
    vim.cmd('HydraEvalReport ' .. vim.fn.fnameescape(report_path))
    local buf
    H.wait(function()
      buf = H.find_buffer(eval.report_key(report_path))
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf
    end, 'the report')
    local lines = H.buffer_lines(buf)
    assert.are.equal('hydra · eval report shopcart · finished', lines[1])
    assert.are.equal('report: ' .. report_path, lines[2])
    local _, answer = H.request(root, 'hydra/evalReport', { report = report_path, format = 'text' })
    holds_text(lines, answer.text)
    assert.are.same({
      'careful #0 solved completed',
      'careful #1 solved completed',
      'alternating #0 solved completed',
      'alternating #1 not solved completed',
    }, sample_lines(lines))

    -- No argument: the newest report, as hydra chooses it.
    local _, newest = H.request(root, 'hydra/evalReport', vim.empty_dict())
    vim.cmd('HydraEvalReport')
    H.wait(function()
      buf = H.find_buffer(eval.report_key(newest.path))
      return buf ~= nil and vim.api.nvim_get_current_buf() == buf
    end, 'the newest report')
    assert.are.equal('report: ' .. newest.path, H.buffer_lines(buf)[2])

    -- A file that is not a report: hydra's error.
    vim.cmd('HydraEvalReport ' .. vim.fn.fnameescape(root .. '/README.md'))
    H.wait(function()
      return #H.messages(vim.log.levels.ERROR) > 0
    end, 'the error')
    local errors = H.take_errors()
    assert.are.equal(1, #errors)
    assert.truthy(vim.startswith(errors[1], 'hydra: eval report: '), errors[1])
  end)
end)

describe(':HydraEval arguments', function()
  local parse = require('hydra').parse_eval_args

  it('reads the set and its options', function()
    assert.are.same(
      { set = 'evals/a.toml', agents = { 'claude', 'codex' }, samples = 5, passK = { 1, 5 } },
      parse('evals/a.toml --agents claude,codex --samples 5 --pass-k 1,5')
    )
    assert.are.same(
      { set = 'a.toml', agents = { 'x' }, out = 'r.json', resume = 'old.json' },
      parse({ '--agents=x', 'a.toml', '--out', 'r.json', '--resume=old.json' })
    )
    assert.are.same({ set = 'a.toml' }, parse({ 'a.toml', '' }))
  end)

  it('says what it cannot read', function()
    local cases = {
      { '', ':HydraEval needs an eval set' },
      { 'a.toml --samples', '--samples needs a value' },
      { 'a.toml --samples 0', "--samples takes a whole number >= 1, not '0'" },
      { 'a.toml --pass-k 1,x', "--pass-k takes whole numbers >= 1 separated by commas, not '1,x'" },
      { 'a.toml --agent x', "unknown option '--agent'" },
      { 'a.toml b.toml', ':HydraEval takes one eval set' },
      { 'a.toml --agents ,', '--agents takes a list separated by commas' },
    }
    for _, c in ipairs(cases) do
      local opts, why = parse(c[1])
      assert.is_nil(opts, c[1])
      assert.truthy(find(why, c[2]), c[1] .. ': ' .. tostring(why))
    end
  end)
end)

describe('the evaluation buffer, drawn from hand-made records', function()
  it('lists the samples by case, agent and index, with their errors', function()
    local lines, highlights = eval.render({
      id = 'basics-20261126T051500',
      name = 'basics',
      status = 'running',
      report = '/r/.hydra/evals/basics-20261126T051500.json',
      cases = 2,
      agents = { 'codex', 'claude' },
      samples = 1,
      passK = { 1 },
      total = 4,
      done = 3,
      solved = 1,
      results = {
        a = { caseId = 'b-case', agent = 'claude', index = 0, solved = true, status = 'completed', score = 97.5 },
        b = { caseId = 'a-case', agent = 'claude', index = 0, solved = false, status = 'timedOut', score = 12,
              error = 'timed out\nafter 600 s' },
        c = { caseId = 'a-case', agent = 'codex', index = 0, solved = false, status = 'completed', score = 62.5 },
      },
    })
    assert.are.same({
      'hydra · evaluation basics-20261126T051500 · running',
      'Evaluating basics: 3/4 samples · 1 solved',
      'agents: codex, claude · 1 sample each · pass@1 · 2 cases',
      'report: /r/.hydra/evals/basics-20261126T051500.json',
    }, { unpack(lines, 1, 4) })
    local at = line_with(lines, 'Samples')
    assert.are.same({
      '  a-case  codex   #0  not solved  completed   62.5',
      '  a-case  claude  #0  not solved  timedOut    12.0  timed out after 600 s',
      '  b-case  claude  #0  solved      completed   97.5',
    }, { unpack(lines, at + 1, at + 3) })
    assert.are.equal('HydraScoreGood', H.group_at(highlights, at + 3, #'  b-case  claude  #0  '))
    assert.are.equal('HydraScorePoor', H.group_at(highlights, at + 1, #'  a-case  codex   #0  '))
    assert.are.equal('HydraError', H.group_at(highlights, at + 2, #'  a-case  claude  #0  not solved  '))
    line_with(lines, 'c cancel · q close')
  end)

  it('says when hydra serve exited before it was over', function()
    local lines = eval.render({ id = 'x-1', name = 'x', status = 'interrupted', results = {}, total = 2, done = 0, solved = 0 })
    assert.are.equal('Evaluated x: 0/2 samples · 0 solved', lines[2])
    line_with(lines, 'hydra serve exited before the evaluation was over')
    line_with(lines, '  No sample has finished yet.')
    no_line_with(lines, 'c cancel')
  end)
end)
