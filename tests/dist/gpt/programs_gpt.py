"""Rank programs of the GPT example's tests, and the one-process reference they are compared with.

``train`` runs ``examples/gpt/train.py``'s ``main`` on every rank of a pool
(the factorisation is in its arguments); ``local_losses`` trains the plain
``GPT`` of ``model.py`` in one process, with no parallel layer at all, on
the same global batches.
"""

from __future__ import annotations

import sys
from pathlib import Path

import minigrad as mg
from minigrad.nn import functional as F
from tests.dist.programs_common import ensure_init, message_of

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
if str(EXAMPLES) not in sys.path:  # the ranks import this module by name: make ``gpt`` importable there too
    sys.path.insert(0, str(EXAMPLES))

from gpt import train  # noqa: E402
from gpt.data import CharTokenizer, global_batch, load_corpus  # noqa: E402
from gpt.model import GPT, GPTConfig  # noqa: E402


def train_on_ranks(argv):
    """``train.main(argv)`` on this rank; its result (losses, tokens/s, mesh)."""
    ensure_init()
    return train.main([*argv, "--quiet"])


def errors_on_ranks(argvs):
    """For each command line of ``argvs``: ``(type name, message)`` of what ``train.main`` raised (None: it trained)."""
    ensure_init()
    return [message_of(lambda argv=argv: train.main([*argv, "--quiet"])) for argv in argvs]


def local_losses(argv):
    """The losses of training ``model.GPT`` (no parallel layer, the whole batch at once) with ``argv``'s settings."""
    args = train.parse_args(argv)
    text = load_corpus()
    tokenizer = CharTokenizer(text)
    ids = tokenizer.encode(text)
    config = GPTConfig(tokenizer.vocab_size, args.seq_len, args.n_layer, args.n_head, args.n_embd, args.dtype)
    model = GPT.from_config(config, args.seed)
    optimizer = mg.optim.Adam(model.parameters(), lr=args.lr)
    losses = []
    for step in range(args.steps):
        x, y = (mg.tensor(a) for a in global_batch(ids, step, args.batch_size, args.seq_len, args.seed))
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, config.vocab_size), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
