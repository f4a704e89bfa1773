#!/usr/bin/env bash
# Shows, without hydra, that the demo tells the story it promises:
#   - the pristine project builds, lints clean, and fails exactly one test;
#   - careful fixes the bug with a small diff and one more passing test;
#   - breaker leaves a syntax error, so the build fails;
#   - sprawler fixes the bug too, but inside a diff of hundreds of lines.
#
# Each agent runs in its own throwaway copy of project/, turned into a git
# repository first, the way hydra gives each agent its own worktree. The
# build, test and lint commands are read from project/hydra.toml, so this
# checks exactly what hydra would run. Exits 1 when any expectation fails.
#
# Usage: examples/demo/check.sh [--keep]   (--keep leaves the copies behind)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
project=$here/project
task="Fix the open issue in README.md: a coupon code typed in lower case is applied twice"
agents=(careful breaker sprawler)

keep=false
[[ ${1:-} == --keep ]] && keep=true

say() {
  printf '%s\n' "$*"
}

die() {
  say "check.sh: $*" >&2
  exit 2
}

# The checks need a python3 with pytest and pyflakes. Some machines put
# another interpreter first on PATH (pyenv, a virtualenv) without them.
find_python() {
  if python3 -c 'import pytest, pyflakes' 2>/dev/null; then
    return 0
  fi
  if /usr/bin/python3 -c 'import pytest, pyflakes' 2>/dev/null; then
    say "note: $(command -v python3) has no pytest or pyflakes; using /usr/bin/python3"
    export PATH="/usr/bin:$PATH"
    return 0
  fi
  die "needs python3 with pytest and pyflakes (Debian: apt-get install python3-pytest python3-pyflakes)"
}

# Prints [scoring] KEY from hydra.toml.
scoring_command() {
  python3 - "$project/hydra.toml" "$1" <<'PY'
import sys
import tomllib

with open(sys.argv[1], 'rb') as f:
    print(tomllib.load(f)['scoring'][sys.argv[2]])
PY
}

# Copies the pristine project to DIR and commits it as the base.
prepare() {
  local dir=$1
  cp -R "$project" "$dir"
  git -C "$dir" init -q
  git -C "$dir" add -A
  git -C "$dir" -c user.name=demo -c user.email=demo@localhost commit -q -m "pristine demo project"
}

# Everything changed since the base commit, new files included, as
# "FILES ADDED REMOVED". It stages the changes, as hydra's commit would.
diff_totals() {
  local dir=$1
  git -C "$dir" add -A
  git -C "$dir" diff --cached --numstat |
    awk '{ files++; added += $1; removed += $2 } END { printf "%d %d %d\n", files, added, removed }'
}

# One pytest count ("passed", "failed", "error") from its summary line; 0 when absent.
pytest_count() {
  local summary=$1 word=$2 count
  count=$(grep -oE "[0-9]+ ${word}s?\b" <<<"$summary" | grep -oE '^[0-9]+' || true)
  say "${count:-0}"
}

# Runs the three checks in DIR and stores what they report under NAME.
declare -A build_rc test_rc passed failed errors lint_issues files added removed agent_rc seconds
measure() {
  local name=$1 dir=$2 output summary
  read -r "files[$name]" "added[$name]" "removed[$name]" < <(diff_totals "$dir")

  build_rc[$name]=0
  (cd "$dir" && bash -c "$build_command") >"$dir.build.log" 2>&1 || build_rc[$name]=$?

  test_rc[$name]=0
  output=$(cd "$dir" && bash -c "$test_command" 2>&1) || test_rc[$name]=$?
  printf '%s\n' "$output" >"$dir.test.log"
  summary=$(grep -E '[0-9]+ (passed|failed|errors?)' <<<"$output" | tail -n 1 || true)
  passed[$name]=$(pytest_count "$summary" passed)
  failed[$name]=$(pytest_count "$summary" failed)
  errors[$name]=$(pytest_count "$summary" error)

  # pyflakes reports one "path:line:col ..." line per problem: warnings on
  # stdout, syntax errors (with the offending source line) on stderr.
  output=$(cd "$dir" && bash -c "$lint_command" 2>&1) || true
  printf '%s\n' "$output" >"$dir.lint.log"
  lint_issues[$name]=$(grep -cE '^[^ :]+:[0-9]+:' <<<"$output" || true)
}

now() {
  date +%s.%N
}

