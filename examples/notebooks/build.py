"""Build the notebooks of this folder from their sources in ``sources/``.

    python examples/notebooks/build.py            # write every NN_name.ipynb
    python examples/notebooks/build.py --check    # exit 1 if a notebook differs from its source

A source is a Python file in the "percent" format (the one jupytext and
VS Code read): a line ``# %%`` starts a code cell, ``# %% [markdown]`` a
markdown cell whose lines are comments (``# `` is stripped). Lines before
the first marker (a module docstring) are not part of the notebook.
Notebooks are written without outputs and with stable cell ids, so a
rebuild of an unchanged source gives the same file.

Why sources at all: plain Python diffs and reviews well and ruff lints it;
the ``.ipynb`` files are what readers open. Edit the source, then rebuild;
``tests/test_notebooks.py`` fails when a notebook's cells drifted from its source.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "sources"
CODE_MARKER = "# %%"
MARKDOWN_MARKER = "# %% [markdown]"
KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}


def parse_cells(text: str) -> list:
    """``[(kind, source)]`` of a percent-format file; ``kind`` is ``"code"`` or ``"markdown"``.

    Raises:
        ValueError: the file has no cell marker, or a markdown line is not a comment.
    """
    cells, kind, lines = [], None, []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.rstrip()
        if stripped in (CODE_MARKER, MARKDOWN_MARKER):
            if kind is not None:
                cells.append((kind, _cell_source(kind, lines)))
            kind, lines = ("markdown" if stripped == MARKDOWN_MARKER else "code"), []
        elif kind == "markdown" and stripped and not stripped.startswith("#"):
            raise ValueError(f"line {number}: a markdown cell holds only comment lines, got {line!r}")
        elif kind is not None:
            lines.append(line)
    if kind is None:
        raise ValueError(f"no cell marker ({CODE_MARKER!r} or {MARKDOWN_MARKER!r}) found")
    cells.append((kind, _cell_source(kind, lines)))
    return [(k, s) for k, s in cells if s]


def _cell_source(kind: str, lines: list) -> str:
    if kind == "markdown":
        lines = [line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines]
    return "\n".join(lines).strip("\n")


def build_notebook(source: Path) -> nbformat.NotebookNode:
    """The notebook of one source file (no outputs, cell ids ``c00``, ``c01``, ...)."""
    cells = []
    for i, (kind, text) in enumerate(parse_cells(source.read_text())):
        make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
        cells.append(make(text, id=f"c{i:02d}"))
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    nbformat.validate(notebook)
    return notebook


def notebook_path(source: Path) -> Path:
    """Where the notebook of ``source`` lives (this folder, same stem)."""
    return HERE / (source.stem + ".ipynb")


def sources() -> list:
    """The source files, in order."""
    return sorted(SOURCES.glob("[0-9][0-9]_*.py"))


def cells_of(notebook) -> list:
    """``[(cell type, source)]``: what must match between a notebook and its source."""
    return [(cell.cell_type, cell.source) for cell in notebook.cells]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
    args = parser.parse_args(argv)
    stale = []
    for source in sources():
        built = build_notebook(source)
        target = notebook_path(source)
        if args.check:
            current = nbformat.read(target, as_version=4) if target.exists() else None
            if current is None or cells_of(current) != cells_of(built):
                stale.append(target.name)
        else:
            nbformat.write(built, target)
            print(f"wrote {target.relative_to(HERE.parent.parent)}")
    if stale:
        print(f"out of date with sources/: {', '.join(stale)}; run python examples/notebooks/build.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
