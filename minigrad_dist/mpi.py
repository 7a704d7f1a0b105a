"""Access to MPI (through mpi4py) and to array buffers MPI can read.

Everything that touches ``mpi4py`` directly goes through this module:

* ``load_mpi()`` imports mpi4py asking for ``MPI_THREAD_MULTIPLE`` (the RPC
  agent's listener and worker threads call MPI concurrently), and raises a
  clear error naming the install command when mpi4py is missing.
* ``cuda_aware()`` says whether device (CuPy) buffers may be handed to MPI
  directly: when ``MINIGRAD_CUDA_AWARE_MPI=1`` is set, or when the MPI
  library's own CUDA-support query answers yes. Otherwise device arrays are
  staged through host copies, and a log line says so once.
* ``mpi_buffer(array)`` returns what to give MPI for an array (the array, or
  a host copy) and ``finish_buffer`` copies results back after the call.
"""

from __future__ import annotations

import ctypes
import logging
import os

from minigrad import backend

logger = logging.getLogger("minigrad_dist")

_MPI = None
_CUDA_AWARE = None
_STAGING_ANNOUNCED = False


def load_mpi():
    """Import and return ``mpi4py.MPI`` (initialized with MPI_THREAD_MULTIPLE when possible).

    Raises:
        ImportError: mpi4py is not installed (says how to install it).
    """
    global _MPI
    if _MPI is None:
        try:
            import mpi4py  # noqa: PLC0415  (optional dependency, imported on first use)
        except ImportError as error:
            raise ImportError(
                "minigrad_dist needs mpi4py and an MPI library: pip install 'minigrad[mpi]' "
                "(installs mpi4py and the mpich wheel, which puts mpiexec in the virtualenv)"
            ) from error
        mpi4py.rc.thread_level = "multiple"
        from mpi4py import MPI  # noqa: PLC0415

        _MPI = MPI
    return _MPI


def cuda_aware() -> bool:
    """True when CuPy device buffers can be passed to MPI calls directly."""
    global _CUDA_AWARE
    if _CUDA_AWARE is None:
        flag = os.environ.get("MINIGRAD_CUDA_AWARE_MPI")
        if flag is not None:
            _CUDA_AWARE = flag.strip().lower() in ("1", "true", "yes")
        else:
            _CUDA_AWARE = _probe_cuda_support()
    return _CUDA_AWARE


def _probe_cuda_support() -> bool:
    """Ask the loaded MPI library (Open MPI's or MPICH's extension query) about CUDA support."""
    load_mpi()
    try:
        lib = ctypes.CDLL(None)
    except OSError:
        return False
    query = getattr(lib, "MPIX_Query_cuda_support", None)
    if query is not None:
        query.restype = ctypes.c_int
        return bool(query())
    query = getattr(lib, "MPIX_GPU_query_support", None)
    if query is not None:
        supported = ctypes.c_int(0)
        cuda = 0  # MPIX_GPU_SUPPORT_CUDA
        if query(ctypes.c_int(cuda), ctypes.byref(supported)) == 0:
            return bool(supported.value)
    return False


def mpi_buffer(array):
    """What to hand MPI for ``array``: the array itself, or a host copy of a device array.

    Device arrays are synchronized first (MPI never waits for CUDA streams).
    """
    if backend.device_of(array) == "cpu":
        return array
    backend.synchronize(array)
    if cuda_aware():
        return array
    _announce_staging()
    return backend.to_numpy(array)


def finish_buffer(array, buffer) -> None:
    """After MPI wrote into ``buffer`` (from ``mpi_buffer``), copy it into ``array`` if staged."""
    if buffer is not array:
        array[...] = backend.to_device(buffer, backend.device_of(array))


def _announce_staging():
    global _STAGING_ANNOUNCED
    if not _STAGING_ANNOUNCED:
        _STAGING_ANNOUNCED = True
        logger.warning(
            "MPI is not CUDA-aware: GPU tensors are staged through host memory for communication "
            "(set MINIGRAD_CUDA_AWARE_MPI=1 if your MPI is built with CUDA support)"
        )
