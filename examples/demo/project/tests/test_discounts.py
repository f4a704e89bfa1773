from decimal import Decimal

import pytest

from shopcart import InvalidCoupon


def test_percent_coupon_takes_its_share_of_the_subtotal(cart):
    cart.add('COFFEE', 2)
    cart.apply_coupon('SAVE10')
    assert cart.discount() == Decimal('4.98')


def test_fixed_coupon_never_takes_more_than_the_order(cart):
    cart.add('OATS')
    cart.apply_coupon('WELCOME5')
    assert cart.discount() == Decimal('3.20')
    assert cart.total() == Decimal('0.00')


def test_coupon_with_a_minimum_is_refused_below_it(cart):
    cart.add('COFFEE', 4)
    with pytest.raises(InvalidCoupon):
        cart.apply_coupon('BIG20')
    cart.add('COFFEE')
    cart.apply_coupon('BIG20')
    assert cart.discount() == Decimal('24.90')


def test_unknown_code_is_refused(cart):
    cart.add('MUG')
    with pytest.raises(InvalidCoupon):
        cart.apply_coupon('FREESTUFF')


def test_entering_a_code_twice_applies_it_once(cart):
    cart.add('COFFEE', 2)
    cart.apply_coupon('SAVE10')
    cart.apply_coupon('SAVE10')
    assert cart.discount() == Decimal('4.98')


def test_code_counts_once_whatever_its_case(cart):
    cart.add('COFFEE', 2)
    cart.apply_coupon('save10')
    cart.apply_coupon('save10')
    assert cart.discount() == Decimal('4.98')
