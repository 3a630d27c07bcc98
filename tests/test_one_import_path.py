"""One import path per name: a zeroopt module lists in ``__all__`` only what it defines, and no module of the tree
imports a name from a zeroopt module that only imported it (the package's ``__init__`` files excepted: the
top level is the short path)."""

from __future__ import annotations

import ast
from pathlib import Path

from test_architecture import ROOT, _module_name, imports_in


def defined_names(source: str) -> set[str]:
    """The names a module's top level binds itself: functions, classes, assignments (also under ``if``/``try``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _zeroopt_modules() -> dict[str, set[str]]:
    return {_module_name(p): defined_names(p.read_text()) for p in (ROOT / "zeroopt").rglob("*.py")
            if p.name != "__init__.py"}


def _exported(source: str) -> list[str]:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [e.value for e in node.value.elts]  # type: ignore[attr-defined]
    return []


def reexports(modules: dict[str, str]) -> list[str]:
    """``module: name`` for each name a module's ``__all__`` lists without defining it."""
    return [f"{m}: {n}" for m, src in modules.items() for n in _exported(src) if n not in defined_names(src)]


def test_the_check_sees_a_reexport() -> None:
    assert reexports({"zeroopt.x": "from .y import A\ndef b(): pass\n__all__ = ['A', 'b']\n"}) == ["zeroopt.x: A"]


def test_no_zeroopt_module_reexports_a_name() -> None:
    sources = {_module_name(p): p.read_text() for p in (ROOT / "zeroopt").rglob("*.py") if p.name != "__init__.py"}
    assert not reexports(sources)


def test_every_import_from_a_zeroopt_module_names_what_it_defines() -> None:
    defined = _zeroopt_modules()
    bad = []
    for package in ("zeroopt", "theory", "applications", "benchmarks", "tests"):
        for path in sorted((ROOT / package).rglob("*.py")):
            found = imports_in(path.read_text(), _module_name(path), is_package=path.name == "__init__.py",
                               names=True)
            for line, dotted in found:
                module, _, name = dotted.rpartition(".")
                if module in defined and name not in defined[module] and f"{module}.{name}" not in defined:
                    bad.append(f"{Path(path).relative_to(ROOT)}:{line} imports {name} from {module}")
    assert not bad, "a name imported from a module that does not define it:\n" + "\n".join(bad)
