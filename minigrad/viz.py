"""Pictures of the autograd graph as Graphviz DOT text.

``to_dot(loss, params=dict(model.named_parameters()))`` draws the graph a
backward pass from ``loss`` would run::

    (loss) ──► SumBackward ──► MulBackward ──► AccumulateGrad  w  (3,) float64
                                    │
                                    └────────► AccumulateGrad  x  (3,) float64

What is drawn, and how:

* **Output tensors** (the arguments) are green ellipses; an edge goes from
  each to the node that receives its gradient.
* **Op nodes** are grey boxes labelled with ``node.name()`` (``MulBackward``).
* **Leaves** are blue ``AccumulateGrad`` boxes labelled with the leaf's name
  (from ``params``, else ``tensor.name``), shape and dtype.
* **Edges follow the gradient flow**: from a node to each node in its
  ``next_edges`` (one edge per input, so a leaf used twice gets two edges).
  An edge into a node with several outputs is labelled with the output index.
* **Hooks**: a node with tensor hooks (an op node's ``_pre_hooks``, a leaf's
  ``register_hook`` or ``register_post_accumulate_grad_hook`` hooks) gets a
  red border and a line saying how many.
* **Dependency counts** (``show_dependencies=True``) are drawn as
  ``MulBackward (1)``, as in the distributed autograd design note: how many
  gradients the node waits for in a backward pass from ``backward_from``.
  That is the engine's count (``engine._count_dependencies``: one per edge
  from a node the pass reaches) plus one for the gradient a root receives
  from its output tensor (the engine hands that one over directly). Nodes
  the pass does not reach show ``(0)``. In the picture: a node's count is
  the number of arrows into it from the output tensors and nodes that take
  part in the pass.
* **Saved values** (``show_saved=True``): what each op kept for its
  backward, as orange boxes hanging off the op with dotted lines (saved
  tensors and arrays), and its other constants as extra label lines.

Graphs spread over workers (distributed autograd) are drawn in two steps,
because graph nodes cannot leave their process:

1. each worker describes its share, ``describe(WorkerGraph(...))``, into a
   ``GraphPart``: plain, picklable data that can be gathered to one worker;
2. ``dot_from_parts(parts, cross_edges)`` draws one cluster per part and a
   dashed edge per ``CrossEdge`` (a recv node sending gradients to the send
   node of the same ``autograd_message_id``). Nodes meant as cross-edge
   ends are given names through ``WorkerGraph.extra_nodes``.

In one process, ``WorkerGraph``s can be passed to ``dot_from_parts``
directly and cross edges may name the node objects. ``render`` turns DOT
text into SVG, PNG or PDF with Graphviz's ``dot`` program.

The graph is walked iteratively, so arbitrarily deep graphs are fine.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from minigrad import backend, engine
from minigrad.function import AccumulateGrad, Node
from minigrad.tensor import Tensor

RENDER_FORMATS = ("svg", "png", "pdf")

_OP_STYLE = 'shape=box, style=filled, fillcolor="lightgrey"'
_LEAF_STYLE = 'shape=box, style=filled, fillcolor="lightblue"'
_OUTPUT_STYLE = 'shape=ellipse, style=filled, fillcolor="darkolivegreen1"'
_SAVED_STYLE = 'shape=box, style=filled, fillcolor="orange", fontsize=9'
_SAVED_EDGE = "style=dotted, arrowhead=none"
_HOOK_STYLE = 'color="red", penwidth=2'
_CROSS_STYLE = 'style=dashed, color="blue", fontcolor="blue", constraint=false'

# Attributes every op node carries that are bookkeeping, not saved values.
_NOT_SAVED = {"xp", "needs_input_grad", "num_outputs", "output_meta", "input_shapes", "function"}
_SAVED_TENSOR_ATTRS = {"_saved_inputs": "saved input", "_to_save": "saved tensor"}
_MAX_VALUE_CHARS = 40


# -- the public data structures ---------------------------------------------------------------


@dataclass(frozen=True)
class WorkerGraph:
    """The part of a distributed autograd graph that lives on one worker (live node objects).

    Attributes:
        name: the worker's name (the cluster's title, e.g. ``"worker0"``).
        roots: Tensors the backward pass starts from on this worker (the
            loss); each is drawn as an output node and counts as one
            gradient for the node it feeds.
        extra_nodes: graph nodes the pass also starts from although no root
            reaches them: the send nodes of a distributed autograd context
            (FAST mode starts from the roots and every send node). A mapping
            ``name -> node`` also names the nodes, so that ``CrossEdge``s
            built in another process can refer to them (``"send 3"``,
            ``"recv 3"``); names must be unique over all parts of a picture.
            Nodes reachable from ``roots`` may be listed too (to name them).
    """

    name: str
    roots: Sequence[Tensor] = ()
    extra_nodes: Sequence[Node] | Mapping[str, Node] = ()


@dataclass(frozen=True)
class CrossEdge:
    """A gradient travelling from a node on one worker to a node on another.

    Drawn dashed from ``src_node`` to ``dst_node`` with ``label``. Like
    every other edge in these pictures it follows the gradient flow: in the
    backward pass a recv node sends its input gradients back to the send
    node of the same ``autograd_message_id``, so the recv node is
    ``src_node``, the send node ``dst_node``, and the id goes in the label:
    ``CrossEdge("recv 3", "send 3", "autograd_message_id=3")``.

    Attributes:
        src_node, dst_node: a graph node (when the parts are ``WorkerGraph``s
            of this process) or the name given to it in a ``WorkerGraph``'s
            ``extra_nodes`` mapping.
        label: text drawn on the edge.
    """

    src_node: Node | str
    dst_node: Node | str
    label: str = ""


@dataclass(frozen=True)
class PartNode:
    """One box or ellipse of a ``GraphPart``.

    Attributes:
        key: the node's id within its part.
        title: first label line (``MulBackward``).
        count: dependency count, or None when not computed (not drawn).
        lines: further label lines (leaf name, shape, hooks, saved constants).
        style: DOT attributes (shape, colours).
    """

    key: str
    title: str
    count: int | None
    lines: tuple = ()
    style: str = _OP_STYLE


@dataclass
class GraphPart:
    """A described share of a picture: plain data, picklable, made by ``describe``.

    Attributes:
        name: cluster title (None: drawn without a cluster).
        nodes: the ``PartNode``s, in drawing order.
        edges: ``(source key, target key, DOT attributes)``.
        names: node names from ``WorkerGraph.extra_nodes`` -> node key.
    """

    name: str | None
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    names: dict = field(default_factory=dict)


# -- the public functions ---------------------------------------------------------------------


def to_dot(
    *tensors,
    params=None,
    show_saved: bool = False,
    show_dependencies: bool = False,
    backward_from=None,
) -> str:
    """DOT text of the autograd graph reachable from ``tensors`` (see the module docstring).

    Args:
        tensors: the outputs to draw the graph of (each must require grad).
        params: optional mapping name -> Tensor used to name leaves,
            typically ``dict(model.named_parameters())``; leaves not in it
            are named by their ``tensor.name`` when set.
        show_saved: also draw what each op saved for its backward.
        show_dependencies: append each node's dependency count, ``name (n)``.
        backward_from: the outputs a backward pass would start from, for the
            dependency counts (default: all of ``tensors``); must be among ``tensors``.

    Returns:
        The graph in the DOT language (``render`` draws it).

    Raises:
        TypeError: an argument is not a Tensor, or ``params`` is not a mapping of Tensors.
        ValueError: no tensors, a tensor does not require grad, or a
            ``backward_from`` tensor is not among ``tensors``.
    """
    _check_roots(tensors, "to_dot")
    seeded = tensors if backward_from is None else list(backward_from)
    if backward_from is not None:
        _check_roots(seeded, "to_dot(backward_from=...)")
        drawn = {id(t) for t in tensors}
        if any(id(t) not in drawn for t in seeded):
            raise ValueError("to_dot: every tensor in backward_from must also be passed as an output to draw")
    describer = _Describer(_param_names(params), show_saved, show_dependencies)
    part = describer.describe(None, list(tensors), {id(t) for t in seeded}, ())
    return _emit([part], [], clustered=False)


def describe(worker: WorkerGraph, *, params=None, show_saved: bool = False,
             show_dependencies: bool = False) -> GraphPart:
    """Describe one worker's share of a distributed graph as picklable plain data.

    Call it on the worker that holds the nodes, gather the parts to one
    process, and draw them with ``dot_from_parts``.

    Args:
        worker: the worker's roots and extra (send) nodes.
        params, show_saved, show_dependencies: as for ``to_dot``; the counts
            are FAST mode's (see ``dot_from_parts``).

    Raises:
        TypeError: ``worker`` is not a ``WorkerGraph``, a root is not a
            Tensor, or an extra node is not a graph node.
        ValueError: a root does not require grad.
    """
    describer = _Describer(_param_names(params), show_saved, show_dependencies)
    return describer.describe_worker(worker)


def dot_from_parts(
    parts,
    cross_edges=(),
    *,
    params=None,
    show_saved: bool = False,
    show_dependencies: bool = False,
) -> str:
    """DOT text of a graph spread over workers: one cluster per part, dashed edges between them.

    Dependency counts follow the FAST mode algorithm of the distributed
    autograd design note: each worker counts from its roots and its extra
    (send) nodes, and each cross edge into a node is one more gradient it
    waits for (the gradient arriving over RPC).

    Args:
        parts: ``WorkerGraph``s (described here) or ``GraphPart``s (from ``describe``).
        cross_edges: ``CrossEdge``s between nodes of different parts.
        params, show_saved, show_dependencies: as for ``to_dot``; they apply
            to the ``WorkerGraph``s described here.

    Raises:
        TypeError: a part or cross edge has the wrong type (see also ``describe``).
        ValueError: a node is reachable in two parts, a node name is used
            twice, or a cross edge end is in no part.
    """
    describer = _Describer(_param_names(params), show_saved, show_dependencies)
    described = []
    for part in parts:
        if isinstance(part, WorkerGraph):
            described.append(describer.describe_worker(part))
        elif isinstance(part, GraphPart):
            described.append(part)
        else:
            raise TypeError(
                f"dot_from_parts: parts must be WorkerGraph or GraphPart objects, got {type(part).__name__}"
            )
    ends = _Ends(described, describer.keys)
    resolved = []
    for edge in cross_edges:
        if not isinstance(edge, CrossEdge):
            raise TypeError(
                f"dot_from_parts: cross_edges must be CrossEdge objects, got {type(edge).__name__}"
            )
        src, dst = ends.find(edge.src_node, "src_node"), ends.find(edge.dst_node, "dst_node")
        resolved.append((src, dst, edge.label))
    return _emit(described, resolved, clustered=True)


def render(dot_text: str, path, format: str = "svg") -> Path:  # noqa: A002  (graphviz's name)
    """Draw ``dot_text`` into the file ``path`` with Graphviz's ``dot`` program.

    Args:
        dot_text: a graph from ``to_dot`` or ``dot_from_parts``.
        path: the image file to write.
        format: ``"svg"``, ``"png"`` or ``"pdf"``.

    Returns:
        ``path`` as a ``Path``.

    Raises:
        ValueError: unknown ``format``.
        RuntimeError: the ``dot`` program is not installed (says how to
            install it), or it rejected the input (its message included).
    """
    if format not in RENDER_FORMATS:
        raise ValueError(f"render: format must be one of {RENDER_FORMATS}, got {format!r}")
    executable = shutil.which("dot")
    if executable is None:
        raise RuntimeError(
            "render needs Graphviz's `dot` program, which is not on PATH. Install Graphviz itself: "
            "`apt-get install graphviz` (Debian/Ubuntu), `conda install -c conda-forge graphviz`, or "
            "`brew install graphviz`. (`pip install graphviz` installs only Python bindings, not the "
            "program.) The DOT text needs no Graphviz: save it and render it anywhere."
        )
    path = Path(path)
    proc = subprocess.run(
        [executable, f"-T{format}", "-o", str(path)],
        input=dot_text,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"Graphviz `dot` failed with exit code {proc.returncode}: {proc.stderr.strip()}")
    return path


# -- describing live graphs -------------------------------------------------------------------


class _Describer:
    """Turns live graph nodes into ``GraphPart``s; remembers each node's (part, key)."""

    def __init__(self, param_names: dict, show_saved: bool, show_dependencies: bool):
        self.param_names = param_names
        self.show_saved = show_saved
        self.show_dependencies = show_dependencies
        self.keys = {}  # graph node -> (part, key), over every part described by this instance

    def describe_worker(self, worker) -> GraphPart:
        if not isinstance(worker, WorkerGraph):
            raise TypeError(f"expected a WorkerGraph, got {type(worker).__name__}")
        where = f"worker {worker.name!r}"
        if worker.roots:
            _check_roots(worker.roots, where + " roots")
        named = dict(worker.extra_nodes) if isinstance(worker.extra_nodes, Mapping) else {}
        extra = list(named.values()) if named else list(worker.extra_nodes)
        for node in extra:
            if not isinstance(node, Node):
                raise TypeError(f"extra_nodes of {where} must be graph nodes, got {type(node).__name__}")
        roots = list(worker.roots)
        part = self.describe(worker.name, roots, {id(t) for t in roots}, extra)
        part.names = {name: self.keys[node][1] for name, node in named.items()}
        return part

    def describe(self, title, tensors, seeded_ids, extra_nodes) -> GraphPart:
        """Describe ``tensors`` and everything reachable from them and from ``extra_nodes``."""
        part = GraphPart(title)
        starts, seeds = [], {}
        for i, tensor in enumerate(tensors):
            node, output_nr = tensor._gradient_edge()
            key = f"t{i}"
            part.nodes.append(PartNode(key, self.tensor_name(tensor), None, (_shape_dtype(tensor.array),),
                                       _OUTPUT_STYLE))
            part.edges.append((key, node, _output_attrs(node, output_nr)))
            starts.append(node)
            if id(tensor) in seeded_ids:
                seeds[node] = seeds.get(node, 0) + 1
        starts.extend(extra_nodes)
        nodes = _reachable(starts)
        for i, node in enumerate(nodes):
            if node in self.keys:
                raise ValueError(
                    f"{node.name()} is reachable in the graphs of two workers; a node lives on one worker"
                )
            self.keys[node] = (part, f"g{i}")
        counts = self.dependencies(seeds, extra_nodes)
        for node in nodes:
            self.add_node(part, node, counts)
        part.edges = [(src, self.keys[dst][1] if isinstance(dst, Node) else dst, attrs)
                      for src, dst, attrs in part.edges]
        return part

    def dependencies(self, seeds, extra_nodes):
        """Gradients each node waits for (engine count + seeds), or None when not shown."""
        if not self.show_dependencies:
            return None
        counts = engine._count_dependencies(list(dict.fromkeys([*seeds, *extra_nodes])))
        for node, n in seeds.items():
            counts[node] = counts.get(node, 0) + n
        return counts

    def add_node(self, part, node, counts) -> None:
        key = self.keys[node][1]
        count = None if counts is None else counts.get(node, 0)
        if type(node) is AccumulateGrad:
            leaf = node.variable
            lines = self.leaf_lines(leaf) if leaf is not None else ["(leaf freed)"]
            hooks, style = _leaf_hook_line(leaf), _LEAF_STYLE
        else:
            lines, hooks, style = [], _op_hook_line(node), _OP_STYLE
            if self.show_saved:
                lines.extend(self.add_saved(part, key, node))
        if hooks:
            lines.append(hooks)
            style += ", " + _HOOK_STYLE
        part.nodes.append(PartNode(key, node.name(), count, tuple(lines), style))
        for target, output_nr in _edges_of(node):
            part.edges.append((key, target, _output_attrs(target, output_nr)))

    def add_saved(self, part, key, node) -> list:
        """Add saved tensors as nodes hanging off ``key``; return the constants as label lines."""
        constants, saved = _saved_values(node)
        for i, (label, value) in enumerate(saved):
            saved_key = f"{key}s{i}"
            part.nodes.append(PartNode(saved_key, label, None, (self.value_label(value),), _SAVED_STYLE))
            part.edges.append((key, saved_key, _SAVED_EDGE))
        return constants

    def leaf_lines(self, leaf) -> list:
        name = self.param_names.get(id(leaf)) or leaf.name
        return ([name] if name else []) + [_shape_dtype(leaf.array)]

    def tensor_name(self, tensor) -> str:
        return self.param_names.get(id(tensor)) or tensor.name or "output"

    def value_label(self, value) -> str:
        if isinstance(value, Tensor):
            name = self.param_names.get(id(value)) or value.name
            return (f"{name} " if name else "") + _shape_dtype(value.array)
        return _shape_dtype(value)


