#!/usr/bin/env bash
# The builder of the demo's collaboration (`hydra collab`, with reviewer):
# on its first round it fixes the bug and hands in without a test; on a
# refinement it reads the review hydra gives it in HYDRA_TASK and does what
# the review asks for (here: a regression test), leaving the fix as it is.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

if [[ ${HYDRA_PHASE:-build} != refine ]]; then
  start fixer
  read_file README.md
  read_file shopcart/cart.py 0.4
  say "The duplicate check compares the code as typed with the normalised codes."
  pause 0.3
  fix_duplicate_check
  pause 0.3
  report_changes
  say "Done: Cart.apply_coupon now compares normalised codes."
  exit 0
fi

say "fixer refining its work (round ${HYDRA_ITERATION:-2}) in ${HYDRA_WORKTREE:-$PWD}"
say "Reading the review"
pause 0.3
if grep -qi 'regression test' <<<"${HYDRA_TASK:-}"; then
  say "The reviewer asks for a regression test: adding one."
  add_regression_test
  pause 0.3
  run_tests
else
  say "The review asks for nothing I know how to do; leaving the work as it is."
fi
report_changes
say "Done: the review is addressed."
