"""Source of 03_distributed_autograd.ipynb (build it with examples/notebooks/build.py)."""

# %% [markdown]
# # Distributed autograd: send/recv nodes, FAST mode and SMART mode
#
# PyTorch's *Distributed Autograd Design* note explains how a backward pass crosses process
# boundaries when a model's forward pass uses RPC. `minigrad_dist` rebuilds it on MPI. This
# notebook runs the note's examples on **2 workers** (launched with `mpiexec -n 2` from here)
# and draws each worker's share of the graph:
#
# 1. every RPC that carries tensors which require grad adds a **send** node on the sender and a
#    **recv** node on the receiver, paired by a globally unique `autograd_message_id`;
# 2. the **FAST mode** algorithm counts dependencies on each worker from its roots *and all of
#    its send nodes*, assuming every send node will receive a gradient;
# 3. when an RPC's result is never used, that assumption fails: FAST mode raises an error
#    (upstream PyTorch would hang) and **SMART mode**, which first finds the send nodes that
#    really take part, gives the right gradients.
#
# Graph nodes cannot leave their process, so each worker describes its share with
# `minigrad.viz.describe` as a `GraphPart` (plain, picklable data); worker 1's share travels to
# worker 0 as an RPC result, and this notebook draws all of them with `viz.dot_from_parts`.

# %%
import pickle
import tempfile
from pathlib import Path

import numpy as np
from notebook_helpers import SCRIPTS, function_source, run_ranks, show_dot

from minigrad import viz

assert (SCRIPTS / "dist_autograd_graphs.py").exists(), "run this notebook from its folder, examples/notebooks"

# %% [markdown]
# ## Running the examples on two workers
#
# `scripts/dist_autograd_graphs.py` runs on both ranks; worker 0 drives three distributed
# autograd contexts while worker 1 serves its RPCs. Before each backward pass, every worker
# describes its share of the context (`describe_share`, below); the results come back here as a
# pickle.

# %%
with tempfile.TemporaryDirectory() as tmp:
    out = Path(tmp) / "graphs.pickle"
    report = run_ranks("dist_autograd_graphs.py", 2, out, timeout=60)
    results = pickle.loads(out.read_bytes())
assert report == {"contexts": ["rpc_example", "unused_rpc", "smart"]}

print(function_source("dist_autograd_graphs.py", "describe_share"))

# %% [markdown]
# ## 1. The note's first example: send and recv nodes
#
# Worker 0 owns `t1`, `t2` and `t4`; `my_add` runs on worker 1:

# %%
print(function_source("dist_autograd_graphs.py", "rpc_example"))


def message_table(shares):
    """Print every send/recv node of a context, per worker; return the rows."""
    rows = [row for _, messages in shares for row in messages]
    print(f"{'worker':8s} {'node':24s} {'message id':10s} {'peer':8s} tensors")
    for row in rows:
        print(f"{row['worker']:8s} {row['node']:24s} {row['message_id']:10s} {row['peer']:8s} {row['tensors']}")
    return rows


def check_pairs(rows):
    """Each autograd_message_id names exactly one send node and one recv node, on two different workers."""
    for message_id in {row["message_id"] for row in rows}:
        pair = sorted((row["kind"], row["worker"], row["peer"], row["tensors"])
                      for row in rows if row["message_id"] == message_id)
        assert [kind for kind, *_ in pair] == ["recv", "send"], message_id
        (_, recv_worker, recv_peer, n_recv), (_, send_worker, send_peer, n_send) = pair
        assert recv_worker == send_peer and send_worker == recv_peer and recv_worker != send_worker
        assert n_recv == n_send


example = results["rpc_example"]
rows = message_table(example["shares"])
check_pairs(rows)
assert len(rows) == 4  # the request (t1, t2) and the reply (t3): one pair each

# %% [markdown]
# The request carries `t1` and `t2` from worker 0 to worker 1: a send node on worker 0 and a
# recv node with 2 outputs on worker 1, both named by the request's message id. The reply
# carries `t3` back: a send node on worker 1 and a recv node on worker 0 (ids are
# `creating worker:counter`, so they are unique without any coordination).
#
# ## 2. FAST mode's dependency counts
#
# Each worker counts dependencies from its roots (worker 0: `loss`) **and every send node of
# the context**, and FAST mode assumes each send node will receive exactly one gradient over
# RPC: the dashed edges, drawn from each recv node to the send node of the same id (the way
# its gradients travel). `MulBackward (1)` reads "waits for one gradient".

