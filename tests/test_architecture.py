"""The package's layout is its architecture: data flows one way, and no import goes in a circle.

Every import statement of every module counts: at the top, inside functions (lazy imports) and
under ``if TYPE_CHECKING``. The graph is read from the source with :mod:`ast` rather than with
import-linter: grimp, its graph builder, walks the directory of ``evalwh`` and so misses
``evalwh.cli``, which ``pyproject.toml`` maps in from ``cli/`` (``package-dir``).

``from P import name`` is an import of ``P.name`` where that is a module, else of ``P``;
importing a module is not counted as importing its parent packages (as import-linter counts),
so the lazy front door in ``evalwh/__init__.py`` may name everything while nothing inside the
package imports the front door.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = {"evalwh": ROOT / "evalwh", "evalwh.cli": ROOT / "cli"}

# Each module belongs to one layer; a layer may import only the layers listed for it. This is
# the "May import" line of every package's docstring, made executable.
FOUNDATION = {"evalwh.errors", "evalwh.sql", "evalwh._version"}
FRONT_DOOR = {"evalwh.warehouse", "evalwh.api", "evalwh.ir_measures"}  # (ir_measures: the provider door)
ALLOWED = {
    "foundation": {"foundation"},
    "io": {"foundation", "io"},
    "store": {"foundation", "io", "store"},
    "measures": {"foundation", "io", "store", "measures"},
    "stats": {"foundation", "stats"},
    "methods": {"foundation", "io", "store", "measures", "stats", "methods"},
    "spark": {"foundation", "io", "store", "measures", "spark"},
    "present": {"foundation", "io", "store", "measures", "stats", "methods", "present"},
    "front door": {"foundation", "io", "store", "measures", "stats", "methods", "spark", "present", "front door"},
    "evalwh": {"foundation", "front door"},
    "cli": {"foundation", "io", "store", "measures", "stats", "methods", "spark", "present", "front door", "evalwh", "cli"},
}
MAX_TOP_LEVEL_MODULES = 8
MAX_LINES = 800


def modules() -> dict[str, Path]:
    """Every module of the installed package, by dotted name, from the source tree."""
    found: dict[str, Path] = {}
    for package, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's own modules that ``name`` imports, in any statement anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    out.add(f"{source}.{alias.name}")
                elif source in known:
                    out.add(source)
    out.discard(name)
    return out


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def layer(module: str) -> str:
    if module in FOUNDATION:
        return "foundation"
    if module in FRONT_DOOR:
        return "front door"
    if module in ("evalwh", "evalwh.__main__") or module.startswith("evalwh.cli"):
        return "evalwh" if module == "evalwh" else "cli"
    part = module.split(".")[1]
    if part not in ALLOWED:
        raise AssertionError(f"{module} belongs to no layer: add its package to ALLOWED")
    return part


def test_no_import_cycle() -> None:
    sorter = graphlib.TopologicalSorter(graph())
    try:
        sorter.prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")


def test_data_flows_one_way() -> None:
    wrong = sorted(
        f"{module} ({layer(module)}) imports {target} ({layer(target)})"
        for module, targets in graph().items()
        for target in targets
        if layer(target) not in ALLOWED[layer(module)]
    )
    assert not wrong, "\n".join(wrong)


def test_the_cycle_check_finds_a_cycle(tmp_path: Path) -> None:
    """The checks see lazy imports: one inside a function closes a circle."""
    g = graph()
    assert "evalwh.store.connection" in g["evalwh.store.ingest"]
    g["evalwh.io.formats"] = g["evalwh.io.formats"] | {"evalwh.store.ingest"}
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(g).prepare()
    # (and the import below, inside a function, is seen as io importing store)
    path = tmp_path / "probe.py"
    path.write_text("def f():\n    from evalwh.store import ingest\n")
    assert imports("evalwh.io.probe", path, set(g)) == {"evalwh.store.ingest"}


def test_every_package_says_what_it_owns_and_may_import() -> None:
    for name, path in modules().items():
        if path.name != "__init__.py" or name.startswith("evalwh.cli") or name == "evalwh":
            continue
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        assert doc, f"{path}: a package opens with a docstring saying what it owns"
        assert "May import" in doc, f"{path}: say what the package may import"


def test_few_modules_at_the_top_and_no_long_file() -> None:
    top = sorted(p.name for p in (ROOT / "evalwh").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    long = sorted(
        f"{path.relative_to(ROOT)}: {n} lines"
        for path in modules().values()
        if (n := len(path.read_text().splitlines())) > MAX_LINES
    )
    assert not long, long
