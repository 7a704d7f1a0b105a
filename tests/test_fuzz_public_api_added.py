"""The fuzz table's topic parts (``tests/fuzz_cases/``): the same three tests over their cases."""

from __future__ import annotations

from tests.fuzz_cases import added_cases
from tests.test_fuzz_public_api import table_tests

ADDED_CASES = added_cases()

(
    test_valid_arguments_work,
    test_wrong_argument_raises_a_documented_error,
    test_odd_values_never_leak_undocumented_errors,
) = table_tests(ADDED_CASES, {}, {})
