"""Print the shape of app/: floors of the domain tower, sizes, and the longest functions.

    .venv/bin/python benchmarks/layout.py

A *floor* is a package's height in the graph of imports between app's packages: a package
that imports no other package of app is on floor 1, and one that imports packages of floors up
to n is on floor n + 1. Counted twice: over whole packages (faces included) and over the cores
only (a module is a face when its own name, or a parent package's, is one of FACE_NAMES).
Cycles, if any, are reported instead of floors.
"""

from __future__ import annotations

import ast
import statistics
from collections.abc import Iterable
from pathlib import Path

import grimp

APP = Path(__file__).resolve().parent.parent / "app"
FACE_NAMES = {"api", "web", "deps", "forms", "pages", "flows", "tasks"}


def is_face(module: str) -> bool:
    """True for a module of a domain's face tier (api, web, deps, forms, pages, flows)."""
    return any(part in FACE_NAMES for part in module.split(".")[2:])


def package_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def package_edges(graph: grimp.ImportGraph, *, cores_only: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        if not module.startswith("app.") or (cores_only and is_face(module)):
            continue
        source = package_of(module)
        edges.setdefault(source, set())
        for imported in graph.find_modules_directly_imported_by(module):
            if not imported.startswith("app."):
                continue
            target = package_of(imported)
            if target != source and target != "app.__init__":
                edges[source].add(target)
    return edges


def floors(edges: dict[str, set[str]]) -> dict[str, int] | list[str]:
    """Each package's floor, or the packages left on a cycle."""
    result: dict[str, int] = {}
    pending = dict(edges)
    while pending:
        ready = [p for p, deps in pending.items() if all(d in result for d in deps)]
        if not ready:
            return sorted(pending)
        for package in ready:
            result[package] = 1 + max(
                (result[d] for d in pending[package] if d in result), default=0
            )
            del pending[package]
    return result


def functions(paths: Iterable[Path]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for path in paths:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                found.append((length, f"{path.relative_to(APP.parent)}:{node.name}"))
    return found


def main() -> None:
    graph = grimp.build_graph("app")
    for label, cores_only in (("whole packages", False), ("cores only", True)):
        result = floors(package_edges(graph, cores_only=cores_only))
        if isinstance(result, list):
            print(f"floors ({label}): cycle among {', '.join(result)}")
            continue
        print(f"floors ({label}): {max(result.values())}")
        by_floor: dict[int, list[str]] = {}
        for package, floor in result.items():
            by_floor.setdefault(floor, []).append(package.removeprefix("app."))
        for floor in sorted(by_floor):
            print(f"  {floor:2d}: {' '.join(sorted(by_floor[floor]))}")
    paths = sorted(APP.rglob("*.py"))
    sizes = sorted(((len(p.read_text().splitlines()), p) for p in paths), reverse=True)
    print(
        f"modules: {len(paths)}; largest: "
        + ", ".join(f"{p.relative_to(APP.parent)} {n}" for n, p in sizes[:3])
    )
    lengths = functions(paths)
    print(f"functions: {len(lengths)}; median {statistics.median(n for n, _ in lengths):.0f} lines")
    for length, name in sorted(lengths, reverse=True)[:8]:
        print(f"  {length:4d}  {name}")


if __name__ == "__main__":
    main()
