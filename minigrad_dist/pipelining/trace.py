"""Pipeline timelines: what each rank did during a step, as a Chrome trace, a Gantt chart and the bubble.

Every ``step`` of a schedule times each action (``schedule.events``: one
``("X", lane, name, start, end, args)`` span per action, on the lanes
``compute`` for ``F``/``B``, ``send`` for starting a send and ``recv`` for
waiting for a message; ``time.perf_counter``, one clock for all processes
of a machine). The steps here:

1. **Gather.** ``gather_events(schedule)`` (collective over the
   pipeline's group) brings every rank's events to group rank 0.
2. **Write.** ``write_trace(path, events_by_rank)`` writes Chrome's trace
   event JSON (open it in https://ui.perfetto.dev or chrome://tracing), one
   process per rank and one thread per lane, the format of the DDP traces
   (``minigrad_dist.ddp.trace``); ``plot_gantt`` draws one row per rank with
   forwards and backwards labelled by microbatch (the papers' picture).
   ``save_trace(schedule, path)`` does both.
3. **Bubble.** ``idle_fractions(events_by_rank)`` is, per rank, the share
   of the step (from the first action of any rank to the last action's end
   on any rank) during which it did not compute; ``bubble_fraction(p, m)``
   is the ideal ``(p - 1)/(m + p - 1)`` of GPipe and 1F1B.
"""

from __future__ import annotations

from pathlib import Path

from minigrad_dist import collectives
from minigrad_dist.ddp import trace as ddp_trace

__all__ = [
    "LANES",
    "bubble_fraction",
    "chrome_trace",
    "gather_events",
    "idle_fractions",
    "plot_gantt",
    "save_trace",
    "write_trace",
]

LANES = ("compute", "send", "recv")


def gather_events(schedule) -> list | None:
    """Every rank's last-step events on group rank 0 as ``[(global rank, events), ...]``; None on other ranks.

    Collective: every rank of the pipeline's group must call it.
    """
    group = schedule.group
    root = group.world_ranks[0]
    gathered = [None] * group.size() if group.rank() == 0 else None
    collectives.gather_object((collectives.get_rank(), schedule.events), gathered, dst=root, group=group)
    return gathered


def chrome_trace(events_by_rank) -> dict:
    """Chrome trace event JSON (a dict) from ``[(rank, events), ...]``: one process per rank, one thread per lane."""
    return ddp_trace.chrome_trace(events_by_rank, lanes=LANES)


def write_trace(path, events_by_rank) -> Path:
    """Write the Chrome trace JSON of every rank to ``path`` (the DDP traces' writer, pipeline lanes); returns it."""
    return ddp_trace.write_trace(path, events_by_rank, lanes=LANES)


def plot_gantt(path, events_by_rank, title="pipeline step") -> Path | None:
    """A Gantt chart PNG (``path`` with a ``.png`` suffix): one row per rank, F and B labelled by microbatch.

    Returns None when matplotlib is not installed.
    """
    try:
        import matplotlib  # noqa: PLC0415  (optional: only for the picture)

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        return None
    origin = min((e[3] for _, events in events_by_rank for e in events), default=0.0)
    fig, ax = plt.subplots(figsize=(11, 1.0 + 0.6 * len(events_by_rank)))
    for row, (_, events) in enumerate(events_by_rank):
        for _, lane, _name, start, end, args in events:
            if lane == "compute":
                left, width = (start - origin) * 1e3, max((end - start) * 1e3, 0.02)
                color = "tab:blue" if args["kind"] == "F" else "tab:green"
                ax.broken_barh([(left, width)], (row - 0.4, 0.8), facecolors=color, edgecolors="white")
                ax.text(
                    left + width / 2, row, str(args["microbatch"]), ha="center", va="center", fontsize=7, color="white"
                )
            elif lane == "recv":
                ax.broken_barh([((start - origin) * 1e3, (end - start) * 1e3)], (row - 0.1, 0.2), facecolors="tab:gray")
    ax.set_yticks(range(len(events_by_rank)))
    ax.set_yticklabels([f"rank {rank}" for rank, _ in events_by_rank])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)   blue: forward, green: backward (label: microbatch), gray: waiting for a message")
    ax.set_title(title)
    fig.tight_layout()
    png = Path(path).with_suffix(".png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def save_trace(schedule, path) -> tuple | None:
    """Gather the last step's events and, on group rank 0, write ``path`` (JSON) and its ``.png``.

    Collective over the schedule's group. Returns ``(json path, png path or None)`` on group rank 0, else None.
    """
    events_by_rank = gather_events(schedule)
    if events_by_rank is None:
        return None
    title = f"{type(schedule).__name__}: {schedule.pp} ranks, {schedule._n_microbatches} microbatches"
    return write_trace(path, events_by_rank), plot_gantt(path, events_by_rank, title)


def idle_fractions(events_by_rank) -> dict:
    """``{rank: share of the step it spent not computing}``; the step spans all ranks' events.

    Raises:
        ValueError: no events (run a ``step`` first).
    """
    spans = [(e[3], e[4]) for _, events in events_by_rank for e in events]
    if not spans:
        raise ValueError("idle_fractions: no events; run schedule.step(...) first")
    begin, end = min(s for s, _ in spans), max(e for _, e in spans)
    result = {}
    for rank, events in events_by_rank:
        busy = sum(e[4] - e[3] for e in events if e[1] == "compute")
        result[rank] = 1.0 - busy / (end - begin)
    return result


def bubble_fraction(pp: int, n_microbatches: int) -> float:
    """The idle share of GPipe and 1F1B with equal stages and free messages: ``(p - 1)/(m + p - 1)``."""
    return (pp - 1) / (n_microbatches + pp - 1)
