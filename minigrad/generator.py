"""``Generator``: a random number generator object you seed and pass around (``torch.Generator``).

The global generators of ``minigrad.backend`` (seeded by ``mg.manual_seed``)
serve every op that draws random numbers. A ``Generator`` is a separate,
private stream: give it to a sampler, a ``DataLoader`` or ``random_split``
and their draws depend only on its seed, not on what else the program drew::

    g = mg.Generator()
    g.manual_seed(0)
    loader = DataLoader(data, batch_size=32, shuffle=True, generator=g)

The stream is NumPy's PCG64, so the numbers differ from PyTorch's (which
uses a Mersenne twister): the same seed gives the same order within
minigrad, not the order PyTorch would give.
"""

from __future__ import annotations

import struct

import numpy as np

from minigrad import backend
from minigrad.tensor import Tensor

# PyTorch's CPU generator starts from this seed when nobody seeds it.
DEFAULT_SEED = 67280421310721

# get_state layout: seed (u64), PCG64 state and increment (two u64 halves each),
# has_uint32 and uinteger (u32 each); little-endian.
_STATE_FORMAT = "<QQQQQII"
_STATE_SIZE = struct.calcsize(_STATE_FORMAT)
_U64 = 2**64


class Generator:
    """A random number stream with its own seed (``torch.Generator``), on the CPU.

    Args:
        device: only "cpu"; samplers and data loaders draw indices on the CPU.

    An unseeded generator starts from PyTorch's default seed (67280421310721),
    so two fresh generators give the same stream, as in PyTorch.

    Raises:
        RuntimeError: ``device`` is not "cpu".
    """

    def __init__(self, device="cpu"):
        device = backend.normalize_device(device)
        if device != "cpu":
            raise RuntimeError(
                f"Generator: only device='cpu' is supported, got {device!r}; draw on the CPU and move the result"
            )
        self.device = device
        self._seed = DEFAULT_SEED
        self._rng = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed) -> Generator:
        """Restart the stream from ``seed`` and return this generator.

        ``seed`` may lie in [-2**63, 2**64 - 1]; a negative seed stands for
        ``2**64 + seed``, as in PyTorch.

        Raises:
            RuntimeError: ``seed`` is not an int (PyTorch's type for this error).
            ValueError: ``seed`` is out of that range.
        """
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, (bool, np.bool_)):
            raise RuntimeError(f"Generator.manual_seed expected an int, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(2**63) <= seed < _U64:
            raise ValueError(f"Generator.manual_seed: seed must be in [-2**63, 2**64 - 1], got {seed}")
        self._seed = seed % _U64
        self._rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Seed the stream from the operating system's entropy and return the seed chosen."""
        seed = int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0])
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream last started from (``manual_seed``, ``seed`` or the default)."""
        return self._seed

    def get_state(self) -> Tensor:
        """The stream's state as a uint8 Tensor of 48 bytes, for ``set_state``."""
        state = self._rng.bit_generator.state
        pcg = state["state"]
        packed = struct.pack(
            _STATE_FORMAT,
            self._seed,
            pcg["state"] % _U64,
            pcg["state"] // _U64,
            pcg["inc"] % _U64,
            pcg["inc"] // _U64,
            int(state["has_uint32"]),
            int(state["uinteger"]),
        )
        return Tensor(np.frombuffer(packed, dtype=np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        """Restore a state returned by ``get_state`` (of any minigrad ``Generator``); returns self.

        Raises:
            TypeError: ``new_state`` is not a uint8 Tensor.
            RuntimeError: it does not have the 48 bytes ``get_state`` returns.
        """
        if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
            got = f"a Tensor of dtype {new_state.dtype}" if isinstance(new_state, Tensor) else type(new_state).__name__
            raise TypeError(f"Generator.set_state expects a uint8 Tensor from get_state(), got {got}")
        raw = backend.to_numpy(new_state.array).reshape(-1)
        if raw.size != _STATE_SIZE:
            raise RuntimeError(
                f"Generator.set_state expects the {_STATE_SIZE}-byte state from get_state(), got {raw.size} bytes"
            )
        seed, state_lo, state_hi, inc_lo, inc_hi, has_uint32, uinteger = struct.unpack(_STATE_FORMAT, raw.tobytes())
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": state_hi * _U64 + state_lo, "inc": inc_hi * _U64 + inc_lo},
            "has_uint32": has_uint32,
            "uinteger": uinteger,
        }
        self._seed = seed
        self._rng = np.random.Generator(bit_generator)
        return self

    def __repr__(self):
        return f"<minigrad.Generator device={self.device!r} initial_seed={self._seed}>"


def numpy_rng(generator: Generator | None, caller: str) -> np.random.Generator:
    """The NumPy generator to draw from: ``generator``'s own stream, or the global CPU one for None.

    Raises:
        TypeError: ``generator`` is neither a minigrad ``Generator`` nor None (names ``caller``).
    """
    if generator is None:
        return backend.generator("cpu")
    if not isinstance(generator, Generator):
        raise TypeError(f"{caller}: generator must be a minigrad.Generator or None, got {type(generator).__name__}")
    return generator._rng
