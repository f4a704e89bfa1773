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
pause 0.3

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
pause 0.3

run_tests
report_changes
say "Done: the fix is in Cart.apply_coupon, with a regression test."
