"""``Optimizer``: parameter groups, per-parameter state, and PyTorch's state-dict layout.

An optimizer holds

- ``param_groups``: a list of dicts, each with ``"params"`` (a list of
  tensors) and the hyper-parameters of that group (``"lr"``, ...; the
  constructor's values fill in whatever a group does not set);
- ``state``: a dict from parameter to that parameter's state dict
  (momentum buffers, moment estimates, step counts), created lazily on the
  first step that sees a gradient for it.

``step()`` runs under ``no_grad`` and updates each ``param.array`` in place
with array operations that write into existing memory (``out=`` arguments
and a small scratch buffer reused across parameters), so an update costs no
more than a couple of parameter-sized temporaries however many parameters
there are.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from minigrad import backend
from minigrad.grad_mode import enable_grad, no_grad
from minigrad.nn.module import reset_grad
from minigrad.optim.updates import subtract_scaled_ as subtract_scaled_  # re-exported: it lived here before
from minigrad.tensor import Tensor
from minigrad.views import bump_version


class _RequiredParameter:
    """Marks a hyper-parameter that has no default: every group must set it."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_SET_MESSAGE = (
    "optimizer parameters need to be organized in ordered collections, but the ordering "
    "of tensors in sets will change between runs. Please use a list instead."
)


class Optimizer:
    """Base class of optimizers, with PyTorch's interface.

    Args:
        params: an iterable of Tensors, of ``(name, Tensor)`` pairs (as given
            by ``module.named_parameters()``), or of dicts defining parameter
            groups (each with a ``"params"`` entry and optional hyper-parameters).
        defaults: the hyper-parameters of groups that do not set them.

    Subclasses implement ``_step_group(group, scratch)`` (the update of one
    group) and ``_check_hyperparameters(group)`` (argument validation), or
    override ``step`` entirely.

    Raises:
        TypeError: ``params`` is a single Tensor, a set, or contains non-Tensors.
        ValueError: no parameters, a non-leaf parameter, a parameter listed
            twice (PyTorch only warns when it is twice in one group), a group
            missing a required hyper-parameter, or an invalid hyper-parameter
            value (the message names it).
    """

    def __init__(self, params, defaults: dict):
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got a single {type(params).__name__}; wrap it in a list"
            )
        if isinstance(params, (set, frozenset)):
            raise TypeError(_SET_MESSAGE)
        self.defaults = defaults
        self._check_hyperparameters({k: v for k, v in defaults.items() if v is not required})
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # The hyper-parameters that must be >= 0, in the order they are checked, each with the words its
    # error message uses ("SGD: invalid learning rate lr=-1, expected lr >= 0").
    _non_negative: dict = {}

    def _check_hyperparameters(self, group: dict) -> None:
        """Raise ValueError naming the argument when a hyper-parameter in ``group`` is invalid.

        The base checks the subclass's ``_non_negative`` entries; subclasses add their other rules.
        """
        for name, label in self._non_negative.items():
            check_non_negative(group, name, type(self).__name__, label)

    # -- parameter groups --------------------------------------------------

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (a dict with ``"params"`` and optional hyper-parameters).

        Hyper-parameters the group leaves out take the constructor's values.

        Raises:
            TypeError/ValueError: see the class docstring.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(_SET_MESSAGE)
        param_group["params"], names = _split_names(list(params))
        if names is not None:
            param_group["param_names"] = names
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {type(param).__name__}"
                )
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        self._check_hyperparameters(param_group)
        ids = [id(p) for p in param_group["params"]]
        if len(set(ids)) != len(ids):
            # PyTorch only warns, then updates such a parameter twice per step.
            raise ValueError("optimizer contains a parameter group with duplicate parameters")
        existing = {id(p) for group in self.param_groups for p in group["params"]}
        if not existing.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- stepping ----------------------------------------------------------

    def step(self, closure=None):
        """Update every parameter that has a gradient; returns ``closure()``'s loss or None.

        Args:
            closure: optional callable that re-evaluates the model and returns
                the loss (run with grad enabled, before the update).
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        scratch = _Scratch()
        with no_grad():
            for group in self.param_groups:
                self._step_group(group, scratch)
                _count_updates(group["params"])
        return loss

    def _step_group(self, group: dict, scratch: _Scratch) -> None:
        """Update the parameters of one group (subclasses implement it)."""
        raise NotImplementedError(f"{type(self).__name__} must implement step() or _step_group()")

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized parameters.

        With ``set_to_none=True`` (the default) ``.grad`` becomes None, which
        also makes ``step()`` skip the parameter until it gets a gradient
        again; otherwise the gradients are zeroed (see ``nn.module.reset_grad``).
        """
        for group in self.param_groups:
            for param in group["params"]:
                reset_grad(param, set_to_none)

    # -- state dict ----------------------------------------------------------

    def state_dict(self) -> dict:
        """The optimizer state in PyTorch's layout.

        ``{"state": {index: {name: Tensor or number}}, "param_groups": [{..., "params": [index, ...]}]}``
        where parameters are numbered in the order of the groups. The state
        tensors share memory with the optimizer (as in PyTorch): save or copy
        them before stepping again.
        """
        index_of = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for param in group["params"]:
                index_of.setdefault(id(param), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for param, values in self.state.items():
            key = index_of[id(param)] if isinstance(param, Tensor) else param
            state[key] = dict(values)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state returned by ``state_dict()`` (possibly saved and reloaded).

        Parameters are matched by position: group ``i``'s ``j``-th index maps
        to this optimizer's group ``i``'s ``j``-th parameter. State tensors
        (or arrays) are copied onto each parameter's device; floating ones
        except ``"step"`` are cast to the parameter's dtype. Unlike PyTorch,
        the loaded state never shares memory with ``state_dict``.

        Raises:
            TypeError: ``state_dict``, its ``"state"`` or a group is not a dict,
                or ``"param_groups"`` or a group's ``"params"`` is not a list.
            KeyError: ``"state"``, ``"param_groups"`` or a group's ``"params"`` is missing.
            ValueError: the number of groups or of parameters in a group
                differs from this optimizer's, or a hyper-parameter is invalid.
        """
        saved_groups = _checked_groups(state_dict)
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"loaded state dict has a different number of parameter groups ({len(saved_groups)}) "
                f"than the optimizer ({len(self.param_groups)})"
            )
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group (index {i}) of {len(saved['params'])} "
                    f"parameters that doesn't match the size of optimizer's group ({len(group['params'])})"
                )
        id_map = {}
        for group, saved in zip(self.param_groups, saved_groups):
            id_map.update(zip(saved["params"], group["params"]))
        state = defaultdict(dict)
        for key, values in state_dict["state"].items():
            param = id_map.get(key)
            if param is None:
                state[key] = values
                continue
            if not isinstance(values, dict):
                raise ValueError(f"state of parameter {key} should be a dict, got {type(values).__name__}")
            state[param] = {name: _cast_state(param, name, value) for name, value in values.items()}
        new_groups = []
        for group, saved in zip(self.param_groups, saved_groups):
            new_group = {k: v for k, v in saved.items() if k != "params"}
            for name, default in self.defaults.items():  # state dicts from older versions may lack some
                new_group.setdefault(name, group.get(name, default))
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            self._check_hyperparameters(new_group)
            new_groups.append(new_group)
        self.state = state
        self.param_groups = new_groups

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


def _split_names(params):
    """Split ``[(name, tensor), ...]`` into tensors and names; names is None for plain tensors."""
    named = [isinstance(p, tuple) for p in params]
    if not any(named):
        return params, None
    if not all(named):
        raise ValueError("all optimizer params should be with/without names. Some param names are missing")
    return [p for _, p in params], [name for name, _ in params]


def _checked_groups(state_dict) -> list:
    """The ``param_groups`` of ``state_dict`` after checking the overall layout.

    The classes are PyTorch's for the same mistakes: KeyError for a missing
    entry, TypeError for an entry of the wrong type.
    """
    if not isinstance(state_dict, dict):
        raise TypeError(
            f"optimizer state_dict must be a dict with 'state' and 'param_groups' entries, "
            f"got {type(state_dict).__name__}"
        )
    for key in ("state", "param_groups"):
        if key not in state_dict:
            raise KeyError(
                f"optimizer state_dict must be a dict with 'state' and 'param_groups' entries, "
                f"got keys {sorted(map(str, state_dict))}"
            )
    groups = state_dict["param_groups"]
    if not isinstance(groups, (list, tuple)) or not all(isinstance(g, dict) for g in groups):
        raise TypeError("optimizer state_dict['param_groups'] must be a list of dicts with a 'params' list")
    for i, group in enumerate(groups):
        if "params" not in group:
            raise KeyError(f"optimizer state_dict['param_groups'][{i}] has no 'params' list")
        if not isinstance(group["params"], (list, tuple)):
            raise TypeError(
                f"optimizer state_dict['param_groups'][{i}]['params'] must be a list of indices, "
                f"got {type(group['params']).__name__}"
            )
    if not isinstance(state_dict["state"], dict):
        raise TypeError(
            f"optimizer state_dict['state'] must be a dict, got {type(state_dict['state']).__name__}"
        )
    return list(groups)


def _cast_state(param, name, value):
    """A private copy of one state value, on ``param``'s device (and dtype, for floating state)."""
    if name == "step":
        # Kept as a float32 scalar on the CPU, like PyTorch's non-capturable optimizers.
        value = value.array if isinstance(value, Tensor) else value
        if backend.is_array(value):
            value = backend.to_numpy(value)
        return Tensor(np.array(value, dtype=np.float32))
    if isinstance(value, Tensor):
        value = value.array
    if not backend.is_array(value):
        return value
    moved = backend.to_device(value, param.device)
    dtype = param.dtype if value.dtype.kind == "f" and param.dtype.kind == "f" else value.dtype
    return Tensor(moved.astype(dtype, copy=moved is value))


class _Scratch:
    """Temporary arrays for one ``step()``, carved out of one reusable byte buffer per slot and device.

    Asking for a temporary shaped like some parameter returns a view of a
    buffer as large as the largest parameter seen so far, so a step
    allocates each slot once instead of once per parameter. The buffers die
    with the step.
    """

    def __init__(self):
        self._buffers = {}

    def like(self, array, slot: int = 0):
        """An uninitialized array with ``array``'s shape, dtype and device (valid until the next
        call with the same ``slot``)."""
        device = backend.device_of(array)
        nbytes = array.nbytes
        buffer = self._buffers.get((device, slot))
        if buffer is None or buffer.nbytes < nbytes:
            xp = backend.get_array_module(array)
            with backend.device_context(device):
                buffer = xp.empty(nbytes, dtype=np.uint8)
            self._buffers[(device, slot)] = buffer
        return buffer[:nbytes].view(array.dtype).reshape(array.shape)


def params_with_grad(group: dict):
    """Each parameter of ``group`` that has a gradient, as ``(p, param, grad, xp)``.

    ``param`` and ``grad`` are the raw arrays (the gradient checked by
    ``check_grad``), ``xp`` their array module: the common head of every
    optimizer's per-parameter loop.
    """
    for p in group["params"]:
        if p.grad is None:
            continue
        param = p.array
        yield p, param, check_grad(p), backend.get_array_module(param)


def init_state(state: dict, param, *names: str) -> None:
    """Fill a parameter's empty ``state``: ``"step"`` and a zero buffer for each of ``names``.

    ``"step"`` is a float32 scalar Tensor on the CPU, as in PyTorch; each
    buffer is a zero Tensor with the shape, dtype and device of the array
    ``param``.
    """
    state["step"] = Tensor(np.array(0.0, dtype=np.float32))
    for name in names:
        state[name] = zeros_state(param)


def zeros_state(param) -> Tensor:
    """A zero Tensor with the shape, dtype and device of the array ``param`` (a buffer's start)."""
    xp = backend.get_array_module(param)
    with backend.device_context(backend.device_of(param)):
        return Tensor(xp.zeros_like(param))


def _count_updates(params) -> None:
    """Bump the version of every parameter a step wrote (each one with a gradient), as PyTorch's
    in-place updates do: a graph that saved the old value then raises in backward instead of
    using the new one (e.g. a distributed backward still running against an RPC owner's weights)."""
    for p in params:
        if p._grad is not None:
            bump_version(p)


def check_grad(param: Tensor):
    """The gradient array of ``param``, after checking that its shape matches.

    Raises:
        TypeError: ``param.grad`` was set to something other than a Tensor.
        RuntimeError: the gradient's shape differs from the parameter's.
    """
    if not isinstance(param.grad, Tensor):
        raise TypeError(
            f"optimizer: a parameter's .grad must be a Tensor or None, got {type(param.grad).__name__}"
        )
    grad = param.grad.array
    if grad.shape != param.array.shape:
        raise RuntimeError(
            f"optimizer: gradient of shape {tuple(grad.shape)} does not match its parameter's shape "
            f"{tuple(param.array.shape)}"
        )
    return grad


def check_real(value, name: str, optimizer: str):
    """``value`` as a float, or TypeError naming the argument when it is not a real number."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{optimizer}: {name} must be a real number, got {type(value).__name__}")
    return float(value)


def check_non_negative(group: dict, name: str, optimizer: str, label: str) -> None:
    """Raise ValueError unless ``group[name]`` is a number >= 0 (``label`` describes it).

    A missing entry passes: the constructor's defaults may leave out required ones.
    """
    if name not in group:
        return
    value = check_real(group[name], name, optimizer)
    if not value >= 0.0:
        raise ValueError(f"{optimizer}: invalid {label} {name}={group[name]!r}, expected {name} >= 0")
