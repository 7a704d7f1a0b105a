"""Utilities beside the engine, laid out as ``torch.utils``: ``minigrad.utils.data`` (datasets and loaders)."""

from minigrad.utils import data

__all__ = ["data"]
