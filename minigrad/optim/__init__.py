"""Optimizers (``mg.optim``), mirroring ``torch.optim``: ``SGD``, ``Adam``, ``AdamW``."""

from minigrad.optim.adam import Adam, AdamW
from minigrad.optim.optimizer import Optimizer
from minigrad.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
