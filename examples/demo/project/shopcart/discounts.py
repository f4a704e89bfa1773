"""Coupon codes, and what they take off an order."""

from dataclasses import dataclass
from decimal import Decimal

from .money import round_cents, to_money


class InvalidCoupon(ValueError):
    """A code the shop never issued, or one this cart does not qualify for."""


def normalize_code(code):
    """Shoppers type codes in any case and with stray spaces: ' save10' is SAVE10."""
    return code.strip().upper()


@dataclass(frozen=True)
class Coupon:
    code: str  # normalised, see normalize_code()
    percent_off: Decimal = Decimal(0)
    amount_off: Decimal = Decimal(0)
    min_subtotal: Decimal = Decimal(0)

    def discount_on(self, amount):
        """What this coupon takes off `amount`: never more than `amount` itself."""
        off = amount * self.percent_off / 100 + self.amount_off
        return min(round_cents(off), amount)


class CouponBook:
    """The coupons a shop has issued."""

    def __init__(self):
        self._coupons = {}

    def issue(self, code, percent_off=0, amount_off=0, min_subtotal=0):
        percent_off = Decimal(percent_off)
        if not 0 <= percent_off <= 100:
            raise ValueError('percent_off must be between 0 and 100, got %s' % percent_off)
        coupon = Coupon(
            code=normalize_code(code),
            percent_off=percent_off,
            amount_off=to_money(amount_off),
            min_subtotal=to_money(min_subtotal),
        )
        self._coupons[coupon.code] = coupon
        return coupon

    def lookup(self, code):
        try:
            return self._coupons[normalize_code(code)]
        except KeyError:
            raise InvalidCoupon('unknown coupon code %r' % (code,)) from None


def total_discount(coupons, subtotal):
    """Applies `coupons` in turn, each to what the ones before it left to pay."""
    remaining = subtotal
    for coupon in coupons:
        remaining -= coupon.discount_on(remaining)
    return subtotal - remaining
