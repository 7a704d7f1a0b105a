# ruff: noqa: N803  (every case takes the library module as ``L``: torch or minigrad)
"""Bad input to the core tensor ops raises the exception class PyTorch raises for it.

A program ported from PyTorch keeps its ``except RuntimeError:`` (or ``IndexError``, ...) blocks, so
the class matters as much as the message. Each case runs the same bad call written in PyTorch's idiom
against ``torch`` and against ``minigrad`` and compares the nearest builtin class of the two errors
(PyTorch raises subclasses such as ``torch.OutOfMemoryError``). The messages are tested elsewhere
(tests/minigrad/ops/test_errors.py).
"""

from __future__ import annotations

import pytest

from tests.error_classes import assert_same_class_as_torch


def _i64(L, *values):
    return L.tensor(list(values), dtype=L.int64)


def _x_and_loss(L):
    x = L.ones(2, requires_grad=True)
    return x, (x * 2).sum()


CASES = [
    # -- joining and reshaping (ValueError -> RuntimeError unless noted) ----------------------------------
    ("cat_mismatched_shapes", lambda L: L.cat([L.ones(2, 3), L.ones(2, 4)])),
    ("cat_different_ranks", lambda L: L.cat([L.ones(2, 3), L.ones(3)])),
    ("cat_0d_tensors", lambda L: L.cat([L.ones(()), L.ones(())])),  # was a raw IndexError
    ("cat_empty_list", lambda L: L.cat([])),  # ValueError in both
    ("cat_dim_out_of_range", lambda L: L.cat([L.ones(2, 3), L.ones(2, 3)], dim=2)),
    ("stack_mismatched_shapes", lambda L: L.stack([L.ones(2, 3), L.ones(3, 2)])),
    ("stack_empty_list", lambda L: L.stack([])),
    ("hstack_empty_list", lambda L: L.hstack([])),
    ("reshape_wrong_numel", lambda L: L.ones(2, 3).reshape(4, 2)),
    ("reshape_two_minus_ones", lambda L: L.ones(2, 3).reshape(-1, -1)),
    ("reshape_float_size", lambda L: L.ones(2, 3).reshape(2.0, 3)),
    ("view_wrong_numel", lambda L: L.ones(2, 3).view(4, 4)),
    ("view_of_non_contiguous", lambda L: L.ones(2, 3).t().view(6)),
    ("permute_too_few_dims", lambda L: L.ones(2, 3).permute(0)),
    ("permute_repeated_dim", lambda L: L.ones(2, 3).permute(0, 0)),
    ("permute_dim_out_of_range", lambda L: L.ones(2, 3).permute(0, 2)),
    ("flatten_start_after_end", lambda L: L.ones(2, 3).flatten(1, 0)),
    ("flatten_dim_out_of_range", lambda L: L.ones(2, 3).flatten(0, 5)),
    ("t_of_3d", lambda L: L.ones(2, 3, 4).t()),
    ("mT_of_1d", lambda L: L.ones(3).mT),  # was IndexError
    ("transpose_dim_out_of_range", lambda L: L.ones(2, 3).transpose(0, 2)),
    ("expand_incompatible", lambda L: L.ones(2, 3).expand(3, 3)),
    ("squeeze_dim_out_of_range", lambda L: L.ones(2, 3).squeeze(2)),
    ("unsqueeze_dim_out_of_range", lambda L: L.ones(2, 3).unsqueeze(3)),
    ("narrow_past_the_end", lambda L: L.ones(2, 3).narrow(1, 2, 3)),
    ("split_sizes_do_not_sum", lambda L: L.ones(4).split([1, 2])),
    ("chunk_zero", lambda L: L.ones(4).chunk(0)),
    ("repeat_fewer_sizes_than_dims", lambda L: L.ones(2, 3).repeat(2)),
    ("unflatten_0d", lambda L: L.ones(()).unflatten(0, (1,))),  # was a raw IndexError
    ("column_stack_of_a_tensor", lambda L: L.column_stack(L.ones(2))),  # was RuntimeError
    ("meshgrid_bad_indexing", lambda L: L.meshgrid(L.ones(2), L.ones(3), indexing="zz")),
    # -- broadcasting and masks ------------------------------------------------------------------------
    ("add_not_broadcastable", lambda L: L.ones(2, 3) + L.ones(4)),
    ("eq_operator_not_broadcastable", lambda L: L.ones(2, 3) == L.ones(4)),  # was NumPy's ValueError
    ("lt_operator_not_broadcastable", lambda L: L.ones(2, 3) < L.ones(4)),
    ("lt_function_not_broadcastable", lambda L: L.lt(L.ones(2, 3), L.ones(4))),
    ("isclose_not_broadcastable", lambda L: L.isclose(L.ones(2, 3), L.ones(4))),
    ("logical_and_not_broadcastable", lambda L: L.logical_and(L.ones(2, 3), L.ones(4))),
    ("fmax_not_broadcastable", lambda L: L.fmax(L.ones(2, 3), L.ones(4))),  # was NumPy's ValueError
    ("logaddexp_not_broadcastable", lambda L: L.logaddexp(L.ones(2, 3), L.ones(4))),
    ("gcd_not_broadcastable", lambda L: L.gcd(L.ones(2, 3, dtype=L.int64), L.ones(4, dtype=L.int64))),
    ("clamp_min_tensor_not_broadcastable", lambda L: L.clamp_min(L.ones(2, 3), L.ones(4))),
    ("where_not_broadcastable", lambda L: L.where(L.ones(2, 3) > 0, L.ones(2, 3), L.ones(4))),
    ("where_float_condition", lambda L: L.where(L.ones(2, 3), L.ones(2, 3), L.ones(2, 3))),  # was TypeError
    ("where_number_condition", lambda L: L.where(1.0, L.ones(2), L.ones(2))),  # TypeError in both
    ("masked_fill_not_broadcastable", lambda L: L.ones(2, 3).masked_fill(L.ones(4) > 0, 0.0)),
    ("masked_fill_float_mask", lambda L: L.ones(2, 3).masked_fill(L.ones(2, 3), 0.0)),
    ("masked_fill__not_broadcastable", lambda L: L.ones(3).masked_fill_(L.ones(2, 3) > 0, 0.0)),
    ("masked_fill__int_mask", lambda L: L.ones(2).masked_fill_(L.ones(2, dtype=L.int64), 0.0)),
    # -- dtypes the kernels refuse ---------------------------------------------------------------------
    ("sub_of_bools", lambda L: L.ones(2, dtype=L.bool) - L.ones(2, dtype=L.bool)),  # was TypeError
    ("rsub_of_bools", lambda L: True - L.ones(2, dtype=L.bool)),
    ("neg_of_bools", lambda L: -L.ones(2, dtype=L.bool)),
    ("abs_of_bools", lambda L: L.abs(L.ones(2, dtype=L.bool))),  # NotImplementedError
    ("pow_of_bools", lambda L: L.ones(2, dtype=L.bool) ** L.ones(2, dtype=L.bool)),
    ("randn_of_int_dtype", lambda L: L.randn(2, dtype=L.int64)),  # NotImplementedError
    ("rand_of_int_dtype", lambda L: L.rand(2, dtype=L.int64)),
    ("mean_of_ints", lambda L: L.tensor([1, 2]).mean()),
    ("bitwise_and_of_floats", lambda L: L.bitwise_and(L.ones(2), L.ones(2))),
    # -- matrix products -------------------------------------------------------------------------------
    ("matmul_inner_mismatch", lambda L: L.ones(2, 3) @ L.ones(4, 5)),
    ("matmul_vectors_mismatch", lambda L: L.ones(3) @ L.ones(4)),
    ("matmul_0d", lambda L: L.matmul(L.ones(()), L.ones(3))),
    ("matmul_batch_mismatch", lambda L: L.ones(5, 2, 3) @ L.ones(4, 3, 2)),
    ("matmul_dtype_mismatch", lambda L: L.ones(2, 3) @ L.ones(3, 2, dtype=L.float64)),  # was TypeError
    ("mm_inner_mismatch", lambda L: L.mm(L.ones(2, 3), L.ones(4, 2))),
    ("bmm_of_2d", lambda L: L.bmm(L.ones(2, 3), L.ones(3, 2))),
    ("dot_length_mismatch", lambda L: L.dot(L.ones(3), L.ones(4))),
    ("einsum_size_mismatch", lambda L: L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(4, 2))),
    ("einsum_without_operands", lambda L: L.einsum("ij")),  # ValueError in both
    # -- reductions and selection ----------------------------------------------------------------------
    ("sum_repeated_dim", lambda L: L.ones(2, 3).sum((1, -1))),
    ("sum_dim_out_of_range", lambda L: L.ones(2, 3).sum(2)),
    ("max_over_empty_dim", lambda L: L.ones(0, 3).max(0)),  # was RuntimeError
    ("min_over_empty_dim", lambda L: L.ones(0, 3).min(0)),
    ("max_of_empty", lambda L: L.ones(0).max()),  # RuntimeError in both
    ("argmax_of_empty", lambda L: L.ones(0).argmax()),  # was NumPy's ValueError
    ("argmin_over_empty_dim", lambda L: L.ones(0, 3).argmin(0)),
    ("amax_of_empty", lambda L: L.amax(L.ones(0))),  # was IndexError
    ("amax_over_empty_dim", lambda L: L.amax(L.ones(0, 3), 0)),  # IndexError in both
    ("kthvalue_of_empty", lambda L: L.ones(0).kthvalue(1)),  # was RuntimeError
    ("kthvalue_k_too_large", lambda L: L.ones(2, 3).kthvalue(4)),
    ("topk_k_too_large", lambda L: L.ones(2, 3).topk(4)),
    ("clamp_without_bounds", lambda L: L.ones(2).clamp()),
    ("cumsum_dim_out_of_range", lambda L: L.ones(2, 3).cumsum(3)),
    # -- indexing, gather and scatter ------------------------------------------------------------------
    ("index_out_of_range", lambda L: L.ones(2, 3)[2]),
    ("index_with_a_string", lambda L: L.ones(2, 3)["a"]),  # was IndexError
    ("index_slice_step_zero", lambda L: L.ones(4)[::0]),  # ValueError in both
    ("setitem_slice_step_zero", lambda L: L.ones(4).__setitem__(slice(None, None, 0), 1.0)),
    ("index_with_a_bad_mask", lambda L: L.ones(2, 3)[L.tensor([True, False, True])]),
    ("setitem_value_too_big", lambda L: L.ones(2, 3).__setitem__(0, L.ones(4))),
    ("gather_index_out_of_range", lambda L: L.gather(L.ones(2, 3), 1, _i64(L, [0, 5], [1, 1]))),
    ("gather_dim_out_of_range", lambda L: L.gather(L.ones(2, 3), 2, _i64(L, [0, 1], [1, 1]))),
    ("scatter_float_index", lambda L: L.ones(2, 3).scatter(1, L.ones(2, 2), L.ones(2, 2))),
    ("index_select_2d_index", lambda L: L.index_select(L.ones(2, 3), 1, L.zeros(2, 2, dtype=L.int64))),
    ("index_add__source_mismatch", lambda L: L.ones(2, 3).index_add_(1, _i64(L, 0), L.ones(2, 2))),  # was ValueError
    ("index_add__index_out_of_range", lambda L: L.ones(2, 3).index_add_(1, _i64(L, 5), L.ones(2, 1))),
    ("index_add__2d_index", lambda L: L.ones(2, 3).index_add_(1, _i64(L, [0]), L.ones(2, 1))),
    ("index_add__float_index", lambda L: L.ones(2, 3).index_add_(1, L.ones(1), L.ones(2, 1))),
    ("select_index_out_of_range", lambda L: L.select(L.ones(2, 3), 1, 5)),
    # -- in-place results that do not fit --------------------------------------------------------------
    ("add__result_larger", lambda L: L.ones(3).add_(L.ones(2, 3))),
    ("add__float_into_int", lambda L: L.ones(3, dtype=L.int64).add_(1.5)),
    ("div__int_tensor", lambda L: L.ones(3, dtype=L.int64).div_(2)),  # was NumPy's TypeError
    ("sub__of_bools", lambda L: L.ones(3, dtype=L.bool).sub_(True)),
    ("exp__int_tensor", lambda L: L.ones(3, dtype=L.int64).exp_()),
    ("sqrt__int_tensor", lambda L: L.ones(3, dtype=L.int64).sqrt_()),
    ("copy__shape_mismatch", lambda L: L.ones(3).copy_(L.ones(4))),
    ("write_to_expanded_view", lambda L: L.ones(3).expand(2, 3).add_(1)),
    ("uniform__reversed_bounds", lambda L: L.ones(3).uniform_(2, 1)),  # was NumPy's ValueError
    ("normal__negative_std", lambda L: L.ones(3).normal_(0, -1)),
    ("random__empty_range", lambda L: L.ones(3).random_(0)),  # was ValueError
    ("random__reversed_range", lambda L: L.ones(3).random_(5, 3)),
    # -- conversions to Python -------------------------------------------------------------------------
    ("item_of_many_elements", lambda L: L.ones(2, 3).item()),  # was ValueError
    ("item_of_no_element", lambda L: L.ones(0).item()),
    ("int_of_many_elements", lambda L: int(L.ones(3))),  # ValueError in both
    ("float_of_many_elements", lambda L: float(L.ones(3))),
    ("bool_of_many_elements", lambda L: bool(L.ones(3))),
    ("index_with_a_float_tensor", lambda L: [1, 2, 3][L.tensor(1.0)]),
    ("len_of_0d", lambda L: len(L.ones(()))),
    # -- factories and tensor() ------------------------------------------------------------------------
    ("zeros_negative_size", lambda L: L.zeros(-1, 2)),  # was ValueError
    ("ones_negative_size", lambda L: L.ones(2, -3)),
    ("full_negative_size", lambda L: L.full((-1,), 1.0)),
    ("empty_negative_size", lambda L: L.empty(-2)),
    ("randn_negative_size", lambda L: L.randn(-1)),
    ("zeros_float_size", lambda L: L.zeros(2.5)),  # was ValueError, now TypeError
    ("zeros_bool_size", lambda L: L.zeros(True)),
    ("eye_negative_size", lambda L: L.eye(-1)),
    ("randint_low_not_below_high", lambda L: L.randint(5, 3, (2,))),
    ("randperm_negative", lambda L: L.randperm(-1)),
    ("arange_zero_step", lambda L: L.arange(0, 5, 0)),
    ("arange_infinite_end", lambda L: L.arange(0, float("inf"))),
    ("arange_step_away_from_end", lambda L: L.arange(5, 0, 1)),
    ("linspace_negative_steps", lambda L: L.linspace(0, 1, -1)),
    ("tensor_ragged", lambda L: L.tensor([[1, 2], [3]])),  # ValueError in both
    ("tensor_number_beside_list", lambda L: L.tensor([[1, 2], 3])),  # TypeError in both
    ("tensor_of_none", lambda L: L.tensor([1.0, None])),  # was TypeError, now RuntimeError
    ("tensor_of_an_object", lambda L: L.tensor([object()])),
    ("tensor_of_none_with_a_dtype", lambda L: L.tensor([1.0, None], dtype=L.float64)),  # TypeError in both
    ("tensor_of_an_object_with_a_dtype", lambda L: L.tensor([object()], dtype=L.int64)),
    ("tensor_of_a_dict", lambda L: L.tensor({"a": 1})),
    ("tensor_first_element_a_string", lambda L: L.tensor(["a", "b"])),  # was TypeError, now ValueError
    ("tensor_later_element_a_string", lambda L: L.tensor([1, "a"])),  # TypeError in both
    ("tensor_of_a_string", lambda L: L.tensor("abc")),
    ("tensor_integer_too_large", lambda L: L.tensor([1, 2**70])),  # was TypeError, now ValueError
    ("tensor_int_requires_grad", lambda L: L.tensor([1, 2], requires_grad=True)),
    # -- devices and generators ------------------------------------------------------------------------
    ("unknown_device", lambda L: L.ones(2, device="tpu")),  # was ValueError
    ("to_unknown_device", lambda L: L.ones(2).to("tpu")),
    ("manual_seed_too_large", lambda L: L.manual_seed(2**70)),  # ValueError in both
    # -- autograd --------------------------------------------------------------------------------------
    ("backward_of_a_non_scalar", lambda L: (L.ones(2, requires_grad=True) * 2).backward()),
    ("backward_gradient_shape", lambda L: (L.ones(2, requires_grad=True) * 2).backward(L.ones(3))),
    ("backward_without_grad", lambda L: L.ones(2).sum().backward()),
    ("backward_twice", lambda L: (lambda x, y: (y.backward(), y.backward()))(*_x_and_loss(L))),
    (
        "grad_of_unused_input",
        lambda L: (lambda x, y: L.autograd.grad(y, [x, L.ones(2, requires_grad=True)]))(*_x_and_loss(L)),
    ),
    ("in_place_on_a_leaf", lambda L: L.ones(2, requires_grad=True).add_(1)),
    ("numpy_of_requires_grad", lambda L: L.ones(2, requires_grad=True).numpy()),
    ("grad_of_another_shape", lambda L: setattr(L.ones(2, requires_grad=True), "grad", L.ones(3))),
]


@pytest.mark.parametrize(("name", "call"), CASES, ids=[name for name, _ in CASES])
def test_minigrad_raises_the_class_pytorch_raises(name, call):
    assert_same_class_as_torch(name, call)
