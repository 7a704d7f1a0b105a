"""Graph pictures: the DOT text is parsed back into nodes and edges and checked against the graph."""

from __future__ import annotations

import pickle
import re
import shutil
import stat
import sys
from collections import Counter

import numpy as np
import pytest

import minigrad as mg
from minigrad import engine, nn, viz
from minigrad.function import Node
from minigrad.tensor import Tensor

# -- a small DOT reader for the subset viz writes ----------------------------------------------

_ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,\]\s]+)')
_NODE = re.compile(r"^(n\d+) \[(.*)\];$")
_EDGE = re.compile(r"^(n\d+) -> (n\d+)(?: \[(.*)\])?;$")
_CLUSTER = re.compile(r"^subgraph (cluster_\d+) \{$")
_CLUSTER_LABEL = re.compile(r'^label=("(?:[^"\\]|\\.)*");')


def _unquote(value: str) -> str:
    if not value.startswith('"'):
        return value
    out, i, body = [], 0, value[1:-1]
    while i < len(body):
        if body[i] == "\\":
            out.append("\n" if body[i + 1] == "n" else body[i + 1])
            i += 2
        else:
            out.append(body[i])
            i += 1
    return "".join(out)


def _attrs(text):
    return {key: _unquote(value) for key, value in _ATTR.findall(text or "")}


class Dot:
    """Nodes (id -> attrs, with 'cluster'), edges [(src, dst, attrs)] of a viz DOT text."""

    def __init__(self, text: str):
        lines = [line.strip() for line in text.strip().splitlines()]
        assert lines[0] == "digraph autograd {" and lines[-1] == "}", text
        self.nodes, self.edges, self.cluster_titles, cluster = {}, [], {}, None
        for line in lines[1:-1]:
            if m := _CLUSTER.match(line):
                cluster = m.group(1)
            elif line == "}":
                cluster = None
            elif m := _CLUSTER_LABEL.match(line):
                self.cluster_titles[cluster] = _unquote(m.group(1))
            elif m := _EDGE.match(line):
                self.edges.append((m.group(1), m.group(2), _attrs(m.group(3))))
            elif m := _NODE.match(line):
                self.nodes[m.group(1)] = {**_attrs(m.group(2)), "cluster": cluster}
            else:
                assert line.startswith(("graph ", "node ", "edge ")), f"unexpected DOT line: {line!r}"
        for src, dst, _ in self.edges:
            assert src in self.nodes and dst in self.nodes, f"edge {src} -> {dst} names an undeclared node"

    def label(self, node_id) -> str:
        return self.nodes[node_id]["label"]

    def find(self, first_line: str) -> list:
        """Ids of nodes whose label's first line is ``first_line`` (without a dependency count)."""
        titles = {i: re.sub(r" \(\d+\)$", "", a["label"].split("\n")[0]) for i, a in self.nodes.items()}
        return [i for i, title in titles.items() if title == first_line]

    def one(self, first_line: str) -> str:
        ids = self.find(first_line)
        assert len(ids) == 1, (first_line, ids)
        return ids[0]

    def leaf(self, name: str) -> str:
        ids = [i for i in self.find("AccumulateGrad") if self.label(i).split("\n")[1] == name]
        assert len(ids) == 1, (name, ids)
        return ids[0]

    def count(self, node_id) -> int:
        return int(re.search(r" \((\d+)\)$", self.label(node_id).split("\n")[0]).group(1))

    def solid_edges(self) -> Counter:
        return Counter((s, d) for s, d, a in self.edges if a.get("style") not in ("dashed", "dotted"))


def leaf(shape, name=None):
    t = mg.randn(*shape, dtype=mg.float64, requires_grad=True)
    t.name = name
    return t


# -- graphs of each kind ------------------------------------------------------------------------


def test_simple_expression_nodes_and_edges():
    x, w = leaf((3,), "x"), leaf((3,), "w")
    y = (x * w).sum()
    y.name = "y"
    dot = Dot(viz.to_dot(y))
    out, total, mul = dot.one("y"), dot.one("SumBackward"), dot.one("MulBackward")
    ax, aw = dot.leaf("x"), dot.leaf("w")
    assert dot.label(ax) == "AccumulateGrad\nx\n(3,) float64"
    assert dot.label(out) == "y\n() float64"
    assert dot.solid_edges() == Counter({(out, total): 1, (total, mul): 1, (mul, ax): 1, (mul, aw): 1})
    assert len(dot.nodes) == 5


