"""Every CuPy name the library uses exists in the installed CuPy, checked on a machine without a GPU.

GPU-only code runs nowhere in CI, so a misspelt name in it (``cupy.cuda.runtime.getDeviceCont``,
``xp.take_along_axes``) would hide until the first run on a GPU. CuPy 14 imports without a GPU or a
CUDA driver (only allocating device memory fails, with ``CUDARuntimeError``), so its API can be read
here with ``getattr`` alone. The names are found in the library's source, not kept in a list:

1. Parse every module of ``minigrad/`` and ``minigrad_dist/``.
2. Find each module's CuPy roots: names bound by importing ``cupy``/``cupyx``, a submodule or a member
   (``import cupy as _cupy``, ``import cupyx.scipy.special``, ``from cupy import cuda``), a library
   module's such name imported or reached as an attribute (``backend._cupy``), names assigned one of
   those, and calls of a library function that returns one (a ``_cupy()`` helper).
3. Find the array-module roots, NumPy or CuPy depending on where the data lives: the name ``xp``, an
   attribute ``.xp`` (a graph node's), a call of ``get_array_module``/``module_for_device`` or of a
   library function that returns an array module, and names assigned one of those.
4. Collect the attribute chain on each root (``_cupy.cuda.runtime.getDevice``, ``xp.linalg.norm``). A
   chain goes on through the call of a class (``_cupy.cuda.Device(i).use`` checks ``Device.use``) and
   stops at the call of a function, whose result's type the source does not say. ``getattr(root, name)``
   adds ``name`` when it is a string constant, a class attribute that the module sets to strings
   (``getattr(self.xp, self.function)`` with ``class Sin(..., function="sin")``), or a parameter whose
   callers in the module pass strings or a module-level dict of strings (``_COMBINE[op]``); a name it
   cannot resolve fails the test, so no lookup goes unchecked. ``getattr(root, name, default)`` probes
   optional API and requires nothing.
5. Check each CuPy chain on the installed ``cupy``/``cupyx`` (importing a submodule that CuPy loads
   lazily), and each array-module chain on both ``numpy`` and ``cupy``, except in the body of an
   ``if xp is np`` (the else of ``if xp is not np``), which runs on NumPy only.

Step 5 runs in a fresh Python that also sees ``.venv/cupy-api``, where ``make test`` installs CuPy for
this test alone (see ``CUPY_API_DIR``); it skips, saying so, where no CuPy can be imported.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ("minigrad", "minigrad_dist")
CUPY_MODULES = ("cupy", "cupyx")
ARRAY_MODULE_FUNCTIONS = {"get_array_module", "module_for_device"}
CALL = "()"  # a chain segment: the call of what the chain named so far


@dataclass(frozen=True)
class Use:
    """One attribute chain on a CuPy or array-module root, where the library's source has it."""

    kind: str  # "cupy": ``chain[0]`` is "cupy" or "cupyx"; "xp": the chain is on NumPy or CuPy
    chain: tuple  # attribute names, CALL where a class is called
    where: str  # "path:line"
    numpy_only: bool = False

    def name(self) -> str:
        return ".".join(self.chain).replace(".()", "()")


@dataclass
class Discovery:
    """What step 2-4 found in some sources: the uses, the getattr names it could not resolve, the parsed modules."""

    uses: list
    unresolved: list
    trees: dict


# ------------------------------------------------------------------------------- 1-3. modules and their roots


def library_sources() -> dict:
    """``{"minigrad/backend.py": source, ...}`` for every module of the library."""
    return {str(path.relative_to(ROOT)): path.read_text()
            for package in LIBRARY for path in sorted((ROOT / package).rglob("*.py"))}


def _parse_relevant(sources: dict):
    """The parsed modules that can hold a root, and their ``_Library`` (parsing all 2 MB takes seconds).

    A module qualifies when its text names a root (``cupy``, ``xp``, an array-module function) or
    a helper found to return one; new helpers can bring in more modules, so this repeats until stable.
    """
    trees, names, library = {}, set(CUPY_MODULES) | {"xp"} | ARRAY_MODULE_FUNCTIONS, None
    while True:
        pattern = re.compile(r"\b(" + "|".join(sorted(names)) + r")\b")
        wanted = {path for path, source in sources.items() if pattern.search(source)}
        if library is not None and wanted <= trees.keys():
            return trees, library
        trees.update({path: ast.parse(sources[path], filename=path) for path in wanted - trees.keys()})
        library = _Library(trees)
        names |= library.array_module_functions | set(library.cupy_functions) | set(library.module_cupy_names)


