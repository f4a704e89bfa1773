"""Amounts of money: Decimals rounded to whole cents.

Floats are refused everywhere a price enters the library: 0.1 + 0.2 is not
0.3 in binary floating point, and a receipt has to add up exactly.
"""

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal('0.01')


def round_cents(amount):
    """Rounds to the cent, halves away from zero (2.675 -> 2.68), as tills do.

    Python's round() rounds halves to even, which shoppers read as a mistake.
    """
    return Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)


def to_money(value):
    """Reads a price given as a string, an int or a Decimal."""
    if isinstance(value, float):
        raise TypeError('give money as a string or Decimal, not float: %r' % value)
    try:
        amount = Decimal(value)
    except (InvalidOperation, TypeError):
        raise ValueError('not an amount of money: %r' % (value,)) from None
    if not amount.is_finite():
        raise ValueError('not an amount of money: %r' % (value,))
    return round_cents(amount)


def format_money(amount, symbol='$'):
    """'$1,234.50', and '-$3.00' for a refund."""
    sign = '-' if amount < 0 else ''
    return '%s%s%s' % (sign, symbol, format(abs(round_cents(amount)), ',.2f'))
