"""The teaching notebooks in examples/notebooks run top to bottom, and their cells' assertions hold.

Each notebook is executed headless with nbclient on a fresh python3 kernel
(ipykernel) started in the notebook's folder, as Jupyter would. A cell that
raises (a failed ``assert`` included) fails the test with the cell's source
and traceback.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "examples" / "notebooks"
sys.path.insert(0, str(NOTEBOOKS))

import build  # noqa: E402  (examples/notebooks/build.py: the notebooks' generator)
import notebook_helpers  # noqa: E402

NAMES = [
    "01_autograd_from_scratch",
    "02_ddp_buckets_hooks_overlap",
    "03_distributed_autograd",
    "04_property_testing_distributed_gradients",
    "05_sharded_data_parallel",
    "06_tensor_parallel",
    "07_pipeline_schedules",
]
CELL_TIMEOUT_S = 150
# Each notebook takes well under a minute alone; this bounds a slow, busy machine.
NOTEBOOK_BUDGET_S = 150
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def execute(notebook, cwd: Path):
    """Run every cell of ``notebook`` in place on a new python3 kernel whose working directory is ``cwd``."""
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=CELL_TIMEOUT_S,
        resources={"metadata": {"path": str(cwd)}},
        # The kernel warns on every start that it talks over local TCP; that is expected here.
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
    )
    client.execute()
    return notebook


def outputs_of(notebook) -> list:
    """Every output of every code cell, flattened."""
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]


def text_of(notebook) -> str:
    """All stream and plain-text output of a notebook."""
    parts = []
    for output in outputs_of(notebook):
        if output.output_type == "stream":
            parts.append(output.text)
        elif "data" in output:
            parts.append(output.array.get("text/plain", ""))
    return "".join(parts)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.timeout(NOTEBOOK_BUDGET_S + 60)
def test_notebook_runs_top_to_bottom(name):
    path = NOTEBOOKS / f"{name}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    start = time.monotonic()
    try:
        execute(notebook, NOTEBOOKS)
    except CellExecutionError as error:
        pytest.fail(f"{path.name}: a cell failed\n{ANSI.sub('', str(error))}", pytrace=False)
    elapsed = time.monotonic() - start
    assert elapsed < NOTEBOOK_BUDGET_S, f"{path.name} took {elapsed:.0f} s; keep each notebook under a minute"
    errors = [o for o in outputs_of(notebook) if o.output_type == "error"]
    assert not errors, f"{path.name} has error outputs: {errors}"
    if shutil.which("dot") and name in ("01_autograd_from_scratch", "03_distributed_autograd"):
        assert any("image/svg+xml" in o.get("data", {}) for o in outputs_of(notebook)), "graphs must show as SVG"


def test_a_failing_assertion_in_a_cell_fails_the_run(tmp_path):
    """The mechanism the notebooks rely on: an assert that does not hold stops execution with an error."""
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("value = 41"),
        nbformat.v4.new_code_cell("assert value == 42, f'expected 42, got {value}'"),
        nbformat.v4.new_code_cell("print('never reached')"),
    ])
    with pytest.raises(CellExecutionError, match="expected 42, got 41"):
        execute(notebook, tmp_path)
    assert not notebook.cells[2].outputs


def test_notebooks_match_their_sources():
    """The .ipynb files are built from sources/*.py; editing one without rebuilding is caught here."""
    sources = build.sources()
    assert [s.stem for s in sources] == NAMES
    for source in sources:
        committed = nbformat.read(build.notebook_path(source), as_version=4)
        assert build.cells_of(committed) == build.cells_of(build.build_notebook(source)), (
            f"{source.stem}.ipynb differs from sources/{source.name}: run python examples/notebooks/build.py"
        )


def test_percent_format_parser_splits_cells_and_strips_markdown_comments():
    text = '"""Docstring, not a cell."""\n\n# %% [markdown]\n# # Title\n#\n# Some *text*.\n\n# %%\nx = 1\n\n\n# %%\n\n'
    assert build.parse_cells(text) == [("markdown", "# Title\n\nSome *text*."), ("code", "x = 1")]
    with pytest.raises(ValueError, match="no cell marker"):
        build.parse_cells("x = 1\n")
    with pytest.raises(ValueError, match="line 3: a markdown cell holds only comment lines"):
        build.parse_cells("# %% [markdown]\n# fine\nnot a comment\n")


def test_show_dot_prints_the_text_and_how_to_install_graphviz_without_it(monkeypatch, capsys):
    monkeypatch.setattr(notebook_helpers.shutil, "which", lambda name: None)
    dot = "digraph autograd {\n  n0 -> n1;\n}\n"
    assert notebook_helpers.show_dot(dot) == "text"
    printed = capsys.readouterr().out
    assert dot in printed and "apt-get install graphviz" in printed


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot program")
def test_show_dot_displays_svg_with_graphviz(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    assert notebook_helpers.show_dot("digraph g {\n  a -> b;\n}\n") == "svg"
    assert len(shown) == 1 and "<svg" in shown[0].array


def test_function_source_finds_functions_at_any_depth_of_a_script():
    text = notebook_helpers.function_source("ddp_events.py", "recording_hook")  # nested in main()
    assert text.lstrip().startswith("def recording_hook(state, bucket):") and "allreduce_hook" in text
    with pytest.raises(ValueError, match="defines 0 functions named 'nowhere', expected one"):
        notebook_helpers.function_source("ddp_events.py", "nowhere")
