"""A shopping cart: line items, coupons, and the totals a checkout page shows."""

from dataclasses import dataclass
from decimal import Decimal

from .catalog import Product
from .discounts import InvalidCoupon, total_discount
from .money import format_money
from .tax import tax_due

# Larger orders go through the wholesale desk, not the web shop.
MAX_QUANTITY_PER_LINE = 20


@dataclass
class LineItem:
    product: Product
    quantity: int

    @property
    def subtotal(self):
        return self.product.price * self.quantity


class Cart:
    def __init__(self, catalog, coupon_book):
        self._catalog = catalog
        self._coupon_book = coupon_book
        self._lines = {}  # by SKU; dicts keep the order products were added in
        self._coupons = []
        self._codes = set()

    @property
    def lines(self):
        return list(self._lines.values())

    def add(self, sku, quantity=1):
        """Puts `quantity` more of `sku` in the cart, on the line it already has."""
        if quantity < 1:
            raise ValueError('quantity must be at least 1, got %d' % quantity)
        product = self._catalog.get(sku)
        line = self._lines.get(sku)
        held = line.quantity if line else 0
        if held + quantity > MAX_QUANTITY_PER_LINE:
            raise ValueError('at most %d of %s per order' % (MAX_QUANTITY_PER_LINE, sku))
        if line is None:
            line = self._lines[sku] = LineItem(product, 0)
        line.quantity += quantity
        return line

    def remove(self, sku):
        self._lines.pop(sku, None)

    def apply_coupon(self, code):
        """Applies a coupon code.

        Codes are not case-sensitive, and a code counts once: entering it again
        (as shoppers do when the page seems not to react) changes nothing.
        """
        if code in self._codes:
            return
        coupon = self._coupon_book.lookup(code)
        if self.subtotal() < coupon.min_subtotal:
            raise InvalidCoupon('%s needs an order of at least %s'
                                % (coupon.code, format_money(coupon.min_subtotal)))
        self._coupons.append(coupon)
        self._codes.add(coupon.code)

    def subtotal(self):
        return sum((line.subtotal for line in self._lines.values()), Decimal(0))

    def discount(self):
        return total_discount(self._coupons, self.subtotal())

    def tax(self):
        return tax_due(self.lines, self.discount())

    def total(self):
        return self.subtotal() - self.discount() + self.tax()
