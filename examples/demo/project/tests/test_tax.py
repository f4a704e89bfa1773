from decimal import Decimal


def test_exempt_and_reduced_categories(cart):
    cart.add('OATS', 3)
    assert cart.tax() == Decimal('0.00')
    cart.add('GUIDE')
    assert cart.tax() == Decimal('0.72')  # 4% of the guide, nothing on the oats


def test_coupon_lowers_the_tax_in_proportion(cart):
    cart.add('COFFEE')
    cart.add('OATS')
    assert cart.tax() == Decimal('2.05')
    cart.apply_coupon('WELCOME5')
    # The coffee is 24.90 of the 28.10 subtotal, so it carries that share of
    # the 5.00 off: 8.25% of 24.90 * 23.10 / 28.10 = 1.6887...
    assert cart.tax() == Decimal('1.69')
