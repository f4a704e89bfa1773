# The eval set's hidden test: copied into a sample's checkout only after its
# agent finished, so no agent can see it, edit it, or write to it.
from decimal import Decimal


def test_lower_case_code_counts_once(cart):
    cart.add('COFFEE', 2)
    cart.apply_coupon('SAVE10')
    cart.apply_coupon('save10')
    assert cart.discount() == Decimal('4.98')


def test_code_typed_with_spaces_counts_once(cart):
    cart.add('COFFEE', 1)
    cart.apply_coupon(' save10 ')
    cart.apply_coupon('SAVE10')
    assert cart.discount() == Decimal('2.49')
