"""Hypothesis profiles: random examples locally (to find new failures), fixed ones under CI (CI=true).

Under CI every property test draws the same examples on each run, so a
submission lands or fails on its own merits; locally each run explores new
examples, and a failure found there becomes a regular test.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
