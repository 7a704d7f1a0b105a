"""Fuzz-table cases of the public names added by topic, one module per topic, each with a ``CASES`` list.

``tests/test_fuzz_public_api_added.py`` runs them with the table's three
tests, and ``test_the_table_covers_the_public_api`` counts them as cover.
The rules and helpers are those of ``tests/test_fuzz_public_api.py``.
"""

from __future__ import annotations

import importlib
import pkgutil


def added_cases() -> list:
    """The ``CASES`` of every module in this package, in module-name order."""
    cases = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        cases += importlib.import_module(f"{__name__}.{info.name}").CASES
    return cases
