"""The products a shop sells, by SKU."""

from dataclasses import dataclass
from decimal import Decimal

from .money import to_money
from .tax import rate_for


class UnknownProduct(KeyError):
    """Raised for a SKU the catalog does not hold."""


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    price: Decimal
    tax_category: str = 'standard'


class Catalog:
    def __init__(self):
        self._products = {}

    def add(self, sku, name, price, tax_category='standard'):
        """Adds a product, or replaces the one with the same SKU (a price change)."""
        price = to_money(price)
        if price <= 0:
            raise ValueError('the price of %s must be positive, got %s' % (sku, price))
        rate_for(tax_category)  # refuse a category we could not tax at checkout
        product = Product(sku, name, price, tax_category)
        self._products[sku] = product
        return product

    def get(self, sku):
        try:
            return self._products[sku]
        except KeyError:
            raise UnknownProduct(sku) from None

    def __contains__(self, sku):
        return sku in self._products

    def __len__(self):
        return len(self._products)