def _cupy_import_bindings(node) -> dict:
    """Names an import statement binds to CuPy objects: ``{local name: ("cupy", "cuda", ...)}``."""
    bound = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = tuple(alias.name.split("."))
            if parts[0] in CUPY_MODULES:
                bound[alias.asname or parts[0]] = parts if alias.asname else parts[:1]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        parts = tuple(node.module.split("."))
        if parts[0] in CUPY_MODULES:
            for alias in node.names:
                bound[alias.asname or alias.name] = parts + (alias.name,)
    return bound


def _functions(tree):
    return [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _returns(function) -> list:
    """The values of ``function``'s own return statements (not those of functions nested in it)."""
    found, stack = [], list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return found


class _Library:
    """Facts about the whole library that a module's analysis needs (step 2 and 3 across modules)."""

    def __init__(self, trees: dict):
        self.trees = trees
        # A module-level name bound to CuPy in some module (``_cupy`` in backend.py), reachable from others.
        self.module_cupy_names = {}
        for tree in trees.values():
            for node in tree.body:
                self.module_cupy_names.update(_cupy_import_bindings(node))
                if isinstance(node, ast.Try):  # ``try: import cupy as _cupy`` (CuPy is optional)
                    for inner in node.body:
                        self.module_cupy_names.update(_cupy_import_bindings(inner))
        self.array_module_functions = set(ARRAY_MODULE_FUNCTIONS)
        self.cupy_functions = {}  # library function name -> the CuPy chain it returns
        returning = {path: [(f, _returns(f)) for f in _functions(tree)] for path, tree in trees.items()}
        changed = True
        while changed:  # a helper may return another helper's result
            changed = False
            for path, functions in returning.items():
                module = _Scope(self, None, trees[path])
                for function, returns in functions:
                    changed |= self._classify(function, returns, module)

    def _may_be_root(self, node) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "xp" or node.attr in self.module_cupy_names
        if isinstance(node, ast.Call):
            name = _called_name(node.func)
            return name in self.array_module_functions or name in self.cupy_functions
        return isinstance(node, ast.Name)

    def _classify(self, function, returns, module) -> bool:
        if (not returns or function.name in self.array_module_functions or function.name in self.cupy_functions
                or not all(self._may_be_root(value) for value in returns)):
            return False
        scope = _Scope(self, module, function)
        roots = [scope.root(value) for value in returns]
        if all(root is not None and root[0] == "xp" for root in roots):
            self.array_module_functions.add(function.name)
            return True
        if all(root is not None and root[0] == "cupy" for root in roots) and len({r[1] for r in roots}) == 1:
            self.cupy_functions[function.name] = roots[0][1]
            return True
        return False


class _Scope:
    """The CuPy and array-module names bound in a module or function (step 2 and 3)."""

    def __init__(self, library: _Library, parent, node):
        self.library = library
        self.cupy = dict(parent.cupy) if parent else {}
        self.xp = set(parent.xp) if parent else {"xp"}
        self.numpy = set(parent.numpy) if parent else set()
        self.node = node
        statements = [node] if isinstance(node, ast.Module) else node.body
        nested = [n for s in statements for n in _own_nodes(s)]
        for child in nested:
            self.cupy.update(_cupy_import_bindings(child))
            if isinstance(child, ast.ImportFrom) and (child.level > 0 or (child.module or "").startswith(LIBRARY)):
                for alias in child.names:
                    if alias.name in library.module_cupy_names:
                        self.cupy[alias.asname or alias.name] = library.module_cupy_names[alias.name]
            if isinstance(child, ast.Import):
                self.numpy |= {a.asname or a.name for a in child.names if a.name == "numpy"}
        if not isinstance(node, ast.Module):
            self.xp |= {arg.arg for arg in _parameters(node) if arg.arg == "xp"}
        assignments = [n for n in nested if isinstance(n, ast.Assign)]
        changed = True
        while changed:  # ``mod = backend.get_array_module(a)``; ``xp, k = self.xp, self.k``
            changed = False
            for assign in assignments:
                for target in assign.targets:
                    changed |= self._bind(target, assign.value)

    def _bind(self, target, value) -> bool:
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            return any([self._bind(t, v) for t, v in zip(target.elts, value.elts)])
        if not isinstance(target, ast.Name):
            return False
        root = self.root(value)
        if root is None:
            return False
        if root[0] == "xp" and target.id not in self.xp:
            self.xp.add(target.id)
            return True
        if root[0] == "cupy" and self.cupy.get(target.id) != root[1]:
            self.cupy[target.id] = root[1]
            return True
        return False

    def root(self, node):
        """``("cupy", chain)`` or ``("xp", ())`` when ``node`` is itself a root, else None."""
        if isinstance(node, ast.Name):
            if node.id in self.cupy:
                return "cupy", self.cupy[node.id]
            if node.id in self.xp:
                return "xp", ()
        elif isinstance(node, ast.Attribute):
            if node.attr == "xp":
                return "xp", ()
            if node.attr in self.library.module_cupy_names and not self.chain(node.value):
                return "cupy", self.library.module_cupy_names[node.attr]
        elif isinstance(node, ast.Call):
            name = _called_name(node.func)
            if name in self.library.array_module_functions:
                return "xp", ()
            if name in self.library.cupy_functions:
                return "cupy", self.library.cupy_functions[name]
        return None

    def chain(self, node):
        """``(kind, chain)`` for an attribute chain (calls of classes included) on a root, else None."""
        root = self.root(node)
        if root is not None:
            return root
        if isinstance(node, ast.Attribute):
            base = self.chain(node.value)
            return (base[0], base[1] + (node.attr,)) if base else None
        if isinstance(node, ast.Call) and node.func is not None:
            base = self.chain(node.func)
            return (base[0], base[1] + (CALL,)) if base else None
        return None

    def is_numpy(self, node) -> bool:
        return isinstance(node, ast.Name) and node.id in self.numpy


def _own_nodes(statement):
    """The nodes of ``statement`` outside any function or class defined in it."""
    stack = [statement]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in ast.iter_child_nodes(node)
                     if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))


