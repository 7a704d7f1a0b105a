"""L-BFGS, the limited-memory quasi-Newton method, as ``torch.optim.LBFGS`` computes it.

One ``step(closure)`` runs up to ``max_iter`` iterations of L-BFGS on all
parameters flattened into one vector ``x`` (the closure re-evaluates the loss
and its gradient as often as needed). Each iteration:

1. builds a search direction ``d`` from the gradient ``g`` with the two-loop
   recursion over the last ``history_size`` curvature pairs ``(s, y)`` (steps
   and gradient changes; a pair is kept only when ``y.s > 1e-10``), scaled by
   ``H_diag = y.s / y.y`` of the newest pair; the first iteration ever uses
   ``d = -g``;
2. picks a step length ``t``: ``min(1, 1/|g|_1) * lr`` on the very first
   iteration, ``lr`` afterwards; with ``line_search_fn="strong_wolfe"`` a
   bracketing/zoom line search with cubic interpolation then moves ``t`` until
   the strong Wolfe conditions hold (``c1 = 1e-4``, ``c2 = 0.9``);
3. moves ``x += t * d`` and re-evaluates (without a line search, except on
   the last iteration), then stops early when the gradient is below
   ``tolerance_grad``, the step or the change of the loss is below
   ``tolerance_change``, or ``max_eval`` evaluations were spent.

The history, direction and step survive between ``step`` calls in the state
of the first parameter, under PyTorch's keys (``"d"``, ``"t"``,
``"old_dirs"``, ``"old_stps"``, ``"ro"``, ``"H_diag"``, ``"prev_flat_grad"``,
``"prev_loss"``, ``"n_iter"``, ``"func_evals"``).

The scalars of the algorithm (dot products, ``t``, ``H_diag``) are NumPy
scalars of the parameters' dtype, so they round as PyTorch's 0-d tensors do;
in float64 the parameters follow PyTorch's to the last few bits.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.grad_mode import enable_grad, no_grad
from minigrad.optim.optimizer import Optimizer
from minigrad.tensor import Tensor
from minigrad.views import bump_version


class LBFGS(Optimizer):
    """L-BFGS with an optional strong-Wolfe line search (``torch.optim.LBFGS``).

    Args:
        params: the parameters (a single group: L-BFGS has no per-group options).
        lr: learning rate: the initial step length of each iteration (default 1).
        max_iter: iterations per ``step`` (default 20).
        max_eval: closure evaluations per ``step`` (default ``max_iter * 5 // 4``).
        tolerance_grad: stop when the largest gradient entry is at most this (default 1e-7).
        tolerance_change: stop when the step or the change of the loss is below this (default 1e-9).
        history_size: how many curvature pairs to keep (default 100).
        line_search_fn: None (fixed step ``t``) or ``"strong_wolfe"``.

    The whole flattened parameter vector and ``2 * history_size`` vectors of
    that length are held in memory. Not reproduced: a Tensor ``lr``, sparse gradients.

    Raises:
        ValueError: negative ``lr``, or more than one parameter group at construction.
        AssertionError: at ``step``, more than one parameter group (after ``add_param_group``),
            as PyTorch's ``step`` asserts.
        RuntimeError: at ``step``, a ``line_search_fn`` other than None or ``"strong_wolfe"``.
        TypeError / ValueError: ``history_size`` is not a positive int; a tolerance is not a real number.
    """

    _non_negative = {"lr": "learning rate"}

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None):
        if not isinstance(history_size, (int, np.integer)) or isinstance(history_size, bool):
            raise TypeError(f"LBFGS: history_size must be an int, got {type(history_size).__name__}")
        if history_size < 1:
            raise ValueError(f"LBFGS: history_size must be at least 1, got {history_size}")
        for name, value in (("tolerance_grad", tolerance_grad), ("tolerance_change", tolerance_change)):
            if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
                raise TypeError(f"LBFGS: {name} must be a real number, got {type(value).__name__}")
        if not isinstance(max_iter, (int, float, np.integer, np.floating)) or isinstance(max_iter, bool):
            raise TypeError(f"LBFGS: max_iter must be a number, got {type(max_iter).__name__}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # -- the flattened parameter vector ----------------------------------------------------------------

    def _xp(self):
        return backend.get_array_module(self._params[0].array)

    def _gather_flat_grad(self):
        """All gradients as one vector (zeros for a parameter without one; complex as (re, im) pairs)."""
        xp = self._xp()
        views = []
        for p in self._params:
            array = p.array if p.grad is None else p.grad.array
            if p.grad is None:
                array = xp.zeros_like(array)
            views.append(_real_view(xp.ascontiguousarray(array)).reshape(-1))
        return xp.concatenate(views)

    def _add_grad(self, step_size, update) -> None:
        """``x += step_size * update``, in place, parameter by parameter."""
        offset = 0
        for p in self._params:
            target = _real_view(p.array)
            numel = target.size
            target += step_size * update[offset:offset + numel].reshape(target.shape)
            bump_version(p)
            offset += numel

    def _clone_param(self) -> list:
        return [p.array.copy() for p in self._params]

    def _set_param(self, arrays) -> None:
        for p, array in zip(self._params, arrays):
            p.array[...] = array
            bump_version(p)

    def _directional_evaluate(self, closure, x, t, d):
        """The loss and flat gradient at ``x + t * d``; the parameters are restored to ``x`` afterwards."""
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    # -- the step --------------------------------------------------------------------------------------

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss of the first evaluation of ``closure``.

        Args:
            closure: a callable that clears the gradients, computes the loss, calls
                ``backward()`` and returns the loss (it is run with grad enabled).

        Raises:
            AssertionError: the optimizer has more than one parameter group (PyTorch's class).
            RuntimeError: ``line_search_fn`` is neither None nor ``"strong_wolfe"``.
            TypeError: ``closure`` is not callable or does not return a number or a Tensor.
        """
        if len(self.param_groups) != 1:
            raise AssertionError(
                f"LBFGS doesn't support per-parameter options (parameter groups): step expects exactly one "
                f"param_group, but got {len(self.param_groups)}"
            )
        if not callable(closure):
            raise TypeError(f"LBFGS.step: closure must be a callable returning the loss, got {type(closure).__name__}")
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr = group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        xp = self._xp()
        scalar = np.dtype(_real_dtype(self._params[0].array.dtype)).type

        def dot(a, b):
            return scalar(xp.dot(a, b).item())

        def abs_max(a):
            return scalar(xp.abs(a).max().item())

        # The whole state lives with the first parameter (so load_state_dict finds it), as in PyTorch.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        if not isinstance(orig_loss, (Tensor, int, float, np.integer, np.floating)) or isinstance(orig_loss, bool):
            raise TypeError(f"LBFGS.step: the closure must return the loss, got {type(orig_loss).__name__}")
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if abs_max(flat_grad) <= tolerance_grad:
            return orig_loss

        d = _array(state.get("d"))
        t = state.get("t")
        old_dirs = [_array(v) for v in state.get("old_dirs") or []]
        old_stps = [_array(v) for v in state.get("old_stps") or []]
        ro = list(state.get("ro") or [])
        h_diag = state.get("H_diag")
        prev_flat_grad = _array(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # 1. the search direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = dot(y, s)
                if ys > 1e-10:  # keep the pair only with positive curvature
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / dot(y, y)
                d = _two_loop(flat_grad, old_dirs, old_stps, ro, h_diag, dot)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            # 2. the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / scalar(xp.abs(flat_grad).sum().item())) * lr
            else:
                t = lr
            gtd = dot(flat_grad, d)
            if gtd > -tolerance_change:  # not a descent direction any more
                break

            # 3. the move
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, dot, abs_max,
                    tolerance_change=1e-9, max_ls=max_eval - current_evals,
                )
                self._add_grad(t, d)
                opt_cond = abs_max(flat_grad) <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:  # the last iteration's loss is evaluated by the next step
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = abs_max(flat_grad) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # 4. stopping rules
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if abs_max(d * t) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = Tensor(d)
        state["t"] = t
        state["old_dirs"] = [Tensor(v) for v in old_dirs]
        state["old_stps"] = [Tensor(v) for v in old_stps]
        state["ro"] = ro
        state["H_diag"] = h_diag
        state["prev_flat_grad"] = Tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss


def _two_loop(flat_grad, old_dirs, old_stps, ro, h_diag, dot):
    """The L-BFGS direction ``-H g`` by the two-loop recursion over the stored pairs."""
    q = -flat_grad
    alphas = [None] * len(old_dirs)
    for i in range(len(old_dirs) - 1, -1, -1):
        alphas[i] = dot(old_stps[i], q) * ro[i]
        q += -alphas[i] * old_dirs[i]
    r = q * h_diag
    for i in range(len(old_dirs)):
        beta = dot(old_dirs[i], r) * ro[i]
        r += (alphas[i] - beta) * old_stps[i]
    return r


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through ``(x1, f1, g1)`` and ``(x2, f2, g2)``, clipped to ``bounds``.

    ``bounds`` defaults to the interval between ``x1`` and ``x2``; without a real minimizer the
    bounds' midpoint is returned.
    """
    if bounds is not None:
        low, high = bounds
    else:
        low, high = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = np.sqrt(d2_square)
    if x1 <= x2:
        min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(min_pos, low), high)


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, dot, abs_max, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step length ``t`` along ``d`` from ``x`` meeting the strong Wolfe conditions.

    Bracketing phase: grow ``t`` (cubic extrapolation within [t + 0.01 (t - t_prev), 10 t]) until
    the loss stops decreasing sufficiently or the slope turns; zoom phase: shrink the bracket by
    cubic interpolation (with a safeguard against steps too close to its ends) until the slope is
    small enough. At most ``max_ls`` evaluations of ``obj_func(x, t, d) -> (loss, flat_grad)``.

    Returns:
        ``(loss, flat_grad, t, evaluations)`` at the step found.
    """
    d_norm = abs_max(d)
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket_gtd = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):  # sufficient decrease fails
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:  # the curvature condition holds too: done
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:  # the slope turned: a minimum lies between t_prev and t
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        previous = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = dot(g_new, d)
        ls_iter += 1

    if ls_iter == max_ls:  # out of evaluations while bracketing
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insufficient_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # the bracket is too small
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # Safeguard: a step within 10% of the bracket's ends makes little progress; after two in a
        # row (or one outside the bracket) move it 10% inside.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False

        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = dot(g_new, d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:  # t becomes the high end
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:  # the old low end becomes the high end
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], evals


def _real_dtype(dtype):
    """The real dtype of ``dtype`` (float64 for complex128, ...)."""
    dtype = np.dtype(dtype)
    return np.empty(0, dtype=dtype).real.dtype if dtype.kind == "c" else dtype


def _real_view(array):
    """A complex array as its (re, im) pairs of reals (a view); a real array unchanged."""
    if array.dtype.kind == "c":
        return array.view(_real_dtype(array.dtype))
    return array


def _array(value):
    """The array of a state Tensor (None stays None)."""
    return value.array if isinstance(value, Tensor) else value
