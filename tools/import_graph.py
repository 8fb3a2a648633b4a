"""Import cycles among Beacon's own modules (app/ and adapters/, or the folders given), read with `ast`.

Two graphs are built. The module-level one holds the imports that run when a module is imported (top level,
`try`, `if`, but not `if TYPE_CHECKING:`): a cycle there is an import-order bug waiting to happen. The
function-level one adds the deferred imports, those written inside functions or under `if TYPE_CHECKING:`: a
cycle that needs one is a cycle someone broke by deferring an import rather than by giving the shared part
its own module.

    .venv/bin/python tools/import_graph.py [--edges] [folder ...]

Prints the cycles (strongly connected components of two modules or more) of each graph and, with --edges,
the deferred imports that close each function-level cycle. Exits 1 when there is a module-level cycle.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FOLDERS = ("app", "adapters")
SKIP_DIRS = {"static", "__pycache__"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*.py")):
        if not SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
            yield path


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


Found = Iterator[tuple[ast.Import | ast.ImportFrom, bool]]


def imports(tree: ast.Module) -> Found:
    """Every import statement, with True when it is deferred (inside a function or under TYPE_CHECKING)."""

    def walk(node: ast.AST, deferred: bool) -> Found:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and is_type_checking(child.test):
                for sub in child.body:
                    yield from walk_one(sub, True)
                for sub in child.orelse:
                    yield from walk_one(sub, deferred)
                continue
            yield from walk_one(child, deferred)

    def walk_one(node: ast.AST, deferred: bool) -> Found:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, deferred
            return
        inner = deferred or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        yield from walk(node, inner)

    yield from walk(tree, False)


def targets(node: ast.Import | ast.ImportFrom, current: str, is_package: bool, known: set[str]) -> set[str]:
    """The project modules an import statement loads (the deepest known module of each dotted name)."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = current.split(".") if is_package else current.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, base] if base else package)
        names = [f"{base}.{alias.name}" for alias in node.names]
        # `from package import submodule` loads the submodule; the package itself counts only when a name
        # taken from it is not a submodule (a package's __init__ importing its submodules is no cycle).
        if any(name not in known for name in names):
            names.append(base)
    found = set()
    for name in names:
        parts = name.split(".")
        while parts and ".".join(parts) not in known:
            parts.pop()
        if parts:
            found.add(".".join(parts))
    found.discard(current)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of two nodes or more, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="*", default=list(DEFAULT_FOLDERS))
    parser.add_argument("--edges", action="store_true", help="show the in-function imports that close each cycle")
    args = parser.parse_args()

    files = {module_name(p): p for folder in args.folders for p in python_files(ROOT / folder)}
    known = set(files)
    module_level: dict[str, set[str]] = defaultdict(set)
    function_level: dict[str, set[str]] = defaultdict(set)
    deferred: dict[tuple[str, str], list[int]] = defaultdict(list)
    for name, path in files.items():
        tree = ast.parse(path.read_text(), str(path))
        for node, is_deferred in imports(tree):
            for target in targets(node, name, path.name == "__init__.py", known):
                function_level[name].add(target)
                if is_deferred:
                    deferred[(name, target)].append(node.lineno)
                else:
                    module_level[name].add(target)

    edges = sum(len(v) for v in function_level.values())
    print(f"{len(files)} modules, {edges} import edges ({len(deferred)} only deferred)")
    module_cycles = cycles(module_level)
    print(f"module-level cycles: {len(module_cycles)}")
    for component in module_cycles:
        print("  " + " <-> ".join(component))
    function_cycles = [c for c in cycles(function_level) if c not in module_cycles]
    print(f"function-level cycles (closed by imports inside functions or under TYPE_CHECKING): {len(function_cycles)}")
    for component in function_cycles:
        print("  " + " <-> ".join(component))
        if args.edges:
            members = set(component)
            for (source, target), lines in sorted(deferred.items()):
                if source in members and target in members:
                    where = ",".join(str(line) for line in lines)
                    print(f"      {source}:{where} -> {target}")
    return 1 if module_cycles else 0


if __name__ == "__main__":
    raise SystemExit(main())
