"""No import cycle between ckb's subpackages (README "Design": dependencies point one way).

Every module under ``src/ckb`` is parsed with :mod:`ast`; its edges are its imports (top level or inside
functions, absolute or relative) and every string constant that names a ckb module (``"ckb.x.y"`` or
``"ckb.x.y:attr"``, the form registries and ``importlib.import_module`` use), so an import hidden in a
string counts too. A node is a subpackage or top-level module of ckb (``ckb.runner``, ``ckb.cli``); the
root ``ckb/__init__.py`` (the lazy facade) is left out. The graph of these nodes must be acyclic.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ckb"
_MODULE_STRING = re.compile(r"^ckb(\.[A-Za-z_]\w*)+(:[A-Za-z_]\w*)?$")


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (SRC / rel).with_suffix(".py").exists() or (SRC / rel / "__init__.py").exists()


def _targets(source: str, package: str) -> set[str]:
    """The ckb modules a module of ``package`` with this ``source`` names: its imports (anywhere in it) and
    its module-path string constants."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names)  # `from ckb import runner`
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _MODULE_STRING.match(node.value)
        ):
            out.add(node.value.split(":")[0])
    return {m for m in out if m.startswith("ckb.") and _exists(m)}


def _node(module: str) -> str | None:
    """``ckb.runner.sweep`` -> ``ckb.runner``; the root package -> None."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else None


def subpackage_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        src = _node(_module_name(path))
        if src is None:
            continue
        edges = graph.setdefault(src, set())
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = _targets(path.read_text(), package)
        edges.update(n for m in targets if (n := _node(m)) not in (None, src))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_sees_imports_in_functions_and_strings():
    source = (
        'KINDS = {"x": "ckb.multiagent.spec:MultiAgentSpec"}\n'
        "def f():\n    import ckb.policies\n    from ..problems import domain\n"
        'NOT_A_MODULE = "ckb.nothing.here"\n'
    )
    assert _targets(source, "ckb.runner") == {
        "ckb.multiagent.spec",
        "ckb.policies",
        "ckb.problems",
        "ckb.problems.domain",
    }
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(g) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    graph = subpackage_graph()
    assert {"ckb.runner", "ckb.experiments", "ckb.multiagent", "ckb.cli"} <= set(graph)
    assert "ckb.policies" in graph["ckb.runner"]  # runner/trial.py imports ckb.policies
    assert "ckb.multiagent" in graph["ckb.experiments"]  # the top imports the kinds


def test_no_import_cycle_between_subpackages():
    found = cycles(subpackage_graph())
    assert found == [], f"import cycles between ckb's subpackages: {found}"