class _Ends:
    """Finds the (part index, key) of a cross edge's end: a live node or a name."""

    def __init__(self, parts, keys):
        self.index = {id(part): i for i, part in enumerate(parts)}
        self.keys = keys
        self.names = {}
        for i, part in enumerate(parts):
            for name, key in part.names.items():
                if name in self.names:
                    raise ValueError(f"node name {name!r} is used in two parts; names must be unique")
                self.names[name] = (i, key)

    def find(self, end, which):
        if isinstance(end, str):
            found = self.names.get(end)
        else:
            part, key = self.keys.get(end, (None, None))
            found = None if part is None or id(part) not in self.index else (self.index[id(part)], key)
        if found is None:
            raise ValueError(
                f"CrossEdge {which} {end!r} is not in any part's graph: list it in that WorkerGraph's "
                "extra_nodes (a mapping names it), or make it reachable from its roots"
            )
        return found


# -- DOT text -------------------------------------------------------------------------------------


def _emit(parts, cross_edges, clustered: bool) -> str:
    """The DOT text of ``parts`` and ``cross_edges`` [((part, key), (part, key), label)]."""
    incoming = {}
    for _, dst, _ in cross_edges:
        incoming[dst] = incoming.get(dst, 0) + 1
    ids = {}
    for p, part in enumerate(parts):
        for node in part.nodes:
            ids[(p, node.key)] = f"n{len(ids)}"
    out = ["digraph autograd {", '  graph [rankdir=TB, fontname="Helvetica"];',
           '  node [fontname="Helvetica", fontsize=11];', '  edge [fontname="Helvetica", fontsize=9];']
    for p, part in enumerate(parts):
        indent = "    " if clustered else "  "
        if clustered:
            out.append(f"  subgraph cluster_{p} {{")
            out.append(f'    label={_quote(str(part.name))}; style="rounded"; color="grey50";')
        for node in part.nodes:
            title = node.title
            if node.count is not None:
                title += f" ({node.count + incoming.get((p, node.key), 0)})"
            label = _quote("\n".join([title, *node.lines]))
            out.append(f"{indent}{ids[(p, node.key)]} [label={label}, {node.style}];")
        if clustered:
            out.append("  }")
    for p, part in enumerate(parts):
        out.extend(_edge_line(ids[(p, src)], ids[(p, dst)], attrs) for src, dst, attrs in part.edges)
    for src, dst, label in cross_edges:
        attrs = _CROSS_STYLE + (f", label={_quote(label)}" if label else "")
        out.append(_edge_line(ids[src], ids[dst], attrs))
    out.append("}")
    return "\n".join(out) + "\n"


