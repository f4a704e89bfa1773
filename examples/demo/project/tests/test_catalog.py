import pytest

from shopcart import UnknownProduct


def test_unknown_sku_raises_unknown_product(catalog):
    assert 'COFFEE' in catalog
    with pytest.raises(UnknownProduct):
        catalog.get('TEAPOT')


def test_refuses_free_products_and_untaxable_categories(catalog):
    with pytest.raises(ValueError):
        catalog.add('FREEBIE', 'Sticker', '0.00')
    with pytest.raises(ValueError):
        catalog.add('WINE', 'Red wine', '9.99', tax_category='alcohol')
    assert len(catalog) == 4