def test_leaf_used_twice_has_one_node_and_two_edges():
    x = leaf((2,), "x")
    dot = Dot(viz.to_dot((x * x).sum(), show_dependencies=True))
    mul, ax = dot.one("MulBackward"), dot.leaf("x")
    assert dot.solid_edges()[(mul, ax)] == 2
    assert dot.count(ax) == 2


def test_diamond_joins_at_one_leaf_node():
    x = leaf((3,), "x")
    y = ((x * 2) * x.exp()).sum()
    dot = Dot(viz.to_dot(y, show_dependencies=True))
    ax = dot.leaf("x")
    exp = dot.one("ExpBackward")
    muls = dot.find("MulBackward")
    assert len(muls) == 2 and len(dot.find("AccumulateGrad")) == 1
    into_leaf = sorted(src for src, dst in dot.solid_edges().elements() if dst == ax)
    inner = [m for m in muls if (m, ax) in dot.solid_edges()]
    assert sorted([exp, *inner]) == into_leaf
    assert dot.count(ax) == 2


def test_mlp_leaves_are_named_parameters():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    params = dict(model.named_parameters())
    loss = model(mg.randn(5, 3, dtype=mg.float64)).sum()
    dot = Dot(viz.to_dot(loss, params=params))
    leaves = dot.find("AccumulateGrad")
    assert sorted(dot.label(i).split("\n")[1] for i in leaves) == sorted(params)
    for name, p in params.items():
        assert dot.label(dot.leaf(name)).split("\n")[2] == f"{tuple(p.shape)} float64"
    edges = dot.solid_edges()
    leaf_names = {i: dot.label(i).split("\n")[1] for i in leaves}
    layers_seen = set()
    for linear in dot.find("LinearBackward"):
        targets = [d for s, d in edges if s == linear]
        named = sorted(leaf_names[d] for d in targets if d in leaf_names)
        layer = named[0].split(".")[0]
        assert named == [f"{layer}.bias", f"{layer}.weight"]
        layers_seen.add(layer)
        # The first layer's input needs no gradient: its only edges go to its parameters.
        assert len(targets) == (2 if layer == "0" else 3)
    assert layers_seen == {"0", "2"}


def test_params_take_precedence_over_tensor_names_and_unknown_leaves_show_shape_only():
    a, b = leaf((2,), "a_name"), leaf((2,))
    dot = Dot(viz.to_dot((a + b).sum(), params={"alpha": a}))
    labels = sorted(dot.label(i) for i in dot.find("AccumulateGrad"))
    assert labels == ["AccumulateGrad\n(2,) float64", "AccumulateGrad\nalpha\n(2,) float64"]


def test_hooks_are_marked_on_ops_and_leaves():
    x, w = leaf((3,), "x"), leaf((3,), "w")
    h = x * w
    h.register_hook(lambda g: g)
    x.register_hook(lambda g: g * 1)
    w.register_post_accumulate_grad_hook(lambda p: None)
    w.register_post_accumulate_grad_hook(lambda p: None)
    dot = Dot(viz.to_dot(h.tanh().sum()))
    marked = {i for i, a in dot.nodes.items() if a.get("color") == "red"}
    assert marked == {dot.one("MulBackward"), dot.leaf("x"), dot.leaf("w")}
    assert dot.label(dot.one("MulBackward")).endswith("hooks: 1 tensor hook")
    assert dot.label(dot.leaf("x")).endswith("hooks: 1 tensor hook")
    assert dot.label(dot.leaf("w")).endswith("hooks: 2 post-accumulate hooks")


def test_dependency_counts_reproduce_the_design_note_figure():
    a, b, c = leaf((3, 3), "a"), leaf((3, 3), "b"), leaf((3, 3), "c")
    d, e = a + b, b * c
    d.name, e.name = "d", "e"
    dot = Dot(viz.to_dot(d, e, backward_from=[d], show_dependencies=True))
    counts = {name: dot.count(dot.one(name)) for name in ("AddBackward", "MulBackward")}
    assert counts == {"AddBackward": 1, "MulBackward": 0}
    assert {n: dot.count(dot.leaf(n)) for n in "abc"} == {"a": 1, "b": 1, "c": 0}


