"""Source of 01_autograd_from_scratch.ipynb (build it with examples/notebooks/build.py)."""

# %% [markdown]
# # Autograd from scratch: minigrad's engine, step by step
#
# `loss.backward()` looks like magic. In **minigrad** it is a few hundred lines of plain
# Python on top of NumPy, and this notebook opens it up:
#
# 1. tensors and leaves,
# 2. the graph that a forward pass records (`grad_fn`, `next_edges`),
# 3. a backward pass by hand, first with the chain rule, then by running the graph's nodes
#    ourselves, compared with `.backward()`,
# 4. dependency counting: why the engine counts before it runs,
# 5. hooks, the way DDP listens to the backward pass (notebook 02),
# 6. higher-order gradients,
# 7. `gradcheck`: finite differences catch a wrong backward,
# 8. pictures of a model's graph.
#
# Every cell checks what it shows with `assert`, so the notebook is also a test: CI runs it top
# to bottom. Pictures are drawn with Graphviz's `dot` program when it is installed; without it
# the notebook prints the DOT text (and says how to install Graphviz).

# %%
import numpy as np
from notebook_helpers import show_dot

import minigrad as mg
from minigrad import engine, nn, viz
from minigrad.autograd import GradcheckError, gradcheck
from minigrad.function import AccumulateGrad
from minigrad.nn import functional as F

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. Tensors and leaves
#
# A `Tensor` wraps a NumPy array (a CuPy array on a GPU). Tensors you create yourself are
# **leaves**. Those created with `requires_grad=True` will receive a gradient in `.grad`; a
# constant such as `c` will not.

# %%
x = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64, requires_grad=True)
w = mg.tensor([0.5, -0.25, 0.2], dtype=mg.float64, requires_grad=True)
c = mg.tensor([0.1, 0.2, 0.3], dtype=mg.float64)

print(x)
print("x: leaf", x.is_leaf, "| grad_fn", x.grad_fn, "| requires_grad", x.requires_grad, "| grad", x.grad)
print("c: requires_grad", c.requires_grad)
assert x.is_leaf and x.grad_fn is None and x.grad is None
assert not c.requires_grad

# %% [markdown]
# ## 2. The graph a forward pass records
#
# Every op on a tensor that requires grad records a **graph node** and hangs it on its output
# as `grad_fn`. A node's `next_edges` has one entry per input: `(node, output_nr)` of the node
# that receives that input's gradient, or `None` when the input needs none (the constant `c`).
# A leaf's gradient goes to its `AccumulateGrad` node, which adds it to `.grad`.
#
# So the graph points **backwards**, in the direction gradients flow.

# %%
y = x * w
z = y + c
loss = z.tanh().sum()


def print_graph(node, depth=0):
    """Print the graph below ``node`` by following ``next_edges`` (fine for small graphs)."""
    label = node.name()
    if isinstance(node, AccumulateGrad):
        label += f"  -> .grad of the leaf {node.variable.tolist()}"
    print("    " * depth + label)
    for edge in node.next_edges:
        if edge is None:
            print("    " * (depth + 1) + "None  (an input that needs no gradient)")
        else:
            print_graph(edge[0], depth + 1)


print("loss =", loss)
print_graph(loss.grad_fn)

assert loss.grad_fn.name() == "SumBackward"
assert z.grad_fn.name() == "AddBackward" and z.grad_fn.next_edges[1] is None  # c needs no gradient
assert z.grad_fn.next_edges[0] == (y.grad_fn, 0)
leaves = [edge[0].variable for edge in y.grad_fn.next_edges]
assert leaves[0] is x and leaves[1] is w

# %% [markdown]
# The same graph as a picture (`minigrad.viz.to_dot`): the green ellipse is the output, grey
# boxes are op nodes, blue boxes are the leaves' `AccumulateGrad` nodes, and arrows follow the
# gradient flow.

# %%
dot = viz.to_dot(loss, params={"x": x, "w": w})
shown = show_dot(dot)
assert dot.count("AccumulateGrad") == 2 and '\\nx\\n' in dot and '\\nw\\n' in dot
assert shown in ("svg", "text")

