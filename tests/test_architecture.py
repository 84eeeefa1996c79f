"""The core's shape: a flat kernel, no import circle, no private name taken from another
module.

The imports are read from the source (every ``import`` statement, at module level, in
functions and under ``TYPE_CHECKING``), so a circle hidden behind a function-level
import counts as much as one at the top of a file.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import chunking

ROOT = Path(chunking.__file__).resolve().parent
#: The kernel: the only modules that stay flat in ``chunking/``.
KERNEL = {"__init__", "model", "params", "config", "core", "units"}
MAX_FLAT_MODULES = 8


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    names: tuple[str, ...]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _absolute(module: str, path: Path, level: int, name: str | None) -> str:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def imports(known: dict[str, Path]) -> Iterator[Edge]:
    """Every import of one ``chunking`` module by another, with the names it takes."""
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in known:
                        yield Edge(module, alias.name, node.lineno, ())
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    target = _absolute(module, path, node.level, node.module)
                else:
                    target = node.module or ""
                if target not in known:
                    continue
                taken: list[str] = []
                for alias in node.names:
                    submodule = f"{target}.{alias.name}"
                    if submodule in known:  # ``from package import submodule``
                        yield Edge(module, submodule, node.lineno, ())
                    else:
                        taken.append(alias.name)
                if taken:
                    yield Edge(module, target, node.lineno, tuple(taken))


def circles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module, or with a self-import."""
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        graph.setdefault(edge.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def private_uses(known: dict[str, Path]) -> Iterator[str]:
    """``from other import _name`` and ``other_module._name`` across modules."""
    for edge in imports(known):
        for name in edge.names:
            if name.startswith("_") and not name.startswith("__"):
                yield f"{edge.source}:{edge.line} takes {name} from {edge.target}"
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in known:
                        aliases[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom):
                base = (
                    _absolute(module, path, node.level, node.module)
                    if node.level
                    else node.module or ""
                )
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in known:
                        aliases[alias.asname or alias.name] = full
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and aliases[node.value.id] != module
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                target = aliases[node.value.id]
                yield f"{module}:{node.lineno} uses {target}.{node.attr}"


def test_only_the_kernel_is_flat():
    flat = {p.stem for p in ROOT.glob("*.py")}
    assert len(flat) <= MAX_FLAT_MODULES
    assert flat <= KERNEL, f"modules outside the kernel belong in a subpackage: {flat - KERNEL}"


def test_no_import_circle():
    known = modules()
    found = circles(list(imports(known)))
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_no_module_takes_another_modules_private_names():
    found = list(private_uses(modules()))
    assert not found, "\n".join(found)


def test_the_checker_sees_a_circle_behind_a_function_level_import(tmp_path, monkeypatch):
    package = tmp_path / "chunking"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import thing\n_hidden = 1\n")
    (package / "b.py").write_text("def thing():\n    from .a import _hidden\n    return _hidden\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", package)
    known = modules()
    assert circles(list(imports(known))) == [["chunking.a", "chunking.b"]]
    assert list(private_uses(known)) == ["chunking.b:2 takes _hidden from chunking.a"]


@pytest.mark.parametrize("command", ["chunks", "evaluate", "llm", "models", "run"])
def test_only_the_command_line_imports_argparse(command):
    users = []
    for module, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        if "argparse" in names:
            users.append(module)
    assert all(m.startswith("chunking.cli") for m in users), users
    assert f"chunking.cli.{command}" in modules()
