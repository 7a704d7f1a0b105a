"""The character-level corpus and the global batches, the same on every rank.

1. **Corpus**: the help texts of every topic in ``pydoc_data.topics`` (what
   ``help("for")`` prints), which ship with Python: about 465,000 characters
   of English and Python, no download.
2. **Tokenizer**: one id per distinct character, in sorted order; the
   vocabulary is padded up to a multiple of ``pad_to`` (ids that never
   occur), so it divides by any tensor-parallel size that divides ``pad_to``
   and the model is the same whatever the factorisation (Megatron pads its
   vocabulary for the same reason).
3. **Global batch of step s**: ``batch_size`` windows of ``seq_len + 1``
   characters at offsets drawn from a generator seeded with ``(seed, s)``;
   inputs are the first ``seq_len`` characters, targets the last. Every rank
   draws the same global batch and keeps its data-parallel slice of rows
   (``dp_slice``), so the union over the replicas is the batch one process
   would train on.
"""

from __future__ import annotations

import pydoc_data.topics

import numpy as np

__all__ = ["CharTokenizer", "dp_slice", "global_batch", "load_corpus"]


def load_corpus() -> str:
    """Every help topic of ``pydoc_data.topics``, in sorted order, joined by blank lines."""
    topics = pydoc_data.topics.topics
    return "\n\n".join(topics[name] for name in sorted(topics))


class CharTokenizer:
    """Characters to ids and back.

    Args:
        text (str): the corpus; its distinct characters, sorted, get ids ``0 .. n-1``.
        pad_to (int): round the vocabulary up to a multiple of this (default 64).

    Attributes:
        chars (list[str]): the character of each id below ``len(chars)``.
        vocab_size (int): ``len(chars)`` rounded up to a multiple of ``pad_to``.
    """

    def __init__(self, text: str, pad_to: int = 64):
        if not isinstance(pad_to, int) or pad_to < 1:
            raise ValueError(f"CharTokenizer: pad_to must be a positive int, got {pad_to!r}")
        self.chars = sorted(set(text))
        self._codes = np.array([ord(ch) for ch in self.chars], dtype=np.uint32)
        self.vocab_size = -(-len(self.chars) // pad_to) * pad_to

    def encode(self, text: str) -> np.ndarray:
        """The int64 ids of ``text``.

        Raises:
            KeyError: a character of ``text`` is not in the vocabulary (named).
        """
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        ids = np.searchsorted(self._codes, codes)  # sorted characters are sorted code points
        unknown = (ids >= len(self._codes)) | (self._codes[np.minimum(ids, len(self._codes) - 1)] != codes)
        if unknown.any():
            bad = text[int(np.argmax(unknown))]
            raise KeyError(f"CharTokenizer.encode: character {bad!r} is not in the vocabulary")
        return ids.astype(np.int64)

    def decode(self, ids) -> str:
        """The text of ``ids`` (padding ids, which the corpus never holds, print as ``?``)."""
        return "".join(self.chars[i] if i < len(self.chars) else "?" for i in np.asarray(ids).tolist())


def global_batch(ids: np.ndarray, step: int, batch_size: int, seq_len: int, seed: int):
    """The whole batch of ``step``: inputs and next-character targets, each ``(batch_size, seq_len)`` int64.

    Raises:
        ValueError: the corpus is shorter than one window of ``seq_len + 1``.
    """
    if len(ids) <= seq_len + 1:
        raise ValueError(f"global_batch: the corpus ({len(ids)} ids) is shorter than a window of {seq_len + 1}")
    starts = np.random.default_rng([seed, step]).integers(0, len(ids) - seq_len - 1, size=batch_size)
    windows = np.stack([ids[s : s + seq_len + 1] for s in starts])
    return windows[:, :-1], windows[:, 1:]


def dp_slice(array: np.ndarray, dp_rank: int, dp_size: int) -> np.ndarray:
    """Rows ``dp_rank * B/dp .. (dp_rank+1) * B/dp`` of a batch of ``B`` rows (``B`` must divide by ``dp_size``).

    Raises:
        ValueError: the batch does not divide by ``dp_size``.
    """
    rows = len(array)
    if rows % dp_size:
        raise ValueError(f"dp_slice: a batch of {rows} rows does not divide over {dp_size} data-parallel replicas")
    per_replica = rows // dp_size
    return array[dp_rank * per_replica : (dp_rank + 1) * per_replica]
