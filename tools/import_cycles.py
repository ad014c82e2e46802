"""Fail on any import circle between Quire's modules, counting every first-party import:
those at the top of a module and those inside a function (import-linter's graph has both, but
its layers only forbid a way up; a circle inside one layer, or one held apart only by an import
inside a function, passes there). `make lint` and CI run it; tests/test_import_cycles.py too.

Usage: python tools/import_cycles.py [ROOT]   (exit 1 and each circle printed when one exists)
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path


def _modules(root: Path, packages: list[str]) -> dict[str, Path]:
    """Every module of the first-party packages, by dotted name (a package by its name)."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, but those under `if TYPE_CHECKING:` (never run)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                yield from _imports(child)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _imports(node)


def _targets(node: ast.Import | ast.ImportFrom, module: str, known: set[str]) -> set[str]:
    """The first-party modules an import statement loads (a name imported from a package is
    its submodule when there is one)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    base = node.module or ""
    if node.level:
        package = module.split(".")[: -node.level] if node.level else []
        base = ".".join([*package, *([base] if base else [])])
    found = set()
    for alias in node.names:
        name = f"{base}.{alias.name}"
        if name in known:
            found.add(name)
        elif base in known:
            found.add(base)
    return found


def import_graph(root: Path, packages: list[str]) -> dict[str, set[str]]:
    modules = _modules(root, packages)
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        edges = set()
        for node in _imports(tree):
            edges |= _targets(node, module, known)
        graph[module] = edges - {module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a long chain of imports never reaches Python's recursion limit.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _path_within(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """One circle through the group's first module, to show which imports make it."""
    members = set(group)
    start = group[0]
    trail = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node] & members):
            if target == start:
                return [*trail[node], start]
            if target not in trail:
                trail[target] = [*trail[node], target]
                queue.append(target)
    return group


def main(root: Path) -> int:
    config = tomllib.loads((root / "pyproject.toml").read_text())
    packages = config["tool"]["importlinter"]["root_packages"]
    graph = import_graph(root, packages)
    found = cycles(graph)
    for group in found:
        print("import circle: " + " -> ".join(_path_within(graph, group)))
    if found:
        print(f"{len(found)} import circle(s): move the shared piece down a layer instead.")
        return 1
    print(f"no import circle among {len(graph)} modules.")
    return 0


if __name__ == "__main__":
    sys.exit(
        main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    )