def _parameters(function) -> list:
    args = function.args
    return args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]


def _called_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


# ------------------------------------------------------------------------------- 4. chains and getattr names


class _ModuleUses:
    """The uses in one module: every maximal chain on a root, and the names of getattr on a root."""

    def __init__(self, library: _Library, path: str, tree):
        self.library, self.path, self.tree = library, path, tree
        self.uses, self.unresolved = [], []
        self.parent = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        self._visit(tree, _Scope(library, None, tree), numpy_only=False)

    def _visit(self, node, scope, numpy_only):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._visit(child, _Scope(self.library, scope, child), numpy_only)
            elif isinstance(child, ast.If):
                self._record(child.test, scope, numpy_only)
                self._visit(child.test, scope, numpy_only)
                only_numpy_when = self._numpy_test(child.test, scope)
                for statement in child.body:
                    self._visit_statement(statement, scope, numpy_only or only_numpy_when is True)
                for statement in child.orelse:
                    self._visit_statement(statement, scope, numpy_only or only_numpy_when is False)
            else:
                self._record(child, scope, numpy_only)
                self._visit(child, scope, numpy_only)

    def _visit_statement(self, statement, scope, numpy_only):
        wrapper = ast.Module(body=[statement], type_ignores=[])
        self._visit(wrapper, scope, numpy_only)

    def _numpy_test(self, test, scope):
        """True for ``if xp is np [and ...]``, False for ``if xp is not np``, else None."""
        tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        for part in tests:
            if (isinstance(part, ast.Compare) and len(part.ops) == 1 and scope.is_numpy(part.comparators[0])
                    and (scope.root(part.left) or ("",))[0] == "xp"):
                if isinstance(part.ops[0], ast.Is):
                    return True
                if isinstance(part.ops[0], ast.IsNot) and len(tests) == 1:
                    return False
        return None

    def _record(self, node, scope, numpy_only):
        where = f"{self.path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call) and _called_name(node.func) == "getattr" and isinstance(node.func, ast.Name):
            self._record_getattr(node, scope, numpy_only, where)
            return
        if not isinstance(node, ast.Attribute) or self._inside_longer_chain(node):
            return
        found = scope.chain(node)
        if found is not None and found[1] != ():
            self.uses.append(Use(found[0], found[1], where, numpy_only))

    def _inside_longer_chain(self, node) -> bool:
        parent = self.parent.get(node)
        if isinstance(parent, ast.Attribute):
            return True
        called = isinstance(parent, ast.Call) and parent.func is node
        return called and isinstance(self.parent.get(parent), ast.Attribute)

    def _record_getattr(self, call, scope, numpy_only, where):
        if len(call.args) < 2:
            return
        found = scope.chain(call.args[0])
        if found is None or len(call.args) > 2:  # a default: optional API, probed
            return
        names = self._strings(call.args[1], call)
        if names is None:
            self.unresolved.append(f"{where}: getattr({ast.unparse(call.args[0])}, {ast.unparse(call.args[1])})")
            return
        for name in names:
            self.uses.append(Use(found[0], found[1] + (name,), where, numpy_only))

    def _strings(self, node, at):
        """The strings ``node`` may hold at ``at`` (step 4's rules), or None when it cannot say."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return self._class_strings(node.attr) or None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            return self._dict_strings(node.value.id)
        if isinstance(node, ast.Name):
            return self._argument_strings(node.id, at)
        return None

    def _class_strings(self, attr) -> set:
        found = set()
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef):
                found |= {k.value.value for k in node.keywords if k.arg == attr and isinstance(k.value, ast.Constant)}
                for statement in node.body:
                    if (isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr
                                                                  for t in statement.targets)
                            and isinstance(statement.value, ast.Constant)):
                        found.add(statement.value.value)
        return {s for s in found if isinstance(s, str) and s}

    def _dict_strings(self, name):
        for statement in self.tree.body:
            if (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Dict)
                    and any(isinstance(t, ast.Name) and t.id == name for t in statement.targets)):
                values = statement.value.values
                if values and all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
                    return {v.value for v in values}
        return None

    def _argument_strings(self, name, at):
        """A parameter ``name`` of the function around ``at``: the strings its callers in this module pass."""
        function = self.parent.get(at)
        while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = self.parent.get(function)
        if function is None:
            return None
        positional = [a.arg for a in function.args.posonlyargs + function.args.args]
        calls = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and _called_name(n.func) == function.name]
        if name not in positional + [a.arg for a in function.args.kwonlyargs] or not calls:
            return None
        found = set()
        for call in calls:
            passed = [k.value for k in call.keywords if k.arg == name]
            index = positional.index(name) if name in positional else None
            if not passed and index is not None and index < len(call.args):
                passed = [call.args[index]]
            strings = self._strings(passed[0], call) if passed else None
            if strings is None:
                return None
            found |= strings
        return found


def discover(sources: dict) -> Discovery:
    """Steps 2-4 over ``{path: source}``."""
    trees, library = _parse_relevant(sources)
    uses, unresolved = [], []
    for path, tree in trees.items():
        module = _ModuleUses(library, path, tree)
        uses += module.uses
        unresolved += module.unresolved
    return Discovery(uses, unresolved, trees)


# ------------------------------------------------------------------------------- 5. checking on the installed modules


def resolve(base, chain) -> str:
    """'' when ``chain`` resolves on ``base`` (a module); else what is missing. Never calls anything."""
    obj, done = base, [base.__name__]
    for part in chain:
        if part == CALL:
            if not isinstance(obj, type):
                return ""  # a function's result: its type is not in the source, so the chain ends here
            done[-1] += CALL
            continue
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")  # a submodule CuPy loads lazily
            except (ImportError, AttributeError, TypeError):
                return f"{'.'.join(done)} has no attribute {part!r}"
        done.append(part)
    return ""


def missing_names(uses, cupy_modules: dict) -> list:
    """'where: name: what is missing' for each use that does not resolve (step 5)."""
    problems = []
    for use in uses:
        if use.kind == "cupy":
            bases = [cupy_modules[use.chain[0]]]
            chain = use.chain[1:]
        else:
            bases = [np] if use.numpy_only else [np, cupy_modules["cupy"]]
            chain = use.chain
        for base in bases:
            problem = resolve(base, chain)
            if problem:
                problems.append(f"{use.where}: {use.name()}: {problem}")
    return problems


def check_in_this_process() -> dict:
    """Step 5 for the library and for ``PLANTED``, on the ``cupy`` this process imports (the ``__main__`` below).

    Returns ``{"cupy": version, "library": [problem], "planted": [problem]}``, or ``{"cupy": None,
    "reason": why}`` when CuPy is not installed.
    """
    try:
        cupy = importlib.import_module("cupy")
    except ImportError as error:
        return {"cupy": None, "reason": f"CuPy is not installed ({error}): {INSTALL_HINT}"}
    modules = {"cupy": cupy, "cupyx": importlib.import_module("cupyx")}
    return {"cupy": cupy.__version__, "library": missing_names(discover(library_sources()).uses, modules),
            "planted": missing_names(discover({"planted.py": PLANTED}).uses, modules)}


# Where ``make test`` installs CuPy for this test alone: beside, not inside, the virtualenv's packages, because
# minigrad imports CuPy whenever it can, and every other test expects a CPU-only install (a GPU-less CuPy
# makes mg.accelerator answer "cuda", as a CUDA build of PyTorch does, not the CPU-only build they compare with).
CUPY_API_DIR = Path(os.environ.get("MINIGRAD_CUPY_API_DIR", ROOT / ".venv" / "cupy-api"))
INSTALL_HINT = "`make test` installs it into .venv/cupy-api, or pip install 'minigrad[gpu]'"


@pytest.fixture(scope="module")
def library():
    return discover(library_sources())


@pytest.fixture(scope="module")
def installed_check():
    """``check_in_this_process()`` run by a fresh Python that sees ``CUPY_API_DIR``; skips without CuPy."""
    path = os.pathsep.join(str(p) for p in (CUPY_API_DIR, ROOT, os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, "-m", "tests.minigrad.test_cupy_api_names"], cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the check could not run (importing CuPy failed?):\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout.splitlines()[-1])
    if report["cupy"] is None:
        pytest.skip(report["reason"])
    return report


def test_discovery_finds_cupy_and_array_module_names(library):
    """Every module that imports CuPy yields CuPy chains, and the xp-generic code yields array-module chains."""
    importing = {path for path, tree in library.trees.items() if any(_cupy_import_bindings(n) for n in ast.walk(tree))}
    with_chains = {use.where.rsplit(":", 1)[0] for use in library.uses if use.kind == "cupy"}
    assert importing and importing <= with_chains
    assert any(use.kind == "xp" for use in library.uses)


def test_every_getattr_on_cupy_or_an_array_module_is_resolved(library):
    assert library.unresolved == [], "add a resolution rule (step 4) for:\n" + "\n".join(library.unresolved)


def test_every_cupy_and_array_module_name_exists_in_the_installed_cupy_and_numpy(installed_check):
    assert installed_check["library"] == [], "\n".join(installed_check["library"])


PLANTED = '''
import numpy as np
try:
    import cupy as _cp
except ImportError:
    _cp = None


def _cupy():
    return _cp


class Node:
    xp = np


class Sine(Node, function="sine"):
    def compute(self, a):
        return getattr(self.xp, self.function)(a)


def count():
    return _cupy().cuda.runtime.getDeviceCont()


def device(i):
    _cp.cuda.Device(i).uze()


def gather(data):
    mod = get_array_module(data)
    return mod.take_along_axes(data, 0)


def scan(xp, name, a):
    return getattr(xp, name)(a)


def cumulative(xp, a):
    if xp is np:
        return xp.busday_count(a, a)  # NumPy only: CuPy has no busday_count, and must not be asked
    return scan(xp, "cumsun", a)


def lookup(xp, name):
    return getattr(xp, name)
'''


def test_a_planted_wrong_name_is_found(installed_check):
    problems = "\n".join(installed_check["planted"])
    for wrong in ("getDeviceCont", "'uze'", "take_along_axes", "'sine'", "'cumsun'"):
        assert wrong in problems, f"{wrong} not reported in:\n{problems}"
    assert "busday_count" not in problems
    line = PLANTED.splitlines().index("    return getattr(xp, name)") + 1
    assert discover({"planted.py": PLANTED}).unresolved == [f"planted.py:{line}: getattr(xp, name)"]


if __name__ == "__main__":  # the installed_check fixture's subprocess
    print(json.dumps(check_in_this_process()))
