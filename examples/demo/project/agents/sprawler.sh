#!/usr/bin/env bash
# The over-eager agent: it fixes the bug correctly, then "modernises" the
# whole project on the way (renames, double quotes, file banners, docstrings,
# new modules and documents nobody asked for). Every test still passes, but
# the change touches every file and is far too big to review.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

start sprawler
say "Surveying the whole project before changing anything"
for file in README.md pyproject.toml shopcart/*.py tests/*.py; do
  read_file "$file" 0.1
done
say "Naming is inconsistent (sku, LineItem) and the quoting style is dated."
say "Fixing the bug, and cleaning up the codebase while I am at it."
pause 0.4

say "Editing shopcart/cart.py: normalise the code before looking for duplicates"
python3 - <<'PY'
import sys
from pathlib import Path

path = Path('shopcart/cart.py')
source = path.read_text()
if 'normalized_code = normalize_code(code)' in source:
    print('  already fixed')
    sys.exit(0)
edits = [
    ('from .discounts import InvalidCoupon, total_discount\n',
     'from .discounts import InvalidCoupon, normalize_code, total_discount\n'),
    ('        if code in self._codes:\n'
     '            return\n'
     '        coupon = self._coupon_book.lookup(code)\n',
     '        normalized_code = normalize_code(code)\n'
     '        if normalized_code in self._codes:\n'
     '            return\n'
     '        coupon = self._coupon_book.lookup(normalized_code)\n'),
]
for old, new in edits:
    if old not in source:
        sys.exit('  shopcart/cart.py is not what I expected: %r is missing' % old)
    source = source.replace(old, new)
path.write_text(source)
print('  Cart.apply_coupon now checks the normalised code')
PY
pause 0.3

say "Renaming sku -> product_code and LineItem -> CartLine across the package and tests"
say "Converting strings to double quotes, adding file banners and test docstrings"
python3 - <<'PY'
import ast
import io
import re
import tokenize
from pathlib import Path

RENAMES = {'sku': 'product_code', 'LineItem': 'CartLine'}
BANNER = """\
# ----------------------------------------------------------------------------
# shopcart: {path}
#
# Part of the shopcart project. See README.md for an overview and
# CONTRIBUTING.md for the conventions this file follows.
# ----------------------------------------------------------------------------

"""
FUTURE = 'from __future__ import annotations\n'


def rename(source):
    # Inside longer names too (test_unknown_sku_...), but not inside words.
    for old, new in RENAMES.items():
        source = re.sub(r'(?<![A-Za-z0-9])%s(?![A-Za-z0-9])' % old, new, source)
    return source


def double_quotes(source):
    """Rewrites 'x' as "x", token by token, so only real string literals change."""
    lines = source.splitlines(keepends=True)
    edits = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.STRING:
            continue
        body = token.string.lstrip('rbuRBU')
        prefix = token.string[:len(token.string) - len(body)]
        inner = body[1:-1]
        if body.startswith("'''") or not body.startswith("'") or '"' in inner or '\\' in inner:
            continue
        edits.append((token.start, token.end, prefix + '"' + inner + '"'))
    for (row, start), (_, end), text in reversed(edits):
        lines[row - 1] = lines[row - 1][:start] + text + lines[row - 1][end:]
    return ''.join(lines)


def future_import(source):
    if FUTURE in source:
        return source
    lines = source.splitlines(keepends=True)
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        at = body[0].end_lineno  # after the module docstring
        lines[at:at] = ['\n', FUTURE]
    else:
        lines[0:0] = [FUTURE, '\n']
    return ''.join(lines)


def test_docstrings(source):
    """Gives every test a docstring spelled out from its name."""
    lines = source.splitlines(keepends=True)
    tests = [node for node in ast.parse(source).body
             if isinstance(node, ast.FunctionDef) and node.name.startswith('test_')
             and ast.get_docstring(node) is None]
    for node in reversed(tests):
        sentence = node.name[len('test_'):].replace('_', ' ').capitalize()
        lines.insert(node.lineno, '    """%s."""\n' % sentence)
    return ''.join(lines)


def banner(source, path):
    if source.startswith(BANNER.splitlines()[0]):
        return source
    return BANNER.format(path=path) + source


for path in sorted(Path('shopcart').glob('*.py')) + sorted(Path('tests').glob('*.py')):
    source = path.read_text()
    updated = rename(source)
    updated = double_quotes(updated)
    updated = future_import(updated)
    if path.parent.name == 'tests':
        updated = test_docstrings(updated)
    updated = banner(updated, path.as_posix())
    if updated != source:
        path.write_text(updated)
        print('  rewrote %s' % path)
PY
pause 0.6

say "Adding shopcart/errors.py: one exception hierarchy for the whole library"
cat >shopcart/errors.py <<'PY'
# ----------------------------------------------------------------------------
# shopcart: shopcart/errors.py
#
# Part of the shopcart project. See README.md for an overview and
# CONTRIBUTING.md for the conventions this file follows.
# ----------------------------------------------------------------------------

"""Every kind of error shopcart can report, in one place.

ShopcartError is the common base class, so that an application can catch
everything this library raises with a single except clause.
"""

from __future__ import annotations


class ShopcartError(Exception):
    """Base class for the errors shopcart raises."""


class QuantityError(ShopcartError, ValueError):
    """A quantity below one, or above the limit for one line."""


class PriceError(ShopcartError, ValueError):
    """A price that is not a positive amount of money."""


class ProductCodeError(ShopcartError, ValueError):
    """A product code that is empty or contains characters we do not allow."""


class PercentageError(ShopcartError, ValueError):
    """A percentage outside 0..100."""
PY

say "Adding shopcart/validation.py: reusable input checks"
cat >shopcart/validation.py <<'PY'
# ----------------------------------------------------------------------------
# shopcart: shopcart/validation.py
#
# Part of the shopcart project. See README.md for an overview and
# CONTRIBUTING.md for the conventions this file follows.
# ----------------------------------------------------------------------------

"""Input checks shared by the public entry points.

Each function returns the value it was given, cleaned up where that makes
sense, or raises one of the errors from shopcart.errors.
"""

from __future__ import annotations

import re
from decimal import Decimal

from .errors import PercentageError, PriceError, ProductCodeError, QuantityError

PRODUCT_CODE_PATTERN = re.compile(r"[A-Z0-9][A-Z0-9_-]{0,31}")


def require_quantity(quantity: int, maximum: int) -> int:
    """A whole number of units between 1 and `maximum`."""
    if isinstance(quantity, bool) or not isinstance(quantity, int):
        raise QuantityError("quantity must be a whole number, got %r" % (quantity,))
    if quantity < 1:
        raise QuantityError("quantity must be at least 1, got %d" % quantity)
    if quantity > maximum:
        raise QuantityError("quantity must be at most %d, got %d" % (maximum, quantity))
    return quantity


def require_price(price: Decimal) -> Decimal:
    """A positive amount of money."""
    if not isinstance(price, Decimal) or not price.is_finite() or price <= 0:
        raise PriceError("price must be a positive Decimal, got %r" % (price,))
    return price


def require_product_code(product_code: str) -> str:
    """An upper-case code of letters, digits, '-' and '_', at most 32 long."""
    cleaned = product_code.strip().upper()
    if not PRODUCT_CODE_PATTERN.fullmatch(cleaned):
        raise ProductCodeError("not a valid product code: %r" % (product_code,))
    return cleaned


def require_percentage(value: Decimal) -> Decimal:
    """A percentage from 0 to 100 inclusive."""
    value = Decimal(value)
    if not 0 <= value <= 100:
        raise PercentageError("percentage must be between 0 and 100, got %s" % value)
    return value
PY

say "Adding tests/test_validation.py"
cat >tests/test_validation.py <<'PY'
# ----------------------------------------------------------------------------
# shopcart: tests/test_validation.py
#
# Part of the shopcart project. See README.md for an overview and
# CONTRIBUTING.md for the conventions this file follows.
# ----------------------------------------------------------------------------

from __future__ import annotations

from decimal import Decimal

import pytest

from shopcart.errors import (
    PercentageError,
    PriceError,
    ProductCodeError,
    QuantityError,
    ShopcartError,
)
from shopcart.validation import (
    require_percentage,
    require_price,
    require_product_code,
    require_quantity,
)


def test_quantity_within_limits_is_returned():
    """Quantity within limits is returned."""
    assert require_quantity(1, 20) == 1
    assert require_quantity(20, 20) == 20


@pytest.mark.parametrize("quantity", [0, -1, 21, 2.5, True, "3"])
def test_quantity_outside_limits_is_refused(quantity):
    """Quantity outside limits is refused."""
    with pytest.raises(QuantityError):
        require_quantity(quantity, 20)


def test_price_must_be_a_positive_decimal():
    """Price must be a positive decimal."""
    assert require_price(Decimal("0.01")) == Decimal("0.01")
    for price in (Decimal("0"), Decimal("-1"), Decimal("NaN"), 5):
        with pytest.raises(PriceError):
            require_price(price)


def test_product_code_is_cleaned_up():
    """Product code is cleaned up."""
    assert require_product_code("  coffee-1kg ") == "COFFEE-1KG"


@pytest.mark.parametrize("product_code", ["", "   ", "-COFFEE", "COFFEE BEANS", "X" * 33])
def test_bad_product_codes_are_refused(product_code):
    """Bad product codes are refused."""
    with pytest.raises(ProductCodeError):
        require_product_code(product_code)


def test_percentage_bounds_are_inclusive():
    """Percentage bounds are inclusive."""
    assert require_percentage(0) == Decimal(0)
    assert require_percentage("100") == Decimal(100)
    with pytest.raises(PercentageError):
        require_percentage("100.5")


def test_every_error_is_a_shopcart_error():
    """Every error is a shopcart error."""
    for error in (QuantityError, PriceError, ProductCodeError, PercentageError):
        assert issubclass(error, ShopcartError)
        assert issubclass(error, ValueError)
PY
pause 0.3

say "Writing CHANGELOG.md, CONTRIBUTING.md, docs/architecture.md, .editorconfig and tox.ini"
cat >CHANGELOG.md <<'MD'
# Changelog

All notable changes to shopcart are documented in this file. The format
follows "Keep a Changelog", and the project uses semantic versioning.

## Unreleased

### Fixed

- A coupon code entered twice in a different case (`save10`, then `save10`
  again) was applied twice. Codes are now normalised before the duplicate
  check.

### Changed

- Renamed `sku` to `product_code` throughout the public API.
- Renamed `LineItem` to `CartLine`.
- All string literals use double quotes.
- Every module starts with a standard file banner and uses postponed
  evaluation of annotations.
- Every test has a docstring.

### Added

- `shopcart.errors`: a single exception hierarchy rooted at `ShopcartError`.
- `shopcart.validation`: reusable checks for quantities, prices, product
  codes and percentages, with tests.
- `CONTRIBUTING.md`, `docs/architecture.md`, `.editorconfig` and `tox.ini`.

## 0.3.1

- First tracked release.
MD

cat >CONTRIBUTING.md <<'MD'
# Contributing to shopcart

Thank you for taking the time to contribute! This document explains how the
project is laid out and what we expect from a change.

## Getting started

1. Use Python 3.9 or newer.
2. Install the development tools: `python3 -m pip install -e ".[dev]"`.
3. Run the checks before you open a pull request:

   ```sh
   python3 -m compileall -q shopcart tests
   python3 -m pytest -q tests
   python3 -m pyflakes shopcart tests
   ```

   or simply `tox`.

## Coding conventions

- Every module starts with the standard file banner (copy it from any
  existing file) followed by a docstring.
- Use `from __future__ import annotations` in every module.
- Use double quotes for strings.
- Money is always a `Decimal`, rounded with `shopcart.money.round_cents`.
  Never use floats for money.
- Raise the exceptions from `shopcart.errors`; validate input with the
  helpers in `shopcart.validation`.
- Indent with four spaces; keep lines under 100 characters.

## Tests

- Every behaviour change comes with a test.
- Test names describe the behaviour (`test_quantity_limit_allows_exactly_the_maximum`),
  and every test has a one-line docstring that says the same in words.
- Use the fixtures in `tests/conftest.py` (`catalog`, `coupons`, `cart`)
  rather than building carts by hand.

## Commit messages

Write the subject in the imperative mood ("Fix coupon normalisation"), keep it
under 72 characters, and explain in the body why the change is needed.
MD

mkdir -p docs
cat >docs/architecture.md <<'MD'
# shopcart architecture

shopcart is split into small modules, each responsible for one concept. The
dependencies between them only point downwards in this list:

| module | responsibility |
|---|---|
| `shopcart.errors` | the exception hierarchy |
| `shopcart.validation` | input checks shared by the entry points |
| `shopcart.money` | parsing, rounding and formatting amounts of money |
| `shopcart.tax` | tax rates per category and the tax due on an order |
| `shopcart.catalog` | the products a shop sells |
| `shopcart.discounts` | coupon codes and what they take off |
| `shopcart.cart` | line items, coupons and the totals of one order |

## Money

Amounts are `decimal.Decimal` values rounded to the cent with
`ROUND_HALF_UP`. Floats are refused at every entry point because binary
floating point cannot represent most prices exactly.

## Order totals

```
subtotal  = sum(line price x quantity)
discount  = coupons applied in turn, each to what the previous ones left
tax       = tax on each line's share of (subtotal - discount), rounded once
total     = subtotal - discount + tax
```

## Coupons

Coupon codes are normalised (`strip().upper()`) wherever they enter the
library: when a coupon is issued, when it is looked up, and when the cart
checks whether it was applied already. A code is applied at most once per
cart.

## Extending shopcart

- A new tax category is one entry in `shopcart.tax.RATES`.
- A new kind of coupon is a new field on `Coupon` plus a branch in
  `Coupon.discount_on`.
- New input checks belong in `shopcart.validation`, raising an error from
  `shopcart.errors`.
MD

cat >.editorconfig <<'INI'
root = true

[*]
charset = utf-8
end_of_line = lf
insert_final_newline = true
trim_trailing_whitespace = true

[*.py]
indent_style = space
indent_size = 4
max_line_length = 100

[*.{md,toml,ini}]
indent_style = space
indent_size = 2
INI

cat >tox.ini <<'INI'
[tox]
envlist = py39, py310, py311, lint

[testenv]
deps = pytest
commands =
    python -m compileall -q shopcart tests
    python -m pytest -q tests

[testenv:lint]
deps = pyflakes
commands = python -m pyflakes shopcart tests
INI
pause 0.3

say "Rewriting README.md and pyproject.toml"
cat >README.md <<'MD'
# shopcart

**shopcart** is a small, dependency-free shopping-cart library for Python:
products, cart lines, coupon codes and sales tax, with every amount a
`Decimal` rounded to the cent.

- Exact money arithmetic: no floats, ever.
- Coupons that stack predictably, and never twice.
- Sales tax per product category, charged on what the shopper pays.

## Installation

```sh
python3 -m pip install .
```

## Quick start

```python
from shopcart import Cart, Catalog, CouponBook

catalog = Catalog()
catalog.add("COFFEE", "Coffee beans, 1 kg", "24.90")

coupons = CouponBook()
coupons.issue("SAVE10", percent_off=10)

cart = Cart(catalog, coupons)
cart.add("COFFEE", 2)
cart.apply_coupon("save10")  # codes are not case-sensitive
cart.total()                 # Decimal("48.52")
```

## Concepts

| name | what it is |
|---|---|
| `Catalog` | the products a shop sells, by product code |
| `Product` | a product code, a name, a price and a tax category |
| `CartLine` | one product and its quantity in a cart |
| `CouponBook` | the coupons a shop has issued |
| `Cart` | the lines and coupons of one order, and its totals |

See [docs/architecture.md](docs/architecture.md) for how the pieces fit
together.

## Development

```sh
python3 -m compileall -q shopcart tests   # build
python3 -m pytest -q tests                # tests
python3 -m pyflakes shopcart tests        # lint
```

Read [CONTRIBUTING.md](CONTRIBUTING.md) before opening a pull request, and
see [CHANGELOG.md](CHANGELOG.md) for what changed.

## License

shopcart is released under the MIT license.
MD

cat >pyproject.toml <<'TOML'
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "shopcart"
version = "0.4.0"
description = "A shopping cart with coupons and sales tax, priced to the cent."
readme = "README.md"
license = { text = "MIT" }
requires-python = ">=3.9"
classifiers = [
    "Programming Language :: Python :: 3",
    "License :: OSI Approved :: MIT License",
    "Operating System :: OS Independent",
    "Topic :: Office/Business :: Financial :: Point-Of-Sale",
]

[project.optional-dependencies]
dev = ["pytest>=7", "pyflakes>=2.5", "tox>=4"]

[tool.setuptools]
packages = ["shopcart"]

[tool.pytest.ini_options]
minversion = "7.0"
testpaths = ["tests"]
TOML
pause 0.3

run_tests
report_changes
say "Done: fixed the coupon bug and modernised the codebase along the way."
