"""The import contract between the project's packages, checked on the source with ``ast``.

Three rules, over every ``.py`` file under ``safefs/``, ``agent/``, ``safefs_bench/`` and
``benchmarks/``:

1. **The core stands alone.** The core is every module of the ``safefs`` package outside the tool
   subpackages (``safefs.workspace``, ``safefs.mcp``, ``safefs.sandbox``, ``safefs.anthropic``,
   ``safefs.archive``, ``safefs.fsspec``, ``safefs.integrations``); ``safefs.testing`` is core. It
   imports only itself, the standard library and ``cffi``: never a tool subpackage, ``agent``, or
   another third-party package. So
   ``pip install safefs`` needs nothing else, and the tools can never become a dependency of the
   confinement they are built on.
2. **Private stays private.** A private module is one with a dotted component that starts with
   ``_`` (dunders such as ``__future__`` and ``__init__`` are not private). Its *owner* is the
   package named by the components before the first private one (``safefs`` for
   ``safefs._sys``, ``safefs.sandbox`` for ``safefs.sandbox._native``). A module may import it only
   when the owner is the importer's own package or one of its ancestors, and both lie in the same
   *unit*: the core counts as one unit, each tool subpackage of ``safefs`` is a unit of its own, and
   so are ``agent`` and ``benchmarks``. So ``agent.policy.rules`` may import ``agent._x``, but
   ``safefs.sandbox.linux`` may not import ``safefs._sys``: it asks ``safefs.capabilities()``.
   ``from pkg import _name`` counts as importing ``pkg._name`` whether ``_name`` is a module or
   another private name: either way it reaches into ``pkg``'s internals. The rule is about this
   project's packages: the standard library's underscores (``os._exit``) are its own.

3. **The safefs wheel stands without its neighbours.** No module of the ``safefs`` package, core or
   tool, imports ``agent`` or ``safefs_bench``: those are distributions of their own, built on
   safefs, and a plain ``pip install safefs`` has neither.

Imports are found wherever they stand (inside functions, ``try`` blocks and ``TYPE_CHECKING``
guards), relative imports are resolved against the importer's package, and
``importlib.import_module("...")`` / ``__import__("...")`` calls with a literal name count too.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHECKED_DIRS = ("safefs", "agent", "safefs_bench", "benchmarks")
# The distributions built on safefs, from their own pyproject.toml beside it.
NEIGHBOUR_DISTRIBUTIONS = frozenset({"agent", "safefs_bench"})
# Subpackages of safefs that are tools built on the core, not the core itself.
TOOL_SUBPACKAGES = frozenset(
    {"workspace", "mcp", "sandbox", "anthropic", "archive", "fsspec", "integrations", "upath"}
)
CORE_MAY_IMPORT_THIRD_PARTY = frozenset({"cffi"})
# Directories under the checked ones that hold build output, not source.
SKIPPED_PARTS = frozenset({"build", "__pycache__"})


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. safefs.sandbox.linux
    path: Path
    is_package: bool  # an __init__.py: its own package is itself

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]


@dataclass(frozen=True)
class Import:
    target: str  # the absolute dotted name imported
    line: int


@dataclass(frozen=True)
class Violation:
    path: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def modules(project: Path) -> Iterator[Module]:
    for top in CHECKED_DIRS:
        for path in sorted((project / top).rglob("*.py")):
            rel = path.relative_to(project)
            if SKIPPED_PARTS.intersection(rel.parts) or any(p.endswith(".egg-info") for p in rel.parts):
                continue
            parts = list(rel.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            yield Module(".".join(parts), path, is_package)


def _absolute(module: Module, level: int, name: str | None) -> str:
    """The absolute name of ``from <level dots><name> import ...`` written in ``module``."""
    if level == 0:
        return name or ""
    base = module.package.split(".")
    if level > 1:
        base = base[: -(level - 1)]
    return ".".join([*base, name] if name else base)


def _literal_import_call(module: Module, node: ast.Call) -> str | None:
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if called not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None  # a computed name cannot be checked here
    name = first.value
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    # import_module(".x", package): relative to the package given, usually __package__ (this one).
    anchor = node.args[1] if len(node.args) > 1 else None
    if isinstance(anchor, ast.Constant) and isinstance(anchor.value, str):
        anchor_module = Module(anchor.value, module.path, is_package=True)
        return _absolute(anchor_module, level, name.lstrip(".") or None)
    return _absolute(module, level, name.lstrip(".") or None)


def imports(module: Module) -> Iterator[Import]:
    tree = ast.parse(module.path.read_bytes(), filename=str(module.path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(module, node.level, node.module)
            for alias in node.names:
                # ``from pkg import _sys`` imports pkg._sys; ``from pkg.mod import name`` reaches
                # into pkg.mod.name, which is private if ``name`` is.
                target = source if alias.name == "*" else f"{source}.{alias.name}"
                yield Import(target, node.lineno)
        elif isinstance(node, ast.Call):
            called = _literal_import_call(module, node)
            if called is not None:
                yield Import(called, node.lineno)


def unit(name: str) -> str:
    """The unit a module or package belongs to: the core, a tool subpackage, or a top package."""
    parts = name.split(".")
    if parts[0] == "safefs" and len(parts) > 1 and parts[1] in TOOL_SUBPACKAGES:
        return ".".join(parts[:2])
    return parts[0]


def is_core(name: str) -> bool:
    return unit(name) == "safefs"


def _is_private(component: str) -> bool:
    return component.startswith("_") and not (component.startswith("__") and component.endswith("__"))


def private_owner(target: str) -> str | None:
    """The package whose internals ``target`` reaches into, or None for a public name."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if _is_private(part):
            return ".".join(parts[:i])
    return None


def _within(package: str, ancestor: str) -> bool:
    return package == ancestor or package.startswith(ancestor + ".")


def core_violation(module: Module, target: str) -> str | None:
    if not is_core(module.name):
        return None
    top = target.split(".")[0]
    if top == "safefs":
        return None if is_core(target) else f"the core imports {target}, a tool built on it"
    if top in NEIGHBOUR_DISTRIBUTIONS:
        return None  # neighbour_violation reports it
    if top in sys.stdlib_module_names or top in CORE_MAY_IMPORT_THIRD_PARTY:
        return None
    return f"the core imports {target}, a third-party package other than cffi"


def neighbour_violation(module: Module, target: str) -> str | None:
    if module.name.split(".")[0] != "safefs":
        return None
    top = target.split(".")[0]
    if top in NEIGHBOUR_DISTRIBUTIONS:
        return f"{module.name} imports {target}, of the {top} distribution built on safefs"
    return None


def private_violation(module: Module, target: str) -> str | None:
    # The standard library's and third parties' underscores (os._exit, sys._getframe) are their
    # own conventions; the contract is about this project's packages.
    if target.split(".")[0] not in CHECKED_DIRS:
        return None
    owner = private_owner(target)
    if owner is None:
        return None
    if _within(module.package, owner) and unit(module.name) == unit(owner):
        return None
    return f"{module.name} imports {target}, private to {owner}"


def check(project: Path) -> tuple[list[Module], list[Violation]]:
    """Every checked module, and every broken rule with the file and line that breaks it."""
    found = list(modules(project))
    violations: list[Violation] = []
    for module in found:
        for imported in imports(module):
            for rule in (core_violation, neighbour_violation, private_violation):
                message = rule(module, imported.target)
                if message:
                    rel = module.path.relative_to(project)
                    violations.append(Violation(rel, imported.line, message))
    return found, violations
