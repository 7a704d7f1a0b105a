"""DDP timelines: what each rank did during backward, as a Chrome trace and a Gantt chart.

Switch it on with ``DistributedDataParallel(model, trace=True)`` or the
environment variable ``MINIGRAD_DDP_TRACE=1``. The ``Tracer`` is the
Reducer's observer (``observer.py``): when tracing is off the Reducer's
observer is the base class, which ignores every event and adds nothing to
the gradient hooks. Each rank records, with one clock (``time.perf_counter``,
shared by processes on one machine), on these lanes:

* ``backward``: every graph node the autograd executor ran;
* ``hooks``: every gradient hook (a parameter's gradient copied into its bucket);
* ``buckets``: the moment each bucket became ready;
* ``allreduce``: each bucket's reduction, from launch to the moment a test
  or wait saw it complete (MPI completes requests only inside MPI calls,
  so this is when *we* saw it);
* ``finalize``: the end-of-backward wait for all reductions.

``DistributedDataParallel.save_trace(path)`` (collective) gathers every
rank's events to rank 0, which writes ``path`` in Chrome's trace event
JSON format (open it in https://ui.perfetto.dev or chrome://tracing) and,
with matplotlib installed, ``path`` with a ``.png`` suffix: a Gantt chart of
all ranks.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from minigrad import engine
from minigrad_dist.ddp.observer import ReducerObserver

LANES = ("backward", "hooks", "buckets", "allreduce", "finalize")


class Tracer(ReducerObserver):
    """Collects one rank's timeline events (see the module docstring).

    Give it to the Reducer as its observer for the ``hooks``, ``buckets``,
    ``allreduce`` and ``finalize`` lanes; ``start()`` adds the ``backward`` lane.
    """

    def __init__(self, rank: int):
        self.rank = rank
        self.events = []
        self._observing = False
        self._launch_start = None
        self._wait_start = None

    def start(self) -> None:
        """Begin recording backward nodes (the Reducer's events come to this Tracer as its observer)."""
        if not self._observing:
            engine.add_node_observer(self._node_ran)
            self._observing = True

    def stop(self) -> None:
        """Stop recording backward nodes."""
        if self._observing:
            engine.remove_node_observer(self._node_ran)
            self._observing = False

    def _node_ran(self, node, start, end) -> None:
        self.span("backward", node.name(), start, end)

    def span(self, lane: str, name: str, start: float, end: float, **args) -> None:
        """An event with a duration (seconds of ``time.perf_counter``)."""
        self.events.append(("X", lane, name, start, end, args))

    def instant(self, lane: str, name: str, **args) -> None:
        """A point event, now."""
        now = time.perf_counter()
        self.events.append(("i", lane, name, now, now, args))

    def now(self) -> float:
        """The tracer's clock."""
        return time.perf_counter()

    # -- the Reducer's events (see observer.ReducerObserver) ----------------------------------

    def wrap_gradient_work(self, work, names):
        """``work`` timed: one ``hooks`` span per gradient the Reducer takes."""

        def timed(index):
            start = time.perf_counter()
            work(index)
            self.span("hooks", f"hook {names[index]}", start, time.perf_counter(), param=names[index])

        return timed

    def bucket_ready(self, bucket) -> None:
        """A ``buckets`` instant."""
        self.instant("buckets", f"bucket {bucket.index} ready", bucket=bucket.index)

    def launching(self, bucket) -> None:
        """Remember when ``bucket``'s reduction starts."""
        self._launch_start = time.perf_counter()

    def launched(self, bucket) -> None:
        """An ``allreduce`` span from the launch to the moment a test or wait saw it complete."""
        start, name, index, nbytes = self._launch_start, f"allreduce bucket {bucket.index}", bucket.index, bucket.nbytes
        bucket.future.add_done_callback(
            lambda _: self.span("allreduce", name, start, time.perf_counter(), bucket=index, bytes=nbytes)
        )

    def waiting(self) -> None:
        """Remember when the end-of-backward wait starts."""
        self._wait_start = time.perf_counter()

    def waited(self) -> None:
        """A ``finalize`` span for the end-of-backward wait."""
        self.span("finalize", "wait for allreduces", self._wait_start, time.perf_counter())


def lanes_of(events_by_rank, lanes=LANES) -> list:
    """The lanes to draw: ``lanes`` (DDP's by default), then any other lane the events use (FSDP's, say), in order."""
    lanes = list(lanes)
    for _, events in events_by_rank:
        for event in events:
            if event[1] not in lanes:
                lanes.append(event[1])
    return lanes


def chrome_trace(events_by_rank, lanes=LANES) -> dict:
    """Chrome trace event JSON (a dict) from ``[(rank, events), ...]``: one process per rank, a thread per lane.

    ``lanes`` come first (DDP's by default; pipelining passes its own), then any other lane the events use.
    """
    origin = min((e[3] for _, events in events_by_rank for e in events), default=0.0)
    lanes = lanes_of(events_by_rank, lanes)
    trace = []
    for rank, events in events_by_rank:
        trace.append({"name": "process_name", "ph": "M", "pid": rank, "tid": 0, "args": {"name": f"rank {rank}"}})
        for lane_id, lane in enumerate(lanes):
            trace.append({"name": "thread_name", "ph": "M", "pid": rank, "tid": lane_id, "args": {"name": lane}})
        for phase, lane, name, start, end, args in events:
            event = {
                "name": name,
                "cat": lane,
                "ph": phase,
                "ts": round((start - origin) * 1e6, 3),
                "pid": rank,
                "tid": lanes.index(lane),
                "args": {k: _jsonable(v) for k, v in args.items()},
            }
            if phase == "X":
                event["dur"] = round(max(end - start, 0.0) * 1e6, 3)
            else:
                event["s"] = "t"
            trace.append(event)
    return {"traceEvents": trace, "displayTimeUnit": "ms"}


def _jsonable(value):
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


def write_trace(path, events_by_rank, lanes=LANES) -> Path:
    """Write the Chrome trace JSON of every rank to ``path`` (lanes as ``chrome_trace``); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(chrome_trace(events_by_rank, lanes)))
    return path


def plot_gantt(path, events_by_rank, title: str | None = None) -> Path | None:
    """A Gantt chart PNG of all ranks beside ``path`` (None when matplotlib is not installed).

    Lanes no event uses are left out of the picture (``lanes_of`` lists the candidates).
    """
    try:
        import matplotlib  # noqa: PLC0415  (optional: only for the picture)

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        return None
    origin = min((e[3] for _, events in events_by_rank for e in events), default=0.0)
    used = {event[1] for _, events in events_by_rank for event in events}
    lanes = [lane for lane in lanes_of(events_by_rank) if lane in used]
    palette = ["tab:blue", "tab:green", "tab:orange", "tab:red", "tab:gray", "tab:purple", "tab:brown", "tab:cyan"]
    colors = {lane: palette[i % len(palette)] for i, lane in enumerate(lanes_of(events_by_rank))}
    ranks = [rank for rank, _ in events_by_rank]
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.26 * (len(lanes) + 1) * len(ranks)))
    labels, positions = [], []
    for r_index, (rank, events) in enumerate(events_by_rank):
        for lane_id, lane in enumerate(lanes):
            y = r_index * (len(lanes) + 1) + lane_id
            labels.append(f"rank {rank} {lane}")
            positions.append(y)
            bars = [((e[3] - origin) * 1e3, max((e[4] - e[3]) * 1e3, 0.02))
                    for e in events if e[1] == lane and e[0] == "X"]
            if bars:
                ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=colors[lane])
            instants = [(e[3] - origin) * 1e3 for e in events if e[1] == lane and e[0] != "X"]
            if instants:  # a tick each, visible at any zoom
                ax.plot(instants, [y] * len(instants), "|", color=colors[lane], markersize=9, markeredgewidth=1.5)
    ax.set_yticks(positions)
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_title(title or "DDP backward: ops, hooks, bucket readiness and allreduces per rank")
    fig.tight_layout()
    png = Path(path).with_suffix(".png")
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png
