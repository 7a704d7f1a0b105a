"""The whole GPT in one process: the reference every parallel factorisation must reproduce.

A decoder-only transformer (Radford et al. 2019, "GPT-2"), small enough to
train character by character on a CPU:

1. **Embed**: token embedding ``wte`` (vocabulary x width) plus learned
   position embedding ``wpe`` (positions x width).
2. **Blocks**, each pre-LayerNorm: ``x = x + attn(ln_1(x))`` with causal
   multi-head self-attention, then ``x = x + mlp(ln_2(x))`` with
   ``Linear(E, 4E) -> GELU -> Linear(4E, E)``.
3. **Head**: a final LayerNorm, then logits ``h @ wte.weight.T``: the output
   head is tied to the token embedding (one matrix, used twice).

``GPT.from_config`` draws the parameters from the seed the way GPT-2 does
(normal with std 0.02, the residual projections scaled by ``1/sqrt(2 n_layer)``,
zero biases). ``parallel.py`` builds every rank's shard by cutting this model,
so all factorisations start from exactly these parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F
from minigrad.nn import init

__all__ = ["GPT", "Block", "GPTConfig", "causal_mask"]

DTYPES = {"float32": mg.float32, "float64": mg.float64}


@dataclass(frozen=True)
class GPTConfig:
    """The model's sizes.

    Attributes:
        vocab_size (int): rows of the (tied) embedding; the tokenizer's padded vocabulary.
        block_size (int): the longest sequence (rows of the position embedding).
        n_layer (int): transformer blocks.
        n_head (int): attention heads per block; must divide ``n_embd``.
        n_embd (int): the model width ``E``.
        dtype (str): ``"float32"`` or ``"float64"``.
    """

    vocab_size: int
    block_size: int
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dtype: str = "float32"

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"GPTConfig: {name} must be a positive int, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(
                f"GPTConfig: n_embd={self.n_embd} must divide by n_head={self.n_head} (each head gets "
                "n_embd / n_head features); change one of them"
            )
        if self.dtype not in DTYPES:
            raise ValueError(f"GPTConfig: dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")


def causal_mask(length: int):
    """The ``(length, length)`` boolean mask, True above the diagonal: position i may not see j > i."""
    return mg.tensor(np.triu(np.ones((length, length), dtype=bool), k=1))


class Block(nn.Module):
    """One pre-LayerNorm transformer block: causal self-attention, then the MLP, each on a residual.

    Shapes: ``(N, L, E)`` in and out (batch first).
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        width, dtype = config.n_embd, DTYPES[config.dtype]
        self.ln_1 = nn.LayerNorm(width, dtype=dtype)
        self.attn = nn.MultiheadAttention(width, config.n_head, batch_first=True, dtype=dtype)
        self.ln_2 = nn.LayerNorm(width, dtype=dtype)
        self.fc = nn.Linear(width, 4 * width, dtype=dtype)
        self.act = nn.GELU()
        self.proj = nn.Linear(4 * width, width, dtype=dtype)

    def forward(self, x):
        """``x + attn(ln_1(x))``, then ``+ mlp(ln_2(.))``."""
        h = self.ln_1(x)
        mask = causal_mask(x.shape[1])
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False, is_causal=True)[0]
        return x + self.proj(self.act(self.fc(self.ln_2(x))))


class GPT(nn.Module):
    """A small GPT: embeddings, ``n_layer`` blocks, a final LayerNorm and the tied output head.

    Args:
        config (GPTConfig): the sizes.

    Shapes: input ``(N, L)`` token ids with ``L <= block_size``; output
    ``(N, L, vocab_size)`` logits of the next token at every position.

    Raises:
        ValueError: in the forward, a sequence longer than ``block_size``.
    """

    def __init__(self, config: GPTConfig):
        super().__init__()
        dtype = DTYPES[config.dtype]
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd, dtype=dtype)
        self.wpe = nn.Embedding(config.block_size, config.n_embd, dtype=dtype)
        self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd, dtype=dtype)

    @classmethod
    def from_config(cls, config: GPTConfig, seed: int) -> GPT:
        """The model with GPT-2's initialization drawn from ``seed`` (the same on every process)."""
        mg.manual_seed(seed)
        model = cls(config)
        residual_std = 0.02 / math.sqrt(2 * config.n_layer)
        with mg.no_grad():
            for name, p in model.named_parameters():
                if ".ln_" in name or name.startswith("ln_f."):
                    continue  # LayerNorms keep their (1, 0)
                if name.endswith("bias"):
                    init.zeros_(p)
                else:
                    std = residual_std if name.endswith("proj.weight") else 0.02  # proj and attn.out_proj
                    init.normal_(p, 0.0, std)
        return model

    def forward(self, idx):
        """Logits ``(N, L, vocab_size)`` for the token ids ``idx`` ``(N, L)``."""
        length = idx.shape[1]
        if length > self.config.block_size:
            raise ValueError(f"GPT: sequence of {length} tokens is longer than block_size={self.config.block_size}")
        x = self.wte(idx) + self.wpe(mg.arange(length))
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)
