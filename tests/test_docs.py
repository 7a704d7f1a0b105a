"""The API reference (``make docs``, pdoc) shows the public names added beyond the original contract.

``../shared/API.md`` is the original contract; the names below came later and
must reach a reader through the reference too: each gets its own entry on its
module's page, with its docstring (and, for a class, its public methods with
theirs). The pages are built in-process into a temporary folder, from the
modules below only, so the test takes seconds; ``make docs`` builds every module.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pdoc
import pdoc.render
import pytest

ROOT = Path(__file__).resolve().parents[1]

# module -> the names its page must document (None: every public name of the module)
BEYOND_CONTRACT = {
    "minigrad.viz": None,  # graph pictures
    "minigrad.anomaly": None,  # anomaly mode
    "minigrad.serialization": None,  # checkpoints without pickle
    "minigrad.engine": ["set_grad_destination"],  # gradient destinations
    "minigrad_dist.testing": None,  # the property-testing kit
    "minigrad_dist.checkpoint": None,  # training checkpoints
    "minigrad_dist.debug": None,  # debug levels
    "minigrad_dist.ddp.trace": None,  # DDP traces
    "minigrad_dist.autograd": ["backward"],  # backward(mode=...)
    "minigrad_dist.zero": None,  # ZeRO stages 1 and 2
    "minigrad_dist.fsdp": None,  # fully sharded data parallel
    "minigrad_dist.memory": None,  # memory accounting per rank
    "minigrad_dist.pipelining": None,  # pipeline parallelism
    "minigrad_dist.device_mesh": None,  # device meshes
    "minigrad_dist.tensor_parallel": None,  # tensor parallelism
    "minigrad_dist.topology": None,  # nodes and two-level reductions
    "minigrad.linalg": None,  # torch.linalg
}
_VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}


class _Entries(HTMLParser):
    """The docstring and signature text of every entry (``id="name"`` or ``id="Class.method"``) on a pdoc page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.docstrings, self.signatures = {}, {}
        self._open = []  # (tag, id) of the open elements
        self._capture = None  # (which dict, entry id, depth of the element whose text is collected)
        self._text = []

    def handle_starttag(self, tag, attrs):
        if tag in _VOID_TAGS:
            return
        attrs = dict(attrs)
        self._open.append((tag, attrs.get("id")))
        classes = (attrs.get("class") or "").split()
        if self._capture is None and ("docstring" in classes or "signature" in classes):
            entry = next((i for _, i in reversed(self._open) if i), "")
            store = self.docstrings if "docstring" in classes else self.signatures
            self._capture, self._text = (store, entry, len(self._open)), []

    def handle_endtag(self, tag):
        if self._capture is not None and len(self._open) == self._capture[2]:
            store, entry, _ = self._capture
            store.setdefault(entry, " ".join("".join(self._text).split()))
            self._capture = None
        if self._open:
            self._open.pop()

    def handle_data(self, data):
        if self._capture is not None:
            self._text.append(data)


def _plain(text: str) -> str:
    """``text`` without the markup a docstring may carry, whitespace collapsed."""
    return " ".join(re.sub(r"[`*]", "", text).split())


def _summary(obj) -> str:
    """The first paragraph of ``obj``'s docstring, as plain text."""
    return _plain(inspect.getdoc(obj).split("\n\n")[0])


