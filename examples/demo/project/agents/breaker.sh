#!/usr/bin/env bash
# The hasty agent: it sees the right cause, types the fix in a hurry, drops
# the colon at the end of an `if`, and hands in without running anything.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

start breaker
read_file README.md 0.3
read_file shopcart/cart.py 0.4
say "The coupon code is compared case-sensitively. Easy: normalise it."
pause 0.4

say "Editing shopcart/cart.py"
sed -i 's/^        if code in self\._codes:$/        if code.strip().upper() in self._codes/' shopcart/cart.py
pause 0.6

say "Skipping the tests: a one-line change cannot break anything."
report_changes
say "Done."
