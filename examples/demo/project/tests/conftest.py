import pytest

from shopcart import Cart, Catalog, CouponBook


@pytest.fixture
def catalog():
    catalog = Catalog()
    catalog.add('COFFEE', 'Coffee beans, 1 kg', '24.90')
    catalog.add('MUG', 'Enamel mug', '12.50')
    catalog.add('OATS', 'Rolled oats, 500 g', '3.20', tax_category='exempt')
    catalog.add('GUIDE', 'Field guide to birds', '18.00', tax_category='reduced')
    return catalog


@pytest.fixture
def coupons():
    book = CouponBook()
    book.issue('SAVE10', percent_off=10)
    book.issue('WELCOME5', amount_off='5.00')
    book.issue('BIG20', percent_off=20, min_subtotal='100.00')
    return book


@pytest.fixture
def cart(catalog, coupons):
    return Cart(catalog, coupons)