def _public_names(module) -> list[str]:
    """The names a module exports: its ``__all__``, else the public functions and classes defined in it."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [name for name, value in vars(module).items()
            if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
            and (inspect.isfunction(value) or inspect.isclass(value))]


def _public_methods(cls) -> list[str]:
    """The public methods and properties a class defines itself (inherited ones are documented with their class)."""
    return [name for name, value in vars(cls).items()
            if not name.startswith("_")
            and (inspect.isfunction(value) or isinstance(value, (property, classmethod, staticmethod)))]


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict:
    """module name -> its parsed page (``_Entries``), built with the options of ``make docs``."""
    out = tmp_path_factory.mktemp("docs")
    pdoc.render.configure(docformat="google")
    with warnings.catch_warnings():  # pdoc's notes on annotations it cannot evaluate are not this test's business
        warnings.simplefilter("ignore")
        pdoc.pdoc(*BEYOND_CONTRACT, output_directory=out)
    parsed = {}
    for name in BEYOND_CONTRACT:
        page = out / (name.replace(".", "/") + ".html")
        assert page.is_file(), f"no page for {name} in the API reference"
        parsed[name] = _Entries()
        parsed[name].feed(page.read_text(encoding="utf-8"))
    return parsed


def _cases():
    for module_name, names in BEYOND_CONTRACT.items():
        module = importlib.import_module(module_name)
        for name in names or _public_names(module):
            yield module_name, name
            value = getattr(module, name)
            if inspect.isclass(value):
                for method in _public_methods(value):
                    yield module_name, f"{name}.{method}"


@pytest.mark.parametrize(("module_name", "name"), list(_cases()))
def test_public_name_has_an_entry_with_its_docstring(pages, module_name, name):
    obj = importlib.import_module(module_name)
    for part in name.split("."):
        obj = inspect.getattr_static(obj, part) if inspect.isclass(obj) else getattr(obj, part)
    obj = obj.fget if isinstance(obj, property) else getattr(obj, "__func__", obj)
    assert inspect.getdoc(obj), f"{module_name}.{name} has no docstring"
    page = pages[module_name]
    assert name in page.docstrings, f"the page of {module_name} shows no docstring for {name}"
    assert _summary(obj) in _plain(page.docstrings[name]), (
        f"{module_name}.{name}: the page's text\n  {page.docstrings[name][:300]}\n"
        f"does not carry the docstring's first paragraph\n  {_summary(obj)}"
    )


def test_distributed_backward_documents_its_mode(pages):
    page = pages["minigrad_dist.autograd"]
    assert "mode" in page.signatures["backward"], page.signatures["backward"]
    assert '"fast"' in page.docstrings["backward"] and '"smart"' in page.docstrings["backward"]


def test_landing_pages_point_at_the_layers():
    """The package docstrings (the reference's landing text) name the layers and where each lives."""
    import minigrad
    import minigrad_dist

    for module, layers in ((minigrad, ("backend", "tensor", "engine", "nn", "optim")),
                           (minigrad_dist, ("process_group", "ddp", "rpc", "autograd"))):
        for layer in layers:
            assert f"``{layer}``" in module.__doc__, f"{module.__name__}'s docstring does not name the layer {layer}"


def test_make_docs_names_every_module():
    """``make docs`` hands pdoc every module file, since pdoc alone follows ``__all__`` and skips the others."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert "-m pdoc" in recipe and "find minigrad minigrad_dist -name '*.py'" in recipe, recipe


# -- the architecture page (README.md, "Architecture") and its pictures ----------------------------------------

_PATH = r"minigrad(?:_dist)?(?:/\w+)+(?:\.py)?"  # a file or folder of the library, as the texts name it


def _architecture_texts() -> dict:
    """The README's Architecture section, the figure script, and its gradient's way (read, not run: no matplotlib)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]
    script = (ROOT / "examples" / "figures" / "architecture.py").read_text(encoding="utf-8")
    steps = next(node.value for node in ast.parse(script).body
                 if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "GRADIENT_PATH")
    return {
        "README.md": section,
        "architecture.py": script,
        "architecture.py GRADIENT_PATH": "\n".join(where for _, where in ast.literal_eval(steps)),
    }


def _defines(path: Path, dotted: str) -> bool:
    """Whether ``path`` defines every part of ``dotted`` (``Reducer._mark_ready``: class Reducer, def _mark_ready)."""
    code = path.read_text(encoding="utf-8")
    return all(re.search(rf"^\s*(def|class) {part}\b", code, re.MULTILINE) for part in dotted.split("."))


def test_architecture_texts_name_files_that_exist():
    for source, text in _architecture_texts().items():
        paths = re.findall(_PATH, text)
        assert paths, source
        missing = [path for path in paths if not (ROOT / path).exists()]
        assert not missing, f"{source} names files that do not exist: {missing}"


def test_gradient_path_names_functions_where_they_are():
    """The picture's "file function" pairs, and the README's ``Class.method`` names, are defined where it says."""
    texts = _architecture_texts()
    pairs = re.findall(rf"({_PATH}\.py) ([A-Za-z_][\w.]*\w)", texts["architecture.py GRADIENT_PATH"])
    assert len(pairs) >= 8, pairs
    wrong = [f"{path} {name}" for path, name in pairs if not _defines(ROOT / path, name)]
    assert not wrong, f"the gradient's way names functions its files do not define: {wrong}"
    readme = texts["README.md"]
    files = [ROOT / path for path in re.findall(rf"{_PATH}\.py", readme)]
    for dotted in re.findall(r"`([A-Z]\w*\.\w+)`", readme):
        assert any(_defines(path, dotted) for path in files), f"README.md: no file it names defines {dotted}"