# Runs agent NAME in DIR the way hydra does: cwd = its worktree, stdin closed,
# the task and ids in the environment. Its own output is shown indented.
run_agent() {
  local name=$1 dir=$2 started rc=0
  started=$(now)
  (cd "$dir" && HYDRA_TASK=$task HYDRA_AGENT_ID=$name HYDRA_WORKTREE=$dir HYDRA_RACE_ID=check \
    "./agents/$name.sh" </dev/null) >"$dir.agent.log" 2>&1 || rc=$?
  agent_rc[$name]=$rc
  seconds[$name]=$(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  sed 's/^/    /' "$dir.agent.log"
}

# Runs agent NAME a second time in DIR: its result must not change.
check_idempotent() {
  local name=$1 dir=$2 before after
  before=$(git -C "$dir" diff --cached | sha256sum)
  (cd "$dir" && HYDRA_TASK=$task "./agents/$name.sh" </dev/null) >"$dir.again.log" 2>&1 || return 1
  after=$(git -C "$dir" add -A && git -C "$dir" diff --cached | sha256sum)
  [[ $before == "$after" ]]
}

failures=0
expect() {
  local description=$1
  shift
  if "$@"; then
    say "  ok    $description"
  else
    say "  FAIL  $description"
    failures=$((failures + 1))
  fi
}

row() {
  local name=$1
  printf '%-9s %5s  %6s %6s %6s  %4s  %5s %6s %6s  %5s\n' "$name" \
    "${build_rc[$name]}" "${passed[$name]}" "${failed[$name]}" "${errors[$name]}" \
    "${lint_issues[$name]}" "${files[$name]}" "+${added[$name]}" "-${removed[$name]}" "${seconds[$name]:--}"
}

main() {
  command -v git >/dev/null || die "needs git"
  find_python
  build_command=$(scoring_command build_command)
  test_command=$(scoring_command test_command)
  lint_command=$(scoring_command lint_command)

  work=$(mktemp -d "${TMPDIR:-/tmp}/hydra-demo-check.XXXXXX")
  if $keep; then
    say "copies kept in $work"
  else
    trap 'rm -rf "$work"' EXIT
  fi

  prepare "$work/pristine"
  measure pristine "$work/pristine"

  local name
  for name in "${agents[@]}"; do
    prepare "$work/$name"
    say "== $name"
    run_agent "$name" "$work/$name"
    measure "$name" "$work/$name"
  done

  say ""
  say "build: exit code of '$build_command'"
  say "tests: counts from '$test_command'"
  say "lint:  problems reported by '$lint_command'"
  say "diff:  files, lines added and removed against the pristine commit (git diff --numstat)"
  say ""
  say "          build  passed failed errors  lint  files  added removed  secs"
  row pristine
  for name in "${agents[@]}"; do
    row "$name"
  done
  say ""

  local churn_careful=$((added[careful] + removed[careful]))
  local churn_sprawler=$((added[sprawler] + removed[sprawler]))
  local total_pristine=$((passed[pristine] + failed[pristine]))
  say "pristine"
  expect "builds" test "${build_rc[pristine]}" -eq 0
  expect "exactly one test fails (of $total_pristine)" test "${failed[pristine]}" -eq 1 -a "${errors[pristine]}" -eq 0
  expect "8 to 15 tests pass" test "${passed[pristine]}" -ge 8 -a "${passed[pristine]}" -le 15
  expect "lints clean" test "${lint_issues[pristine]}" -eq 0
  say "careful"
  expect "exits 0" test "${agent_rc[careful]}" -eq 0
  expect "builds" test "${build_rc[careful]}" -eq 0
  expect "every test passes, one more than before" \
    test "${failed[careful]}" -eq 0 -a "${errors[careful]}" -eq 0 -a "${passed[careful]}" -eq $((total_pristine + 1))
  expect "lints clean" test "${lint_issues[careful]}" -eq 0
  expect "small diff: 2 files, under 20 lines" test "${files[careful]}" -eq 2 -a "$churn_careful" -lt 20
  expect "a second run changes nothing" check_idempotent careful "$work/careful"
  say "breaker"
  expect "exits 0" test "${agent_rc[breaker]}" -eq 0
  expect "the build fails" test "${build_rc[breaker]}" -ne 0
  expect "no test passes" test "${passed[breaker]}" -eq 0 -a "${test_rc[breaker]}" -ne 0
  expect "lint reports the syntax error" test "${lint_issues[breaker]}" -ge 1
  expect "a second run changes nothing" check_idempotent breaker "$work/breaker"
  say "sprawler"
  expect "exits 0" test "${agent_rc[sprawler]}" -eq 0
  expect "builds" test "${build_rc[sprawler]}" -eq 0
  expect "every test passes" test "${failed[sprawler]}" -eq 0 -a "${errors[sprawler]}" -eq 0 -a "${passed[sprawler]}" -gt 0
  expect "lints clean" test "${lint_issues[sprawler]}" -eq 0
  expect "sprawling diff: over 15 files and 600 lines" test "${files[sprawler]}" -gt 15 -a "$churn_sprawler" -gt 600
  expect "a second run changes nothing" check_idempotent sprawler "$work/sprawler"

  say ""
  if ((failures > 0)); then
    say "$failures expectation(s) failed"
    exit 1
  fi
  say "the demo tells its story: careful wins, breaker breaks the build, sprawler sprawls"
}

main
