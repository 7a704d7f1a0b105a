"""What the Reducer tells an observer: gradient hooks, ready buckets, launches, the final wait.

The Reducer reports each step of its algorithm (``reducer.py``) to one
``ReducerObserver``, given to its constructor. The base class below ignores
everything and is the Reducer's default, so the algorithm is written once,
without ``if tracing`` branches; ``trace.Tracer`` is the observer that
records a timeline.

The per-gradient event is the exception that keeps hooks fast: instead of
being told about every gradient, an observer gets the chance, once at
construction, to wrap the Reducer's per-gradient work (``wrap_gradient_work``).
The base class returns it unwrapped, so an unobserved Reducer pays nothing
per gradient.
"""

from __future__ import annotations


class ReducerObserver:
    """Receives the Reducer's events; this base class ignores them (the default: no tracing)."""

    def wrap_gradient_work(self, work, names):
        """The function the Reducer calls for each ready gradient, given ``work`` (called once, at construction).

        Args:
            work: ``work(index)`` copies parameter ``index``'s gradient into its
                bucket and advances the reductions (steps 3-5 of the Reducer).
            names: the parameters' qualified names, by index.

        Returns:
            ``work`` itself, or a function of one argument that calls it (to time it, say).
        """
        return work

    def bucket_ready(self, bucket) -> None:
        """Every gradient of ``bucket`` is in place (its pending count reached zero)."""

    def launching(self, bucket) -> None:
        """The Reducer is about to launch ``bucket``'s reduction."""

    def launched(self, bucket) -> None:
        """``bucket``'s reduction is launched; ``bucket.future`` completes with its result."""

    def waiting(self) -> None:
        """The end of backward starts waiting for every bucket's reduction."""

    def waited(self) -> None:
        """Every bucket's reduction completed."""