# %% [markdown]
# ## 3. A backward pass by hand
#
# **With the chain rule.** `loss = sum(tanh(x * w + c))`, so with `t = tanh(x * w + c)`:
# `dloss/dx = (1 - t**2) * w` and `dloss/dw = (1 - t**2) * x`. In NumPy:

# %%
xs, ws = x.detach().numpy(), w.detach().numpy()  # like PyTorch: .numpy() of a tensor that requires grad raises
t = np.tanh(xs * ws + c.numpy())
by_hand_x = (1 - t**2) * ws
by_hand_w = (1 - t**2) * xs

loss.backward(retain_graph=True)  # keep the graph: we run it once more below
print("chain rule  dloss/dx:", by_hand_x)
print(".backward() x.grad:  ", x.grad.numpy())
np.testing.assert_allclose(x.grad.numpy(), by_hand_x, rtol=1e-12)
np.testing.assert_allclose(w.grad.numpy(), by_hand_w, rtol=1e-12)

# %% [markdown]
# **By running the graph ourselves.** Each node has `run_backward(grads, create_graph)`:
# gradients of its outputs in, gradients of its inputs out (one per entry of `next_edges`).
# An engine only has to call the nodes in a valid order and route the results along the
# edges. Here is a complete one, in the two steps that `minigrad.engine` takes:
#
# 1. **count dependencies**: for every node, how many edges point at it (how many gradients it
#    will receive);
# 2. **run a ready queue**: a node is ready once all its gradients have arrived (its count
#    dropped to zero); gradients that arrive at one node from several paths are summed.

# %%
def my_backward(root):
    """Gradients of the scalar ``root`` for its leaves: ``{leaf: gradient}``, without ``.backward()``."""
    # Step 1: count the edges into each node reachable from the root.
    dependencies, seen, stack = {}, {root.grad_fn}, [root.grad_fn]
    while stack:
        for edge in stack.pop().next_edges:
            if edge is None:
                continue
            target = edge[0]
            dependencies[target] = dependencies.get(target, 0) + 1
            if target not in seen:
                seen.add(target)
                stack.append(target)
    # Step 2: run nodes once all their gradients have arrived.
    inbox = {root.grad_fn: [mg.ones_like(root)]}
    ready, leaf_grads = [root.grad_fn], {}
    with mg.no_grad():
        while ready:
            node = ready.pop()
            grads = inbox.pop(node)
            if isinstance(node, AccumulateGrad):
                leaf_grads[node.variable] = grads[0]
                continue
            for edge, grad in zip(node.next_edges, node.run_backward(tuple(grads), False)):
                if edge is None:
                    continue
                target, output_nr = edge
                slots = inbox.setdefault(target, [None] * target.num_outputs)
                slots[output_nr] = grad if slots[output_nr] is None else slots[output_nr] + grad
                dependencies[target] -= 1
                if dependencies[target] == 0:
                    ready.append(target)
    return leaf_grads


mine = my_backward(loss)
print("my_backward dloss/dx:", mine[x].numpy())
print("my_backward dloss/dw:", mine[w].numpy())
np.testing.assert_allclose(mine[x].numpy(), x.grad.numpy(), rtol=1e-12)
np.testing.assert_allclose(mine[w].numpy(), w.grad.numpy(), rtol=1e-12)

# %% [markdown]
# The real engine (`minigrad/engine.py`) does exactly this, plus: a priority queue instead of a
# stack (leaves first, then the most recently recorded op), hooks, freeing what each node saved
# once it has run (unless `retain_graph=True`), and `create_graph=True` for higher-order
# gradients. Calling `.backward()` again **accumulates**: `.grad` is summed, not replaced, which
# is why training loops call `optimizer.zero_grad()`.

# %%
before = x.grad.numpy().copy()
loss.backward()  # the second run through the retained graph; this one frees it
np.testing.assert_allclose(x.grad.numpy(), 2 * before, rtol=1e-12)
try:
    loss.backward()
except RuntimeError as error:
    print("a third backward:", str(error)[:110], "...")
else:
    raise AssertionError("a freed graph must not run again")

