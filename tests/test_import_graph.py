"""No two modules of mcpreel import each other, directly or around a circle.

The graph is read from the source with :mod:`ast` (nothing is imported): every ``import`` and
``from ... import`` anywhere in a module -- at module level, inside functions, under ``TYPE_CHECKING``
-- is an edge, because a circle hidden in a function is still a seam pointing the wrong way. An edge goes
to the module named; ``from package import name`` goes to the submodule when ``name`` is one; and
importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``, so those packages are edges too
(except the importer's own packages, which Python has already started). A strongly connected component
of more than one module is a circle, and the test names it with the edges that close it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "mcpreel"


def _modules(root: Path = SRC) -> dict[str, tuple[Path, bool]]:
    """Dotted module name -> (file, is a package)."""
    found = {}
    for path in (root / PACKAGE).rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def _known(name: str, modules: dict[str, tuple[Path, bool]]) -> str | None:
    """The longest prefix of ``name`` that is one of our modules (``mcpreel.x.Y`` -> ``mcpreel.x``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom,
             modules: dict[str, tuple[Path, bool]]) -> set[str]:
    out: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == PACKAGE and (hit := _known(alias.name, modules)):
                out.add(hit)
        return out
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        where = ".".join(base + ([node.module] if node.module else []))
    else:
        where = node.module or ""
    if where.split(".")[0] != PACKAGE:
        return out
    for alias in node.names:
        sub = f"{where}.{alias.name}"
        hit = sub if sub in modules else _known(where, modules)
        if hit:
            out.add(hit)
    return out


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    """Each module of mcpreel -> the modules of mcpreel it imports (anywhere in its text)."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges |= _targets(name, is_package, node, modules)
        own = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 2)}
        for target in list(edges):  # importing a.b.c runs a.b's __init__ first
            parts = target.split(".")
            for k in range(2, len(parts)):
                package = ".".join(parts[:k])
                if package not in own and package in modules:
                    edges.add(package)
        edges.discard(name)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(component: list[str], graph: dict[str, set[str]]) -> str:
    members = set(component)
    edges = "; ".join(f"{m} -> {', '.join(sorted(graph[m] & members))}" for m in component)
    return f"{len(component)} modules import each other: {edges}"


def test_the_graph_sees_imports_at_module_level_inside_functions_and_through_packages(tmp_path):
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from mcpreel import b\n")
    (pkg / "b.py").write_text("def f():\n    from mcpreel.a import thing\n")
    (pkg / "sub" / "__init__.py").write_text("from mcpreel.c import x\n")
    (pkg / "sub" / "leaf.py").write_text("from . import sibling\n")
    (pkg / "sub" / "sibling.py").write_text("")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mcpreel.sub.leaf\n")
    graph = import_graph(tmp_path)
    assert graph["mcpreel.a"] == {"mcpreel.b"}
    assert graph["mcpreel.b"] == {"mcpreel.a"}  # inside a function
    assert graph["mcpreel.sub.leaf"] == {"mcpreel.sub.sibling"}  # relative; its own package is no edge
    assert graph["mcpreel.c"] == {"mcpreel.sub.leaf", "mcpreel.sub"}  # the package that runs first
    assert sorted(map(tuple, circles(graph))) == [("mcpreel.a", "mcpreel.b"), ("mcpreel.c", "mcpreel.sub")]


def test_a_graph_without_a_circle_has_none():
    assert circles({"x": {"y"}, "y": {"z"}, "z": set()}) == []
    assert circles({"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": {"x"}}) == [["x", "y", "z"]]


def test_no_two_modules_import_each_other():
    graph = import_graph()
    assert len(graph) > 150  # the whole package was read
    found = circles(graph)
    assert not found, "\n".join(_describe(c, graph) for c in found)


#: seams that point one way: (importer prefix, imported prefix, why) that must have no edge
ONE_WAY = [
    ("mcpreel.mock", "mcpreel.rules", "rules plug into the mock through its seam (Mock.connection_factory)"),
    ("mcpreel.formats", "mcpreel.redact", "readers sit below redact (they use _infra.credentials)"),
    ("mcpreel.formats", "mcpreel.convert", "readers sit below convert"),
    ("mcpreel.record", "mcpreel.rules", "rules plug into the recorders through the intercept seam"),
    ("mcpreel.intercept", "mcpreel.", "the intercept seam is the lowest layer: recorders, rules and the control "
                                      "server all import it"),
]

#: the one module of a host that may know its addons: where a recording's addons are assembled from its options
#: (``record.addons.default_addons``, issue 27) -- the recorders themselves still never import them
ASSEMBLY = {"mcpreel.record.addons"}


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@pytest.mark.parametrize(("host", "addon", "why"), ONE_WAY, ids=[f"{h}-x-{a}" for h, a, _ in ONE_WAY])
def test_seams_point_one_way(host, addon, why):
    graph = import_graph()
    wrong = sorted(f"{m} -> {t}" for m, targets in graph.items() if _under(m, host) and m not in ASSEMBLY
                   for t in targets if _under(t, addon) or (addon.endswith(".") and t.startswith(addon)))
    assert not wrong, f"{why}: " + "; ".join(wrong)


def test_sniffing_imports_no_reader():
    """The sniffer asks each reader through the format table: it imports the table, never a reader."""
    graph = import_graph()
    readers = {m for m in graph if m.startswith("mcpreel.formats.") and not m.rsplit(".", 1)[1].startswith("_")}
    assert graph["mcpreel.formats.sniff"] & readers == {"mcpreel.formats.table"}