def test_dependency_counts_equal_the_engine_count_plus_seeds():
    x = leaf((4,), "x")
    shared = x.tanh()
    y = (shared * 3 + shared * shared).sum()
    z = shared.exp().mean()
    task = engine.GraphTask([y.grad_fn, z.grad_fn], retain_graph=True)
    dot = Dot(viz.to_dot(y, z, show_dependencies=True))
    seeds = Counter([y.grad_fn, z.grad_fn])
    for node, expected in task.dependencies.items():
        matches = dot.find(node.name())
        got = {dot.count(i) for i in matches}
        if len(matches) == 1:
            assert got == {expected + seeds[node]}, node.name()
    # In the picture the count is the number of arrows into a node (every node takes part here).
    graph_nodes = [i for i, a in dot.nodes.items() if a["shape"] == "box"]
    assert len(graph_nodes) == len(task.dependencies)
    for node_id in graph_nodes:
        arrows = sum(n for (s, d), n in dot.solid_edges().items() if d == node_id)
        assert dot.count(node_id) == arrows, dot.label(node_id)


class StandIn(Node):
    """A named graph node standing in for a send or recv node of distributed autograd."""

    def __init__(self, label, next_edges=(), num_outputs=1):
        self.label = label
        self.next_edges = tuple(next_edges)
        self.num_outputs = num_outputs
        self.priority = 0
        self._pre_hooks = None

    def name(self):
        return self.label


def design_note_workers():
    """The design note's two-worker example: t3 = t1 + t2 on worker1, t5 = t3 * t4 on worker0."""
    t1, t2, t4 = leaf((3, 3), "t1"), leaf((3, 3), "t2"), leaf((3, 3), "t4")
    send1 = StandIn("send1", [t1._gradient_edge(), t2._gradient_edge()])
    recv1 = StandIn("recv1", num_outputs=2)
    t3 = Tensor._make(t1.array, True, recv1, 0) + Tensor._make(t2.array, True, recv1, 1)
    send2 = StandIn("send2", [t3._gradient_edge()])
    recv2 = StandIn("recv2")
    t5 = Tensor._make(t3.array, True, recv2, 0) * t4
    t5.name = "t5"
    workers = [viz.WorkerGraph("worker0", roots=[t5], extra_nodes=[send1]),
               viz.WorkerGraph("worker1", extra_nodes=[send2])]
    cross = [viz.CrossEdge(recv2, send2, "autograd_message_id=2"),
             viz.CrossEdge(recv1, send1, "autograd_message_id=1")]
    return workers, cross, (t1, t2, t4)


def check_design_note_picture(text, keep_alive):
    dot = Dot(text)
    titles = dot.cluster_titles
    where = {dot.label(i).split("\n")[0]: titles[a["cluster"]] for i, a in dot.nodes.items()}
    assert where == {
        "t5": "worker0", "MulBackward (1)": "worker0", "recv2 (1)": "worker0", "send1 (1)": "worker0",
        "AccumulateGrad (1)": "worker0",
        "send2 (1)": "worker1", "AddBackward (1)": "worker1", "recv1 (2)": "worker1",
    }
    dashed = {(dot.label(s).split(" ")[0], dot.label(d).split(" ")[0], a["label"])
              for s, d, a in dot.edges if a.get("style") == "dashed"}
    assert dashed == {("recv2", "send2", "autograd_message_id=2"),
                      ("recv1", "send1", "autograd_message_id=1")}
    edges = dot.solid_edges()
    assert edges[(dot.one("send1"), dot.leaf("t1"))] == 1 and edges[(dot.one("send1"), dot.leaf("t2"))] == 1
    assert edges[(dot.one("AddBackward"), dot.one("recv1"))] == 2
    into_recv1 = [a for s, d, a in dot.edges if d == dot.one("recv1") and a.get("style") is None]
    assert sorted(a["label"] for a in into_recv1) == ["0", "1"]
    assert len(dot.find("AccumulateGrad")) == len(keep_alive)


def test_clusters_with_dashed_cross_edges_and_fast_mode_counts():
    workers, cross, keep_alive = design_note_workers()
    check_design_note_picture(viz.dot_from_parts(workers, cross, show_dependencies=True), keep_alive)


