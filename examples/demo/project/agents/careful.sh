#!/usr/bin/env bash
# The agent a reviewer hopes for: it finds the cause of the bug, changes the
# two lines that matter and adds a regression test next to the existing ones.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

start careful
read_file README.md
read_file shopcart/cart.py 0.4
read_file shopcart/discounts.py 0.3
say "Cart.apply_coupon checks the code as typed against the normalised codes"
say "it has applied, so 'save10' never matches the 'SAVE10' already in the cart."
pause 0.4

fix_duplicate_check
pause 0.3

add_regression_test
pause 0.3

run_tests
report_changes
say "Done: the fix is in Cart.apply_coupon, with a regression test."
