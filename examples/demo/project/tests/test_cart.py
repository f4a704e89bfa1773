from decimal import Decimal

import pytest

from shopcart import MAX_QUANTITY_PER_LINE


def test_adding_a_product_again_adds_to_its_line(cart):
    cart.add('COFFEE')
    cart.add('MUG', 2)
    cart.add('COFFEE', 3)
    assert [(line.product.sku, line.quantity) for line in cart.lines] == [('COFFEE', 4), ('MUG', 2)]
    assert cart.subtotal() == Decimal('124.60')


def test_quantity_limit_allows_exactly_the_maximum(cart):
    cart.add('MUG', MAX_QUANTITY_PER_LINE)
    with pytest.raises(ValueError):
        cart.add('MUG')
    with pytest.raises(ValueError):
        cart.add('COFFEE', MAX_QUANTITY_PER_LINE + 1)
    assert [(line.product.sku, line.quantity) for line in cart.lines] == [('MUG', 20)]


def test_total_is_subtotal_minus_discount_plus_tax(cart):
    cart.add('COFFEE', 2)
    cart.add('MUG')
    cart.apply_coupon('SAVE10')
    assert cart.subtotal() == Decimal('62.30')
    assert cart.discount() == Decimal('6.23')
    assert cart.tax() == Decimal('4.63')  # 8.25% of 56.07
    assert cart.total() == Decimal('60.70')