def _edge_line(src_id, dst_id, attrs) -> str:
    return f"  {src_id} -> {dst_id}" + (f" [{attrs}]" if attrs else "") + ";"


def _quote(text: str) -> str:
    """A DOT string literal (backslashes and quotes escaped, newlines as ``\\n``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# -- graph helpers ----------------------------------------------------------------------------------


def _check_roots(tensors, where) -> None:
    if not tensors:
        raise ValueError(f"{where}: give at least one tensor to draw")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{where}: argument {i} must be a Tensor, got {type(t).__name__}")
        if not t.requires_grad:
            raise ValueError(f"{where}: tensor {i} does not require grad, so it has no graph to draw")


def _param_names(params) -> dict:
    """``{id(tensor): name}`` from a mapping name -> Tensor."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise TypeError(
            f"params must be a mapping name -> Tensor (e.g. dict(model.named_parameters())), "
            f"got {type(params).__name__}"
        )
    names = {}
    for name, tensor in params.items():
        if not isinstance(tensor, Tensor):
            raise TypeError(f"params[{name!r}] must be a Tensor, got {type(tensor).__name__}")
        names[id(tensor)] = str(name)
    return names


def _edges_of(node):
    return [edge for edge in node.next_edges if edge is not None]


def _reachable(starts) -> list:
    """Nodes reachable from ``starts`` in breadth-first order (iterative)."""
    order, seen, queue = [], set(), deque()
    for node in starts:
        if node not in seen:
            seen.add(node)
            queue.append(node)
    while queue:
        node = queue.popleft()
        order.append(node)
        for target, _ in _edges_of(node):
            if target not in seen:
                seen.add(target)
                queue.append(target)
    return order


