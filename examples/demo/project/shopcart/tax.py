"""Sales tax: one rate per product category, charged on what the shopper pays."""

from decimal import Decimal

from .money import round_cents

RATES = {
    'standard': Decimal('0.0825'),
    'reduced': Decimal('0.04'),  # books and newspapers
    'exempt': Decimal('0'),  # groceries
}


def rate_for(category):
    try:
        return RATES[category]
    except KeyError:
        raise ValueError('no tax rate for category %r' % (category,)) from None


def tax_due(lines, discount):
    """The tax on `lines` once `discount` has been taken off the order.

    A coupon lowers what the shopper pays, so it lowers the tax as well: the
    discount is spread over the lines in proportion to their subtotals. The sum
    is rounded once, at the end, so that rounding every line on its own cannot
    put a stray cent on the bill.
    """
    subtotal = sum((line.subtotal for line in lines), Decimal(0))
    if subtotal == 0:
        return round_cents(0)
    paid_share = (subtotal - discount) / subtotal
    tax = sum(
        (line.subtotal * paid_share * rate_for(line.product.tax_category) for line in lines),
        Decimal(0),
    )
    return round_cents(tax)
