"""minigrad/allocator.py: glibc keeps freed memory, so NumPy's temporaries are not faulted in again."""

import os
import platform
import subprocess
import sys
import textwrap

import pytest

from minigrad import allocator

on_glibc = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="mallopt's thresholds are glibc's"
)

# Page faults per call of four chained elementwise ops on 1 MiB float32 arrays, in a fresh process.
FAULTS_OF_A_CHAIN = textwrap.dedent(
    """
    import resource, numpy as np, minigrad
    x, y = np.ones((256, 1024), np.float32), np.full((256, 1024), 2.0, np.float32)
    chain = lambda: ((x * x + 1) * x) / y
    chain()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        chain()
    print(minigrad.allocator.settings(), (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20)
    """
)


def faults_per_chain(keep: str) -> tuple[str, float]:
    env = dict(os.environ, MINIGRAD_KEEP_FREED_MEMORY=keep)
    out = subprocess.run([sys.executable, "-c", FAULTS_OF_A_CHAIN], env=env, capture_output=True, text=True, check=True)
    settings, faults = out.stdout.rsplit(" ", 1)
    return settings, float(faults)


@on_glibc
def test_import_applies_the_documented_thresholds():
    assert allocator.settings() == {"mmap_threshold": 32 * 2**20, "trim_threshold": 256 * 2**20}


@on_glibc
def test_kept_memory_stops_the_page_faults_and_the_variable_opts_out():
    settings_on, faults_on = faults_per_chain("1")
    settings_off, faults_off = faults_per_chain("0")
    assert settings_off == "{}" and "mmap_threshold" in settings_on
    assert faults_off > 200  # glibc's defaults: the chain's 1 MiB results are faulted in page by page
    assert faults_on < faults_off / 10


@pytest.mark.parametrize("bad", [0, -1, 2**31, 1.5, True, "1"])
def test_thresholds_must_be_positive_ints_below_2_to_the_31(bad):
    with pytest.raises(ValueError, match="must be a positive int below 2\\*\\*31"):
        allocator.keep_freed_memory(mmap_threshold=bad)
    with pytest.raises(ValueError, match="trim_threshold"):
        allocator.keep_freed_memory(trim_threshold=bad)
