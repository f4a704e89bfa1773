# Sourced by the demo's scripted agents. They narrate what they do one line at
# a time, the way a coding agent's log reads, and pause between steps so that a
# race can be watched as it happens. hydra gives them the task in HYDRA_TASK and
# starts them in their own worktree; whatever they leave there is their answer.

say() {
  printf '%s\n' "$*"
}

pause() {
  sleep "$1"
}

# Announces the agent and the task it was given.
start() {
  say "$1 starting in ${HYDRA_WORKTREE:-$PWD}"
  say "Task: ${HYDRA_TASK:-fix the open issue in README.md}"
  pause 0.2
}

read_file() {
  say "Reading $1 ($(wc -l <"$1") lines)"
  pause "${2:-0.2}"
}

# Runs the project's tests the way a careful person would before handing in,
# and reports pytest's one-line summary. The bytecode and cache pytest would
# write are kept out of the worktree so they never count as the agent's changes.
run_tests() {
  say "Running tests: python3 -m pytest -q tests"
  if ! python3 -c 'import pytest' 2>/dev/null; then
    say "  pytest is not installed for $(command -v python3); skipping the test run"
    return 0
  fi
  local summary
  summary=$(PYTHONDONTWRITEBYTECODE=1 python3 -m pytest -q -p no:cacheprovider tests 2>&1 | tail -n 1) || true
  say "  $summary"
}

# Lists what the agent leaves behind, as `git status` sees it.
report_changes() {
  local changes
  changes=$(git status --porcelain --untracked-files=all 2>/dev/null || true)
  if [[ -z $changes ]]; then
    say "No files changed."
    return 0
  fi
  say "Changed $(wc -l <<<"$changes") file(s):"
  while IFS= read -r change; do
    say "  $change"
  done <<<"$changes"
}

# The fix of the open issue: Cart.apply_coupon looks the coupon up first and then
# compares its normalised code with the codes already applied.
fix_duplicate_check() {
  say "Editing shopcart/cart.py: look the coupon up first, then compare its normalised code"
  python3 - <<'PY'
import sys
from pathlib import Path

path = Path('shopcart/cart.py')
source = path.read_text()
buggy = """\
        if code in self._codes:
            return
        coupon = self._coupon_book.lookup(code)
"""
fixed = """\
        coupon = self._coupon_book.lookup(code)
        if coupon.code in self._codes:
            return
"""
if fixed in source:
    print('  already fixed')
elif buggy in source:
    path.write_text(source.replace(buggy, fixed))
    print('  moved the duplicate check after the lookup')
else:
    sys.exit('  could not find the duplicate check in Cart.apply_coupon')
PY
}

# The regression test of the open issue, next to the existing discount tests.
add_regression_test() {
  say "Editing tests/test_discounts.py: add a regression test"
  python3 - <<'PY'
from pathlib import Path

path = Path('tests/test_discounts.py')
source = path.read_text()
test = '''

def test_code_with_stray_spaces_counts_once(cart):
    # Regression: apply_coupon compared the code as typed with the codes it
    # had applied, which are normalised, so a retyped code was applied again.
    cart.add('COFFEE', 2)
    cart.apply_coupon('SAVE10')
    cart.apply_coupon(' Save10 ')
    assert cart.discount() == Decimal('4.98')
'''
if 'def test_code_with_stray_spaces_counts_once' in source:
    print('  already there')
else:
    path.write_text(source + test)
    print('  added test_code_with_stray_spaces_counts_once')
PY
}