def test_parts_described_elsewhere_travel_as_plain_data_and_join_by_name():
    """What a distributed context does: each worker describes its share, one process draws them."""
    workers, cross, keep_alive = design_note_workers()
    send1, send2 = workers[0].extra_nodes[0], workers[1].extra_nodes[0]
    recv1, recv2 = cross[1].src_node, cross[0].src_node
    named = [viz.WorkerGraph("worker0", workers[0].roots, {"send 1": send1, "recv 2": recv2}),
             viz.WorkerGraph("worker1", (), {"send 2": send2, "recv 1": recv1})]
    parts = [pickle.loads(pickle.dumps(viz.describe(w, show_dependencies=True))) for w in named]
    edges = [viz.CrossEdge("recv 2", "send 2", "autograd_message_id=2"),
             viz.CrossEdge("recv 1", "send 1", "autograd_message_id=1")]
    check_design_note_picture(viz.dot_from_parts(parts, edges), keep_alive)


def test_show_saved_draws_what_backward_keeps_and_notes_freed_values():
    w = leaf((2, 3), "w")
    x = mg.ones(3, dtype=mg.float64)
    y = (w * x).sum(dim=1).relu()
    dot = Dot(viz.to_dot(y, params={"w": w}, show_saved=True))
    mul = dot.one("MulBackward")
    saved = {d: dot.label(d) for s, d, a in dot.edges if s == mul and a.get("style") == "dotted"}
    assert sorted(saved.values()) == ["saved input 0\nw (2, 3) float64", "saved input 1\n(3,) float64"]
    assert all(dot.nodes[i]["fillcolor"] == "orange" for i in saved)
    assert "axes = (1,)" in dot.label(dot.one("SumBackward")).split("\n")
    relu = dot.one("ReLUBackward")
    relu_saved = [dot.label(d) for s, d, a in dot.edges if s == relu and a.get("style") == "dotted"]
    assert relu_saved == ["mask\n(2,) bool"]
    y.sum().backward()
    after = Dot(viz.to_dot(y, show_saved=True))
    assert after.label(after.one("MulBackward")).endswith("(saved values freed)")
    assert not any(a.get("style") == "dotted" for _, _, a in after.edges)