def _output_attrs(node, output_nr) -> str:
    return f'label="{output_nr}"' if node.num_outputs > 1 else ""


def _shape_dtype(array) -> str:
    """'(3, 4) float64' for arrays and NumPy scalars (0-d results are often scalars)."""
    if not (hasattr(array, "shape") and hasattr(array, "dtype")):
        return _short(repr(array))
    return f"{tuple(array.shape)} {array.dtype}"


def _short(text: str) -> str:
    return text if len(text) <= _MAX_VALUE_CHARS else text[: _MAX_VALUE_CHARS - 3] + "..."


def _plural(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _op_hook_line(node) -> str:
    hooks = node._pre_hooks
    return f"hooks: {_plural(len(hooks), 'tensor hook')}" if hooks else ""


def _leaf_hook_line(leaf) -> str:
    if leaf is None:
        return ""
    parts = []
    if leaf._hooks:
        parts.append(_plural(len(leaf._hooks), "tensor hook"))
    if leaf._post_accumulate_hooks:
        parts.append(_plural(len(leaf._post_accumulate_hooks), "post-accumulate hook"))
    return "hooks: " + ", ".join(parts) if parts else ""


def _saved_values(node):
    """``(constant label lines, [(label, tensor or array)])`` of what an op kept for backward."""
    attributes = getattr(node, "__dict__", {})
    if attributes.get("_released"):
        return ["(saved values freed)"], []
    constants, saved = [], []
    for attr, value in attributes.items():
        if attr in _SAVED_TENSOR_ATTRS:
            for i, item in enumerate(value or ()):
                _classify(f"{_SAVED_TENSOR_ATTRS[attr]} {i}", item, constants, saved)
        elif attr == "_saved_outputs":
            for i, array in (value or {}).items():
                saved.append((f"saved output {i}", array))
        elif not attr.startswith("_") and attr not in _NOT_SAVED:
            _classify(attr, value, constants, saved)
    return constants, saved


def _classify(label, value, constants, saved) -> None:
    if isinstance(value, Tensor) or backend.is_array(value):
        saved.append((label, value))
    elif value is not None:
        constants.append(f"{label} = {_short(repr(value))}")