# %%
def context_picture(shares):
    """DOT text of every worker's share, joined by one dashed edge per send/recv pair."""
    parts = [part for part, _ in shares]
    recv_ids = [row["message_id"] for _, messages in shares for row in messages if row["kind"] == "recv"]
    cross = [viz.CrossEdge(f"recv {m}", f"send {m}", f"autograd_message_id={m}") for m in recv_ids]
    return viz.dot_from_parts(parts, cross)


def count_of(dot, title):
    """The dependency count drawn after ``title`` (unique in the picture)."""
    found = [line for line in dot.splitlines() if f'label="{title} (' in line]
    assert len(found) == 1, (title, found)
    return int(found[0].split(f"{title} (")[1].split(")")[0])


dot = context_picture(example["shares"])
show_dot(dot)

ids = {(row["worker"], row["kind"]): row["message_id"] for row in rows}
request, reply = ids[("worker0", "send")], ids[("worker1", "send")]
assert count_of(dot, f"SendRpcBackward[{request}]") == 1  # send1 in the note: waits for worker 1's gradient
assert count_of(dot, "MulBackward") == 1
assert count_of(dot, f"SendRpcBackward[{reply}]") == 1  # send2
assert count_of(dot, "AddBackward") == 1
assert count_of(dot, f"RecvRpcBackward[{request}]") == 2  # recv1: one gradient per output, t1 and t2

# %% [markdown]
# The backward pass then runs as in the note: worker 0 runs `MulBackward`, accumulates `t4`'s
# gradient and reaches `recv2`, which sends `t3`'s gradient to worker 1; worker 1 counts its own
# dependencies (from `send2`), runs `send2`, `AddBackward` and `recv1`, which sends the gradients
# of `t1` and `t2` back to `send1` on worker 0. Gradients accumulate per context
# (`dist_autograd.get_gradients(context_id)`), not in `.grad`. They equal those of the same
# computation run in one process:

# %%
def check_gradients(result):
    for name, local in result["local"].items():
        got = result["grads"][name]
        print(f"{name}: distributed {'None' if got is None else np.round(got[0], 4)}   "
              f"local {'None' if local is None else np.round(local[0], 4)}   (first row)")
        if local is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, local, rtol=1e-12)


assert example["error"] is None
check_gradients(example)

# %% [markdown]
# ## 3. When an RPC's result is never used
#
# The note's second example computes `d = a + b` and `e = b * c` on worker 1 but only uses `d`:

# %%
print(function_source("dist_autograd_graphs.py", "unused_rpc"))
unused = results["unused_rpc"]
rows = message_table(unused["shares"])
check_pairs(rows)
dot = context_picture(unused["shares"])
show_dot(dot)
assert len(rows) == 8  # two RPCs: a request and a reply each

# %% [markdown]
# FAST mode starts from **every** send node. `b` was sent twice, so its `AccumulateGrad` counts
# two dependencies. But `e`'s recv node on worker 0 is not reachable from `loss` (count 0, it
# never runs), so `e`'s send node on worker 1 never receives a gradient, `MulBackward` never
# runs, and `b` receives only one of its two gradients. Upstream PyTorch hangs in this case;
# `minigrad_dist` notices at the end of the pass and raises an error that says what happened:

# %%
b_count = [line for line in dot.splitlines() if "AccumulateGrad (" in line and "\\nb\\n" in line]
assert len(b_count) == 1 and "AccumulateGrad (2)" in b_count[0]
recv_of_e = [row["message_id"] for row in rows if row["worker"] == "worker0" and row["kind"] == "recv"][1]
assert count_of(dot, f"RecvRpcBackward[{recv_of_e}]") == 0

print(unused["error"])
assert "received only part of their gradients" in unused["error"]
assert "(received 1 of 2 gradients)" in unused["error"] and "mode='smart'" in unused["error"]
assert unused["grads"] is None

# %% [markdown]
# ## 4. SMART mode
#
# The note proposes, but never specifies, a SMART mode. `minigrad_dist` implements it as a
# discovery phase before the backward pass: from the roots, find the recv nodes they reach;
# ask each sender which recv nodes *its* paired send node reaches; repeat until nothing new is
# found. Only the send nodes found this way become roots on their workers, so `b` waits for one
# gradient, `c` gets none, and the gradients match one process exactly. The price is one round
# of RPCs per level of send/recv nesting before the pass starts, so FAST stays the default.

# %%
smart = results["smart"]
assert smart["error"] is None
check_gradients(smart)
assert smart["grads"]["c"] is None  # e = b * c does not reach the loss
np.testing.assert_allclose(smart["grads"]["b"], np.ones((3, 3)))  # d(sum(a + b))/db

# %% [markdown]
# To draw a context in your own code, `minigrad_dist.autograd.pictures` packages the steps of
# this notebook: `describe_context(context_id, roots)` on each worker (through RPC) and
# `context_dot(described)` in one place.
