#!/usr/bin/env bash
# The reviewer of the demo's collaboration (`hydra collab`, with fixer). hydra
# runs it in a throwaway checkout of the builder's round, with the task, the
# diff and the scores in HYDRA_TASK. It approves a fix that comes with a
# regression test and otherwise asks for one. Its review is what it prints on
# stdout (hydra reads a plain-text agent's final message so); what it does
# along the way goes to stderr, which its log keeps too.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
say() { printf '%s\n' "$*" >&2; }

say "reviewer reading round ${HYDRA_ITERATION:-1} in ${HYDRA_WORKTREE:-$PWD}"
prompt=${HYDRA_TASK:-}
changed=$(grep -c '^diff --git' <<<"$prompt" || true)
say "The diff changes $changed file(s)."
pause 0.3

# A line the diff adds that defines a test function.
if grep -qE '^\+def test_' <<<"$prompt"; then
  say "A regression test comes with the fix."
  pause 0.2
  printf '%s\n' "LGTM. The duplicate check now compares normalised codes, and the new test \
applies the same coupon twice in different cases, so the bug cannot come back unnoticed."
elif (( changed == 0 )); then
  printf '%s\n' "Nothing changed yet: the coupon is still applied twice when retyped in lower case."
else
  say "No test covers the bug."
  pause 0.2
  printf '%s\n' "The fix in Cart.apply_coupon looks right, but nothing proves it: add a regression \
test in tests/test_discounts.py that applies the same coupon twice, typed differently, and checks \
that the discount counts once."
fi
