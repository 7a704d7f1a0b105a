"""RPC called as a careless user would: an argument that cannot be pickled is named, on the caller, and the
agent keeps working."""

from __future__ import annotations

import pytest

from tests.dist.conftest import get_pool
from tests.dist.rpc import programs_hardening_rpc as programs

pytestmark = pytest.mark.timeout(120)


def test_an_unpicklable_argument_is_named_and_the_agent_keeps_working():
    out = get_pool(2).run(programs.unpicklable_arguments, {"n": 1 << 14}, timeout=90)[0]
    expected = {
        "positional": ("rpc_sync", "args[1]", "_thread.lock"),
        "keyword": ("rpc_sync", "kwargs['b']", "function"),
        "nested": ("rpc_async", "args[0]", "list"),
        "remote": ("remote", "args[0]", "_thread.lock"),
        "after_big_tensor": ("rpc_sync", "args[1]", "_thread.lock"),
    }
    for case, (fn, label, kind) in expected.items():
        error_type, message = out[case]
        assert error_type == "TypeError", (case, out[case])
        assert message.startswith(f"{fn}(to='worker1', func=add): argument {label} (a "), (case, message)
        assert kind in message and "cannot be pickled" in message, (case, message)
    assert "cannot pickle '_thread.lock' object" in out["positional"][1], "the pickling error is quoted"
    assert out["still_works"] == [2.0, 2.0]
    assert out["remote_still_works"] == 7


def test_odd_values_in_every_argument_raise_on_the_caller_naming_the_call():
    out = get_pool(2).run(programs.odd_calls, {}, timeout=90)[0]
    remote = {"wrong arity"}  # raised by the function itself, on the callee, as in PyTorch
    for name, (error_type, message) in out["errors"].items():
        assert error_type in ("TypeError", "ValueError"), (name, error_type, message)
        if name in remote:
            assert "Remote traceback" in message, (name, message)
        elif name.startswith("to="):
            assert "worker" in message, (name, message)
        else:
            assert message.startswith("rpc_sync"), (name, message)
            assert "Remote traceback" not in message, (name, message)
    assert "kwargs keys must be argument names" in out["errors"]["kwargs int key"][1]
    assert "args[0] (a builtins.generator) cannot be pickled" in out["errors"]["generator arg"][1]
    assert out["still_works"] == 5
