"""Cutting an ``nn.Sequential`` into pipeline stages by index ranges."""

from __future__ import annotations

from minigrad import nn

__all__ = ["split_sequential"]


def split_sequential(model, num_stages=None, split_points=None) -> list:
    """Cut ``model`` (an ``nn.Sequential``) into consecutive ``nn.Sequential`` stages.

    The stages hold the model's own layers (no copies): training a stage
    trains the model, and ``model.named_parameters()`` still names every
    parameter. PyTorch's ``pipeline()`` traces a model and splits it at
    ``SplitPoint``s; this is the same split for a Sequential, by index.

    Args:
        model: the ``nn.Sequential`` to cut.
        num_stages: cut into this many stages of as equal a layer count as
            possible (the first stages take one more layer when it does not divide).
        split_points: instead, the indices where stages 1, 2, ... begin
            (increasing, within ``1 .. len(model) - 1``): ``[2, 5]`` gives
            layers ``0:2``, ``2:5`` and ``5:``.

    Returns:
        A list of ``nn.Sequential``, stage 0 first.

    Raises:
        TypeError: ``model`` is not an ``nn.Sequential``.
        ValueError: neither or both of ``num_stages`` and ``split_points``,
            more stages than layers, or split points out of order or range.
    """
    if not isinstance(model, nn.Sequential):
        raise TypeError(
            f"split_sequential: model must be an nn.Sequential, got {type(model).__name__}; "
            "build the stages' modules yourself and give each to a PipelineStage"
        )
    layers = list(model)
    if (num_stages is None) == (split_points is None):
        raise ValueError("split_sequential: pass num_stages or split_points (one of them)")
    if split_points is None:
        if not isinstance(num_stages, int) or not 1 <= num_stages <= len(layers):
            raise ValueError(
                f"split_sequential: num_stages must be between 1 and the model's {len(layers)} layers, "
                f"got {num_stages!r}"
            )
        base, extra = divmod(len(layers), num_stages)
        sizes = [base + (i < extra) for i in range(num_stages)]
        split_points = [sum(sizes[:i]) for i in range(1, num_stages)]
    points = [0, *split_points, len(layers)]
    if any(not 0 <= a < b <= len(layers) for a, b in zip(points[:-1], points[1:])):
        raise ValueError(
            f"split_sequential: split_points must increase strictly within 1..{len(layers) - 1}, got {split_points}"
        )
    return [nn.Sequential(*layers[a:b]) for a, b in zip(points[:-1], points[1:])]
