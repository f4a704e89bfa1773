from decimal import Decimal

import pytest

from shopcart import format_money, round_cents, to_money


def test_halves_round_away_from_zero():
    assert to_money('2.675') == Decimal('2.68')
    assert to_money('2.665') == Decimal('2.67')
    assert round_cents(Decimal('-2.675')) == Decimal('-2.68')


def test_floats_are_refused():
    with pytest.raises(TypeError):
        to_money(0.1)


def test_format_groups_thousands_and_shows_refunds():
    assert format_money(Decimal('1234.5')) == '$1,234.50'
    assert format_money(Decimal('-3')) == '-$3.00'
