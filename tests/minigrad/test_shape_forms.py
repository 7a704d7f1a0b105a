"""minigrad/shape_forms.py against PyTorch: values, gradients, dtypes, errors, both spellings."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg

RNG = np.random.default_rng(0)
M = RNG.normal(size=(3, 4))
V = RNG.normal(size=4)
C = RNG.normal(size=(2, 3, 4))


def _both(fn, *arrays, grad=True):
    """Run ``fn(lib, *tensors)`` with minigrad and torch on float64 copies; compare outputs and input grads."""
    results = []
    for lib in (mg, torch):
        inputs = [lib.tensor(a, dtype=lib.float64, requires_grad=grad) for a in arrays]
        out = fn(lib, *inputs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        values = [np.asarray(o.detach().numpy() if hasattr(o, "detach") else o) for o in outs]
        grads = []
        if grad:
            total = sum((o.double() * lib.tensor(np.arange(o.numel()).reshape(tuple(o.shape)) % 3 + 1.0,
                                                 dtype=lib.float64)).sum() for o in outs if o.is_floating_point())
            total.backward()
            grads = [None if i.grad is None else i.grad.numpy() for i in inputs]
        results.append((values, [str(o.dtype).replace("torch.", "") for o in outs], grads))
    (mine, mine_dtypes, mine_grads), (theirs, their_dtypes, their_grads) = results
    assert mine_dtypes == their_dtypes
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    for a, b in zip(mine_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


DIFFERENTIABLE = {
    "t_matrix": (lambda lib, a: lib.t(a) * 2, [M]),
    "t_method_vector": (lambda lib, a: a.t(), [V]),
    "narrow": (lambda lib, a: lib.narrow(a, 1, 1, 2), [M]),
    "narrow_negative_start": (lambda lib, a: a.narrow(-1, -3, 2), [M]),
    "select": (lambda lib, a: a.select(0, -1), [M]),
    "movedim": (lambda lib, a: lib.movedim(a, 0, 2), [C]),
    "movedim_lists": (lambda lib, a: a.movedim([0, 1], [2, 0]), [C]),
    "moveaxis": (lambda lib, a: lib.moveaxis(a, -1, 0), [C]),
    "swapaxes": (lambda lib, a: a.swapaxes(0, 2), [C]),
    "swapdims": (lambda lib, a: lib.swapdims(a, 1, 2), [C]),
    "broadcast_tensors": (lambda lib, a, b: lib.broadcast_tensors(a, b), [M, V]),
    "broadcast_to": (lambda lib, a: lib.broadcast_to(a, (2, -1, 4)) * 3, [M[:, :1]]),
    "meshgrid_ij": (lambda lib, a, b: lib.meshgrid(a, b, indexing="ij"), [V, V[:3]]),
    "meshgrid_xy": (lambda lib, a, b: lib.meshgrid(a, b, indexing="xy"), [V, V[:3]]),
    "meshgrid_xy_three": (lambda lib, a, b, c: lib.meshgrid(a, b, c, indexing="xy"), [V, V[:3], V[:2]]),
    "hstack_matrices": (lambda lib, a, b: lib.hstack([a, b]), [M, M]),
    "hstack_vectors": (lambda lib, a, b: lib.hstack((a, b)), [V, V]),
    "vstack": (lambda lib, a, b: lib.vstack([a, b]), [M, V]),
    "dstack": (lambda lib, a, b: lib.dstack([a, b]), [M, M]),
    "column_stack": (lambda lib, a, b: lib.column_stack([a, b]), [M[:, 0], M]),
    "concat": (lambda lib, a, b: lib.concat([a, b], dim=1), [M, M]),
    "concatenate": (lambda lib, a, b: lib.concatenate([a, b]), [M, M]),
    "repeat_interleave_int": (lambda lib, a: a.repeat_interleave(2), [M]),
    "repeat_interleave_dim": (lambda lib, a: lib.repeat_interleave(a, 3, dim=1), [M]),
    "repeat_interleave_tensor": (lambda lib, a: a.repeat_interleave(lib.tensor([1, 0, 2]), dim=0), [M]),
    "diag_vector": (lambda lib, a: lib.diag(a), [V]),
    "diag_vector_offset": (lambda lib, a: a.diag(2), [V]),
    "diag_vector_negative": (lambda lib, a: lib.diag(a, -1), [V]),
    "diag_matrix": (lambda lib, a: a.diag(1), [M]),
    "rot90_once": (lambda lib, a: lib.rot90(a), [M]),
    "rot90_twice": (lambda lib, a: a.rot90(2, [0, 1]), [M]),
    "rot90_back": (lambda lib, a: lib.rot90(a, -1, (1, 2)), [C]),
    "masked_select": (lambda lib, a: lib.masked_select(a, a > 0), [M]),
    "masked_select_broadcast": (lambda lib, a: a.masked_select(lib.tensor([True, False, True, True])), [M]),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_differentiable_forms_match_torch(name):
    fn, arrays = DIFFERENTIABLE[name]
    _both(fn, *arrays)


NOT_DIFFERENTIABLE = {
    "nonzero": lambda lib, a: lib.nonzero(a > 0),
    "nonzero_as_tuple": lambda lib, a: (a > 0).nonzero(as_tuple=True),
    "argwhere": lambda lib, a: lib.argwhere(a > 0),
    "unique": lambda lib, a: lib.unique((a * 2).round()),
    "unique_inverse_counts": lambda lib, a: (a * 2).round().unique(return_inverse=True, return_counts=True),
    "eye": lambda lib, a: lib.eye(3, 5, dtype=lib.float64),
    "eye_square": lambda lib, a: lib.eye(2),
    "logspace": lambda lib, a: lib.logspace(-2, 2, 5, dtype=lib.float64),
    "logspace_base2": lambda lib, a: lib.logspace(0, 3, 4, base=2, dtype=lib.float64),
    "new_zeros": lambda lib, a: a.new_zeros(2, 3),
    "new_ones_tuple": lambda lib, a: a.new_ones((2,), dtype=lib.int64),
    "new_full": lambda lib, a: a.new_full((2, 2), 7.0),
    "new_tensor": lambda lib, a: a.new_tensor([1.0, 2.0]),
    "empty_like_filled": lambda lib, a: lib.empty_like(a, dtype=lib.float64).fill_(2.0),
    "type_as": lambda lib, a: a.type_as(lib.tensor([1], dtype=lib.int32)),
    "int": lambda lib, a: (a * 10).int(),
    "short": lambda lib, a: (a * 10).short(),
    "char": lambda lib, a: (a * 10).char(),
    "byte": lambda lib, a: a.abs().mul(10).byte(),
    "half": lambda lib, a: a.half(),
    "repeat_interleave_counts": lambda lib, a: lib.repeat_interleave(lib.tensor([2, 0, 1])),
}


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_value_forms_match_torch(name):
    fn = NOT_DIFFERENTIABLE[name]
    mine, theirs = fn(mg, mg.tensor(M)), fn(torch, torch.tensor(M))
    mine = mine if isinstance(mine, tuple) and not isinstance(mine, torch.Size) else (mine,)
    theirs = theirs if isinstance(theirs, tuple) and not isinstance(theirs, torch.Size) else (theirs,)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        if isinstance(b, torch.Tensor):
            assert str(a.dtype) == str(b.dtype).replace("torch.", "")
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
            assert a.requires_grad == b.requires_grad
        else:
            assert tuple(a) == tuple(b)


@pytest.mark.parametrize("shapes", [((2, 1), (3,)), (2, (3, 1)), ((), (4, 1, 2), (3, 1)), (), ((0, 1), (1, 5))])
def test_broadcast_shapes_matches_torch(shapes):
    assert mg.broadcast_shapes(*shapes) == tuple(torch.broadcast_shapes(*shapes))


def test_layout_queries_match_torch():
    for lib in (mg, torch):
        x = lib.tensor(C)
        view = x.transpose(0, 2)
        assert (x.stride(), view.stride(), view.stride(1)) == ((12, 4, 1), (1, 4, 12), 4)
        assert (x.is_contiguous(), view.is_contiguous()) == (True, False)
        assert (x.get_device(), x.ndimension(), x.nelement(), lib.numel(x)) == (-1, 3, 24, 24)
        assert lib.is_tensor(x) and not lib.is_tensor(C)


def test_writes_through_narrow_and_select_reach_the_base():
    for lib in (mg, torch):
        x = lib.zeros(3, 4)
        x.narrow(1, 1, 2).fill_(1.0)
        x.select(0, 2).add_(5.0)
        assert x.sum().item() == 6.0 + 20.0


def test_int_cast_of_a_tensor_requiring_grad_is_not_differentiable():
    x = mg.tensor([1.5, 2.5], requires_grad=True)
    assert not x.int().requires_grad and x.half().requires_grad
    assert not x.type_as(mg.tensor([1])).requires_grad
    assert x.int().tolist() == [1, 2]


ERRORS = {
    "t_3d": lambda lib, a: a.t(),
    "narrow_past_end": lambda lib, a: a.narrow(0, 1, 2),
    "narrow_bad_dim": lambda lib, a: a.narrow(3, 0, 1),
    "narrow_bad_start": lambda lib, a: a.narrow(0, 5, 0),
    "select_bad_index": lambda lib, a: a.select(1, 3),
    "movedim_lengths": lambda lib, a: a.movedim([0, 1], [0]),
    "movedim_repeat": lambda lib, a: a.movedim([0, 0], [1, 2]),
    "rot90_same_dims": lambda lib, a: a.rot90(1, [1, 1]),
    "rot90_three_dims": lambda lib, a: a.rot90(1, [0, 1, 2]),
    "diag_3d": lambda lib, a: lib.diag(a),
    "broadcast_tensors": lambda lib, a: lib.broadcast_tensors(a, lib.ones(5)),
    "broadcast_to_mismatch": lambda lib, a: lib.broadcast_to(a, (7, 7, 7, 7)),
    "broadcast_to_not_a_tensor": lambda lib, a: lib.broadcast_to([1.0], (2,)),
    "broadcast_shapes_mismatch": lambda lib, a: lib.broadcast_shapes((2,), (3,)),
    "expand_fewer_dims": lambda lib, a: a.expand(3),
    "expand_leading_minus_one": lambda lib, a: a.expand(-1, 2, 3, 4),
    "meshgrid_2d": lambda lib, a: lib.meshgrid(a, indexing="ij"),
    "masked_select_float_mask": lambda lib, a: lib.masked_select(a, a),
    "repeat_interleave_length": lambda lib, a: a.repeat_interleave(lib.tensor([1, 2]), dim=1),
    "repeat_interleave_negative": lambda lib, a: a.repeat_interleave(-1),
    "vstack_empty": lambda lib, a: lib.vstack([]),
    "multinomial_3d": lambda lib, a: lib.multinomial(a.abs(), 1),
    "multinomial_too_many": lambda lib, a: lib.multinomial(lib.tensor([1.0, 0.0, 0.0]), 4),
    "multinomial_negative": lambda lib, a: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
    "bernoulli_range": lambda lib, a: lib.bernoulli(lib.tensor([0.5, 2.0])),
    "normal_negative_std": lambda lib, a: lib.normal(0.0, -1.0, (2,)),
    "eye_negative": lambda lib, a: lib.eye(-1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_pytorchs_types(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        fn(torch, torch.tensor(C))
    with pytest.raises(theirs.type):
        fn(mg, mg.tensor(C))


def test_random_draws_have_the_right_shapes_dtypes_and_statistics():
    mg.manual_seed(3)
    probs = mg.full((20000,), 0.3, dtype=mg.float64)
    draws = mg.bernoulli(probs)
    assert draws.dtype == mg.float64 and abs(draws.mean().item() - 0.3) < 0.02
    assert set(np.unique(probs.bernoulli().numpy())) <= {0.0, 1.0}
    picks = mg.multinomial(mg.tensor([[0.0, 1.0, 3.0]] * 2), 4000, replacement=True)
    assert picks.shape == (2, 4000) and picks.dtype == mg.int64
    assert (picks != 0).all().item() and abs((picks == 2).double().mean().item() - 0.75) < 0.03
    no_repeat = mg.multinomial(mg.tensor([1.0, 2.0, 3.0, 4.0]), 4)
    assert sorted(no_repeat.tolist()) == [0, 1, 2, 3]
    first_choices = [mg.multinomial(mg.tensor([1.0, 0.0, 3.0]), 2).tolist() for _ in range(400)]
    assert all(sorted(c) == [0, 2] for c in first_choices)  # zero weight drawn only when the rest are used up
    assert abs(sum(c[0] == 2 for c in first_choices) / 400 - 0.75) < 0.08
    samples = mg.normal(2.0, 3.0, (40000,))
    assert samples.dtype == mg.float32 and abs(samples.mean().item() - 2.0) < 0.1
    assert abs(samples.std().item() - 3.0) < 0.1
    per_element = mg.normal(mg.tensor([0.0, 100.0], dtype=mg.float64), 1e-9)
    np.testing.assert_allclose(per_element.numpy(), [0.0, 100.0], atol=1e-6)
    like = mg.randint_like(mg.zeros(3, 2), 5)
    assert like.shape == (3, 2) and like.dtype == mg.float32 and (like < 5).all().item()
    assert mg.rand_like(mg.zeros(2, dtype=mg.float64)).dtype == mg.float64
    assert mg.randn_like(mg.zeros(2, 2)).shape == (2, 2)
    generator = mg.Generator().manual_seed(7)
    first = mg.multinomial(mg.ones(5), 3, generator=generator)
    generator.manual_seed(7)
    assert first.tolist() == mg.multinomial(mg.ones(5), 3, generator=generator).tolist()