# %% [markdown]
# ## 4. Dependency counting
#
# Why count first? Take a value used in two places. The node that produced it must wait for
# **both** gradients before it runs; if it ran after the first one, it would pass on a partial
# gradient. Below, `a` feeds `tanh` once and `a * a` twice, so its `MulBackward` receives three
# gradients. The counts are what `engine.GraphTask` computes, and the picture shows them as
# `MulBackward (3)`: the number of arrows into each node.

# %%
x.grad = None
a = x * 2
d = (a.tanh() + a * a).sum()

task = engine.GraphTask([d.grad_fn])
print("a's node waits for", task.dependencies[a.grad_fn], "gradients")
assert task.dependencies[a.grad_fn] == 3
dot = viz.to_dot(d, params={"x": x}, show_dependencies=True)
show_dot(dot)
assert "MulBackward (3)" in dot

d.backward()
by_hand = 2 * ((1 - np.tanh(2 * x.detach().numpy()) ** 2) + 2 * (2 * x.detach().numpy()))
np.testing.assert_allclose(x.grad.numpy(), by_hand, rtol=1e-12)

# %% [markdown]
# The distributed autograd design note (notebook 03) starts from the same picture: with
# `d = a + b` and `e = b * c`, a backward pass from `d` alone never runs `e`'s node, whose count
# is **0**. Counting from the roots tells the engine which nodes take part at all; this is the
# case that FAST mode gets wrong once `e` was computed on another worker.

# %%
a, b, c = (mg.rand(3, 3, dtype=mg.float64, requires_grad=True) for _ in range(3))
d, e = a + b, b * c
dot = viz.to_dot(d, e, params={"a": a, "b": b, "c": c}, backward_from=[d], show_dependencies=True)
show_dot(dot)
assert "AddBackward (1)" in dot and "MulBackward (0)" in dot

# %% [markdown]
# ## 5. Hooks
#
# Three kinds of hooks let code watch or change a backward pass:
#
# * `tensor.register_hook(fn)`: `fn(grad)` sees the gradient of that tensor and may return a
#   replacement (here: clip a leaf's gradient; record an intermediate one);
# * `leaf.register_post_accumulate_grad_hook(fn)`: `fn(leaf)` runs once `leaf.grad` has been
#   accumulated. **This is the hook DDP's Reducer uses**: "this parameter's gradient is ready,
#   copy it into its bucket";
# * `engine.queue_callback(fn)` (called from inside a hook): `fn()` runs when the whole backward
#   pass is over. DDP uses it to wait for the last allreduce.
#
# Every handle has `.remove()`.

# %%
x = mg.tensor([1.0, -2.0, 3.0], dtype=mg.float64, requires_grad=True)
w = mg.tensor([0.5, 0.25, -1.0], dtype=mg.float64, requires_grad=True)
events = []

clip = x.register_hook(lambda grad: grad.clamp(-0.5, 0.5))
y = x * w
y.register_hook(lambda grad: events.append(("gradient of y", grad.tolist())))


def on_ready(leaf):
    name = "x" if leaf is x else "w"
    events.append((f"{name}.grad ready", leaf.grad.tolist()))
    if len(events) == 2:
        engine.queue_callback(lambda: events.append(("end of backward", None)))


for leaf in (x, w):
    leaf.register_post_accumulate_grad_hook(on_ready)

loss = (y * y).sum()
dot = viz.to_dot(loss, params={"x": x, "w": w})
loss.backward()
for event in events:
    print(event)

unclipped = 2 * x.detach().numpy() * w.detach().numpy() ** 2
np.testing.assert_allclose(x.grad.numpy(), np.clip(unclipped, -0.5, 0.5))
assert events[0][0] == "gradient of y" and events[-1] == ("end of backward", None)
assert {name for name, _ in events[1:3]} == {"x.grad ready", "w.grad ready"}
show_dot(dot)  # nodes with hooks get a red border
assert "hooks: 1 tensor hook, 1 post-accumulate hook" in dot

clip.remove()
x.grad = None
(x * w).sum().backward()
np.testing.assert_allclose(x.grad.numpy(), w.detach().numpy())  # no clipping once the hook is removed