def test_user_function_nodes_are_named_and_their_saved_tensors_shown():
    class Cube(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x**2

    x = leaf((2,), "x")
    dot = Dot(viz.to_dot(Cube.apply(x).sum(), show_saved=True))
    cube = dot.one("CubeBackward")
    assert [dot.label(d) for s, d, a in dot.edges if s == cube and a.get("style") == "dotted"] == [
        "saved tensor 0\nx (2,) float64"
    ]


def test_edges_into_multi_output_nodes_name_the_output():
    x = leaf((2, 3), "x")
    parts = StandIn("Split", [x._gradient_edge()], num_outputs=2)
    first, second = Tensor._make(x.array[0], True, parts, 0), Tensor._make(x.array[1], True, parts, 1)
    dot = Dot(viz.to_dot(first, second))
    split = dot.one("Split")
    labels = sorted(a["label"] for s, d, a in dot.edges if d == split)
    assert labels == ["0", "1"]
    assert "label" not in next(a for s, d, a in dot.edges if s == split)


def test_leaf_output_and_deep_graph_are_drawn_without_recursion():
    x = leaf((1,), "x")
    assert Dot(viz.to_dot(x)).solid_edges() == Counter({("n0", "n1"): 1})
    y = x
    depth = sys.getrecursionlimit() + 100
    for _ in range(depth):
        y = y * 1.0
    dot = Dot(viz.to_dot(y))
    assert len(dot.find("MulBackward")) == depth and len(dot.edges) == depth + 1


def test_labels_with_quotes_and_backslashes_survive():
    x = leaf((1,), 'we"ird\\name')
    dot = Dot(viz.to_dot(x * 2))
    assert dot.label(dot.leaf('we"ird\\name')) == 'AccumulateGrad\nwe"ird\\name\n(1,) float64'


# -- errors ----------------------------------------------------------------------------------------


def test_argument_errors_name_the_problem():
    x = leaf((2,), "x")
    y = x * 2
    with pytest.raises(TypeError, match="argument 0 must be a Tensor"):
        viz.to_dot(np.ones(2))
    with pytest.raises(ValueError, match="does not require grad"):
        viz.to_dot(mg.ones(2))
    with pytest.raises(ValueError, match="at least one tensor"):
        viz.to_dot()
    with pytest.raises(TypeError, match="mapping name -> Tensor"):
        viz.to_dot(y, params=[x])
    with pytest.raises(TypeError, match=r"params\['x'\] must be a Tensor"):
        viz.to_dot(y, params={"x": x.array})
    with pytest.raises(ValueError, match="backward_from must also be passed"):
        viz.to_dot(y, backward_from=[x * 3])


def test_cluster_errors():
    workers, cross, _ = design_note_workers()
    stray = StandIn("stray")
    with pytest.raises(ValueError, match="src_node .*stray.* is not in any part's graph"):
        viz.dot_from_parts(workers, [viz.CrossEdge(stray, cross[0].dst_node)])
    with pytest.raises(ValueError, match="dst_node 'send 9' is not in any part's graph"):
        viz.dot_from_parts(workers, [viz.CrossEdge(cross[0].src_node, "send 9")])
    named = viz.WorkerGraph("w", extra_nodes={"same": StandIn("a")})
    with pytest.raises(ValueError, match="node name 'same' is used in two parts"):
        viz.dot_from_parts([named, viz.WorkerGraph("v", extra_nodes={"same": StandIn("b")})])
    with pytest.raises(ValueError, match="reachable in the graphs of two workers"):
        viz.dot_from_parts([workers[0], viz.WorkerGraph("copy", roots=workers[0].roots)])
    with pytest.raises(TypeError, match="parts must be WorkerGraph or GraphPart objects, got tuple"):
        viz.dot_from_parts([("worker0", [])])
    with pytest.raises(TypeError, match="expected a WorkerGraph, got str"):
        viz.describe("worker0")
    with pytest.raises(TypeError, match="CrossEdge"):
        viz.dot_from_parts(workers, [(cross[0].src_node, cross[0].dst_node)])
    with pytest.raises(TypeError, match="extra_nodes of worker 'w' must be graph nodes"):
        viz.dot_from_parts([viz.WorkerGraph("w", extra_nodes=[leaf((1,))])])


# -- rendering ---------------------------------------------------------------------------------------


def test_render_without_graphviz_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="apt-get install graphviz.*conda install"):
        viz.render("digraph autograd {}", tmp_path / "g.svg")


def test_render_rejects_unknown_formats(tmp_path):
    with pytest.raises(ValueError, match="format must be one of"):
        viz.render("digraph autograd {}", tmp_path / "g.gif", format="gif")


def _fake_dot(directory, exit_code=0):
    """A `dot` stand-in that writes its arguments and stdin to the -o file."""
    script = directory / "dot"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "args = sys.argv[1:]\n"
        "data = sys.stdin.read()\n"
        f"if {exit_code}:\n"
        "    sys.stderr.write('syntax error in line 1')\n"
        f"    sys.exit({exit_code})\n"
        "open(args[args.index('-o') + 1], 'w').write(' '.join(args) + '\\n' + data)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_render_passes_the_text_and_format_to_dot(monkeypatch, tmp_path):
    _fake_dot(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    text = viz.to_dot(leaf((2,), "x") * 2)
    out = viz.render(text, tmp_path / "graph.png", format="png")
    args, body = out.read_text().split("\n", 1)
    assert args == f"-Tpng -o {tmp_path / 'graph.png'}" and body == text


def test_render_reports_dot_errors(monkeypatch, tmp_path):
    _fake_dot(tmp_path, exit_code=3)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="exit code 3: syntax error in line 1"):
        viz.render("not dot", tmp_path / "g.svg")


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs the Graphviz dot program")
def test_real_graphviz_accepts_every_kind_of_picture(tmp_path):
    workers, cross, _ = design_note_workers()
    texts = [viz.dot_from_parts(workers, cross, show_dependencies=True, show_saved=True)]
    x = leaf((2,), 'q"uote')
    x.register_hook(lambda g: g)
    texts.append(viz.to_dot((x * x).exp().sum(), show_saved=True, show_dependencies=True))
    for i, text in enumerate(texts):
        out = viz.render(text, tmp_path / f"g{i}.svg")
        assert "<svg" in out.read_text()
