"""Programs run on every rank of a pool by test_p2p.py: send/recv, isend/irecv, batch_isend_irecv."""

from __future__ import annotations

import time

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from tests.dist.programs_common import ensure_init, message_of

# -- point-to-point ---------------------------------------------------------------------


def p2p_exchanges():
    """send/recv, any-source recv, tags, ordering, batches and group ranks; returns what each rank saw."""
    r, n = ensure_init()
    seen = {}
    # Blocking pairs: rank 0 sends rank k a (2, 3) float64 tensor of value k; a minigrad Tensor both ways.
    if r == 0:
        for k in range(1, n):
            dist.send(mg.ones(2, 3, dtype=mg.float64) * k, dst=k)
    else:
        t = mg.zeros(2, 3, dtype=mg.float64)
        seen["from_zero"] = (dist.recv(t, src=0), t.array.tolist())
    # Any source: every other rank sends its rank to rank 0, which learns the senders from recv's result.
    # (Each part uses its own tag: an any-source receive would also match a later part's message.)
    if r == 0:
        got = []
        for _ in range(n - 1):
            t = np.zeros(1, dtype=np.int64)
            sender = dist.recv(t, tag=11)
            got.append((sender, int(t[0])))
        seen["any_source"] = sorted(got)
    else:
        dist.send(np.array([r], dtype=np.int64), dst=0, tag=11)
    # Tags: the last rank sends tag 5 then tag 7; rank 0 receives tag 7 first.
    last = n - 1
    if r == last:
        works = [dist.isend(np.array([5.0]), dst=0, tag=5), dist.isend(np.array([7.0]), dst=0, tag=7)]
        for w in works:
            w.wait()
    elif r == 0:
        seven, five = np.zeros(1), np.zeros(1)
        dist.recv(seven, src=last, tag=7)
        dist.recv(five, src=last, tag=5)
        seen["tags"] = (float(seven[0]), float(five[0]))
    # Order: two irecvs with the same source and tag get the messages in sending order,
    # even when the second is waited for first.
    if r == last:
        for value in (1, 2):
            dist.send(np.full(4, value, dtype=np.int32), dst=0, tag=3)
    elif r == 0:
        first, second = np.zeros(4, np.int32), np.zeros(4, np.int32)
        w1 = dist.irecv(first, src=last, tag=3)
        w2 = dist.irecv(second, src=last, tag=3)
        w2.wait()
        w1.wait()
        seen["order"] = (int(first[0]), int(second[0]), w1.is_completed(), w2.source_rank())
    # A ring in one batch: send right, receive from the left (would deadlock as blocking calls).
    if n > 1:
        right, left = (r + 1) % n, (r - 1) % n
        incoming = mg.zeros(3)
        ops = [dist.P2POp(dist.isend, mg.ones(3) * r, right, tag=12), dist.P2POp(dist.irecv, incoming, left, tag=12)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        seen["ring"] = incoming.array.tolist()
    # Group ranks: the group of {0, last}; group_dst=1 is global rank `last`, and recv reports global ranks.
    group = dist.new_group([last, 0])
    if group is not dist.NON_GROUP_MEMBER and n > 1:
        if r == 0:
            dist.send(np.arange(3.0), group=group, group_dst=1)
        else:
            out = np.zeros(3)
            seen["group"] = (dist.recv(out, src=0, group=group), out.tolist())
        dist.destroy_process_group(group)
    # Odd dtypes and shapes, including empty tensors.
    samples = [np.array([True, False]), np.zeros((0, 4), np.float32), np.arange(24, dtype=np.int16).reshape(2, 3, 4)]
    if r == 0 and n > 1:
        for s in samples:
            dist.send(s, dst=1)
    elif r == 1:
        ok = []
        for s in samples:
            out = np.zeros_like(s)
            dist.recv(out, src=0)
            ok.append(bool(np.array_equal(out, s)))
        seen["dtypes"] = ok
    dist.barrier()
    return seen


def p2p_mismatches():
    """Rank 1 sends tensors rank 0 does not expect; rank 0's receive raises (never garbage); then a good one."""
    r, n = ensure_init()
    sent = [np.ones(3, np.float32), np.ones(5, np.float32), np.ones(4, np.int32), np.ones((2, 3), np.float32)]
    expected = [np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros((3, 2), np.float32)]
    messages = []
    if r == 1:
        for s in sent:
            dist.send(s, dst=0)
        dist.send(np.full(2, 9.0), dst=0)
    elif r == 0:
        for e in expected:
            messages.append(message_of(lambda e=e: dist.recv(e, src=1)))
        good = np.zeros(2)
        dist.recv(good, src=1)
        messages.append(good.tolist())
    dist.barrier()
    return messages


def p2p_bad_arguments():
    """Wrong arguments fail before any message moves: (type name, message) per call."""
    r, n = ensure_init()
    calls = {
        "send_to_self": lambda: dist.send(np.ones(2), dst=r),
        "recv_from_self": lambda: dist.recv(np.ones(2), src=r),
        "dst_out_of_range": lambda: dist.send(np.ones(2), dst=n + 3),
        "negative_tag": lambda: dist.isend(np.ones(2), dst=(r + 1) % n, tag=-1),
        "no_dst": lambda: dist.send(np.ones(2)),
        "both_dst": lambda: dist.send(np.ones(2), dst=(r + 1) % n, group_dst=(r + 1) % n),
        "not_contiguous": lambda: dist.send(np.ones((4, 4))[:, 0], dst=(r + 1) % n),
        "not_a_tensor": lambda: dist.send([1.0, 2.0], dst=(r + 1) % n),
        "bad_op": lambda: dist.P2POp(dist.send, np.ones(2), (r + 1) % n),
        "empty_batch": lambda: dist.batch_isend_irecv([]),
    }
    return {name: message_of(call) for name, call in calls.items()}


# -- drawn cases ------------------------------------------------------------------------


def p2p_roundtrip(spec):
    """Rank 0 sends ``spec["values"]`` (an array) to rank 1 with tag ``spec["tag"]``; rank 1 sends it back doubled."""
    r, n = ensure_init()
    values, tag = spec["values"], spec["tag"]
    if r == 0:
        dist.send(values, dst=1, tag=tag)
        back = np.zeros_like(values)
        source = dist.recv(back, tag=tag)
        return source, back
    if r == 1:
        got = np.zeros_like(values)
        work = dist.irecv(got, src=0, tag=tag)
        work.wait()
        dist.isend(np.asarray(got * 2) if got.dtype != np.bool_ else got, dst=0, tag=tag).wait()
        return work.source_rank(), got
    return None


def p2p_arrives_while_the_sender_computes(spec):
    """Rank 1 isends ``nbytes`` and sleeps ``sleep`` s without MPI calls; rank 0 returns how long its recv took.

    Also returns whether the bytes arrived intact (checked on rank 0).
    """
    r, _ = ensure_init()
    values = np.arange(spec["nbytes"] // 8, dtype=np.float64)
    dist.barrier()
    if r == 1:
        work = dist.isend(values, dst=0, tag=3)
        time.sleep(spec["sleep"])
        work.wait()
        return None
    received = np.zeros_like(values)
    start = time.perf_counter()
    dist.recv(received, src=1, tag=3)
    return time.perf_counter() - start, bool(np.array_equal(received, values))
