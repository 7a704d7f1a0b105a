"""Helpers shared by the notebooks in this folder: graph pictures and launching MPI ranks.

The notebooks import this module from their own folder (Jupyter starts a
notebook's kernel there), so it is a plain file, not part of the package.
"""

from __future__ import annotations

import ast
import json
import shutil
import tempfile
from pathlib import Path

from minigrad import viz
from minigrad_dist.testing import run_script

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "scripts"
RESULT_PREFIX = "RESULT "
GRAPHVIZ_HINT = (
    "Graphviz's `dot` program is not installed, so here is the DOT text instead of a picture. "
    "Install Graphviz to see it drawn: `apt-get install graphviz` (Debian/Ubuntu), "
    "`brew install graphviz` (macOS) or `conda install -c conda-forge graphviz` "
    "(`pip install graphviz` installs only Python bindings, not the program), then rerun the cell; "
    "or paste the text into any Graphviz viewer."
)


def show_dot(dot_text: str) -> str:
    """Show a DOT graph in the notebook: drawn as SVG when Graphviz's ``dot`` is installed.

    Without Graphviz the DOT text is printed, followed by how to install it.

    Args:
        dot_text: a graph from ``minigrad.viz.to_dot`` or ``viz.dot_from_parts``.

    Returns:
        ``"svg"`` when a picture was shown, ``"text"`` when the DOT text was printed.

    Raises:
        RuntimeError: Graphviz is installed but rejected the text (its message included).
    """
    from IPython.display import SVG, display  # noqa: PLC0415  (only notebooks call this)

    if shutil.which("dot") is None:
        print(dot_text)
        print(GRAPHVIZ_HINT)
        return "text"
    with tempfile.TemporaryDirectory() as tmp:
        path = viz.render(dot_text, Path(tmp) / "graph.svg", format="svg")
        display(SVG(path.read_text()))
    return "svg"


def run_ranks(script: str, world_size: int, *args, timeout: float = 60.0):
    """Run ``scripts/<script>`` on ``world_size`` MPI ranks; return what rank 0 reported.

    The script reports by printing one line ``RESULT <json>``. ``mpiexec`` is
    the one next to this Python (the ``mpich`` wheel's); every rank is killed
    if the run takes longer than ``timeout`` seconds.

    Args:
        script: file name inside the ``scripts`` folder.
        world_size: number of ranks.
        args: command-line arguments for the script.
        timeout: seconds before the ranks are killed.

    Returns:
        The decoded JSON of the ``RESULT`` line (None if the script printed none).

    Raises:
        RuntimeError: the script exited with an error (the end of its output included).
        minigrad_dist.testing.PoolTimeout: it did not finish within ``timeout``.
    """
    out = run_script(SCRIPTS / script, world_size, args=args, timeout=timeout, cwd=HERE)
    if out.returncode != 0:
        raise RuntimeError(
            f"mpiexec -n {world_size} {script} exited with code {out.returncode}:\n{out.stdout[-4000:]}"
        )
    results = [line[len(RESULT_PREFIX):] for line in out.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    return json.loads(results[-1]) if results else None



def function_source(script: str, name: str) -> str:
    """The source text of the function ``name`` defined in ``scripts/<script>`` (at any depth).

    Raises:
        ValueError: the script defines no function, or several, of that name.
    """
    text = (SCRIPTS / script).read_text()
    found = [node for node in ast.walk(ast.parse(text)) if isinstance(node, ast.FunctionDef) and node.name == name]
    if len(found) != 1:
        raise ValueError(f"{script} defines {len(found)} functions named {name!r}, expected one")
    return ast.get_source_segment(text, found[0], padded=True)
