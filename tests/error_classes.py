"""Compare the exception classes minigrad and PyTorch raise for the same bad call.

A program ported from PyTorch keeps its ``except RuntimeError:`` (or
``IndexError``, ...) blocks, so the class of an error matters as much as its
message. Cases are written once in PyTorch's idiom as ``call(L)``, where ``L``
is the library module (``torch`` or ``minigrad``); the classes compared are
the nearest builtin ones, since PyTorch raises subclasses of them (such as
``torch.OutOfMemoryError``).
"""

from __future__ import annotations

import warnings

BUILTIN_CLASSES = (
    FileNotFoundError,
    OSError,
    NotImplementedError,
    AssertionError,
    RuntimeError,
    IndexError,
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
)


def builtin_class(error: BaseException) -> type:
    """The first builtin class of ``BUILTIN_CLASSES`` in ``error``'s ancestry (its own class if none)."""
    return next((c for c in type(error).__mro__ if c in BUILTIN_CLASSES), type(error))


def raised_class(call, library) -> type | None:
    """The builtin class of the error ``call(library)`` raises, or None when it returns (warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's deprecation and zero-element warnings
        try:
            call(library)
        except Exception as error:  # noqa: BLE001  (the class is the result)
            return builtin_class(error)
    return None


def assert_same_class_as_torch(name: str, call) -> None:
    """Assert that ``call`` fails in PyTorch, and in minigrad with the same builtin class."""
    import torch  # noqa: PLC0415  (only the tests that compare load it)

    import minigrad  # noqa: PLC0415

    expected = raised_class(call, torch)
    assert expected is not None, f"{name}: PyTorch accepts this input, so the case tests no error"
    raised = raised_class(call, minigrad)
    got = getattr(raised, "__name__", "nothing")
    assert raised is expected, f"{name}: PyTorch raises {expected.__name__}, minigrad {got}"