# %% [markdown]
# ## 6. Higher-order gradients
#
# Each node's backward is written with Tensor ops. With `create_graph=True` the engine records
# the backward pass itself, so a gradient is a tensor with a graph of its own and can be
# differentiated again: here the first, second and third derivatives of `x ** 3`.

# %%
x = mg.tensor([1.0, 2.0, -3.0], dtype=mg.float64, requires_grad=True)
(first,) = mg.autograd.grad((x**3).sum(), x, create_graph=True)
(second,) = mg.autograd.grad(first.sum(), x, create_graph=True)
(third,) = mg.autograd.grad(second.sum(), x)
print("3x^2:", first.detach().numpy(), " 6x:", second.detach().numpy(), " 6:", third.numpy())
np.testing.assert_allclose(first.detach().numpy(), 3 * x.detach().numpy() ** 2)
np.testing.assert_allclose(second.detach().numpy(), 6 * x.detach().numpy())
np.testing.assert_allclose(third.numpy(), [6.0, 6.0, 6.0])
assert first.grad_fn is not None  # the gradient has a graph: the recorded backward pass

# %% [markdown]
# A Hessian-vector product `H v` without forming `H`: differentiate `grad(f) . v`. For
# `f(x) = sum(tanh(x))` the Hessian is diagonal, `-2 tanh(x) (1 - tanh(x)^2)`.

# %%
v = mg.tensor([1.0, 0.5, 2.0], dtype=mg.float64)
(g,) = mg.autograd.grad(x.tanh().sum(), x, create_graph=True)
(hv,) = mg.autograd.grad((g * v).sum(), x)
tx = np.tanh(x.detach().numpy())
np.testing.assert_allclose(hv.numpy(), -2 * tx * (1 - tx**2) * v.numpy(), rtol=1e-12)
print("H v =", hv.numpy())

# %% [markdown]
# ## 7. `gradcheck`: is a backward right?
#
# `gradcheck(fn, inputs)` compares the Jacobian that autograd computes with central finite
# differences `(f(x + eps) - f(x - eps)) / 2 eps`, entry by entry, in float64. Below, a custom
# `autograd.Function` with a correct backward passes, and one with a classic mistake fails with
# a message naming the input and the worst entry.

# %%
class Cube(mg.autograd.Function):
    """x ** 3 with a hand-written backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


class WrongCube(Cube):
    """The same forward; the backward forgot one factor of x."""

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x


x = mg.rand(2, 3, dtype=mg.float64, requires_grad=True)
assert gradcheck(Cube.apply, (x,))
assert gradcheck(lambda t: (t @ t.T).tanh().sum(dim=0), (x,))  # built-in ops pass too
try:
    gradcheck(WrongCube.apply, (x,))
except GradcheckError as error:
    print("GradcheckError:", error)
    assert "Jacobian mismatch" in str(error)
else:
    raise AssertionError("gradcheck must reject WrongCube")

# %% [markdown]
# `gradcheck` of a function that itself calls `autograd.grad(..., create_graph=True)` checks
# second derivatives (PyTorch calls this `gradgradcheck`):

# %%
def cube_gradient(t):
    (g,) = mg.autograd.grad(Cube.apply(t).sum(), t, create_graph=True)
    return g


assert gradcheck(cube_gradient, (x,))

# %% [markdown]
# ## 8. Pictures of a model's graph
#
# `viz.to_dot(loss, params=dict(model.named_parameters()), show_saved=True)` names the
# parameters and also draws what each op saved for its backward (orange boxes): the memory a
# forward pass keeps alive until backward.

# %%
mg.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2)).double()
inputs = mg.randn(5, 4, dtype=mg.float64)
targets = mg.tensor([0, 1, 1, 0, 1])
loss = F.cross_entropy(model(inputs), targets)
dot = viz.to_dot(loss, params=dict(model.named_parameters()), show_saved=True)
show_dot(dot)

for name, _ in model.named_parameters():
    assert f"\\n{name}\\n" in dot, name
assert dot.count("AccumulateGrad") == 4 and "saved" in dot

# %% [markdown]
# Next: notebook 02 puts these hooks to work. `DistributedDataParallel` registers one
# post-accumulate-grad hook per parameter and averages gradients across processes while the
# backward pass is still running.
