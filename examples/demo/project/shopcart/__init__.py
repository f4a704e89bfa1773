"""shopcart: a shopping cart with coupons and sales tax, priced to the cent."""

from .cart import MAX_QUANTITY_PER_LINE, Cart, LineItem
from .catalog import Catalog, Product, UnknownProduct
from .discounts import Coupon, CouponBook, InvalidCoupon
from .money import format_money, round_cents, to_money

__all__ = [
    'MAX_QUANTITY_PER_LINE',
    'Cart',
    'Catalog',
    'Coupon',
    'CouponBook',
    'InvalidCoupon',
    'LineItem',
    'Product',
    'UnknownProduct',
    'format_money',
    'round_cents',
    'to_money',
]
