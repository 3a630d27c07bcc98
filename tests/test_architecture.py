"""The tree's shape, checked from its source: layers, zeroopt's own dependencies, file sizes, a bare import.

The four packages are layered ``zeroopt < theory < applications < benchmarks``: a module imports only from its
own package or one below it, so the optimiser installs and imports without the attack's frameworks and the
studies can be moved or dropped without touching what they measure. Imports are read with :mod:`ast` from every
module, including those inside functions and under ``if TYPE_CHECKING:``, since a lazy import is still a
dependency.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("zeroopt", "theory", "applications", "benchmarks")
# What zeroopt may import besides itself: the standard library and its two numeric dependencies
# (array_api_compat is the array-namespace adapter, used only where it is installed).
ZEROOPT_THIRD_PARTY = {"numpy", "scipy", "array_api_compat"}
MAX_LINES = 400
# Frameworks that come with the `attack` extra; `import zeroopt` must work without every one of them.
ATTACK_EXTRA_MODULES = ("torch", "lightgbm", "sklearn", "matplotlib", "click", "tqdm", "threadpoolctl", "PIL")


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module the file at ``path`` imports, as ``(line, absolute dotted name)``."""
    return imports_in(path.read_text(), _module_name(path), is_package=path.name == "__init__.py")


def imports_in(source: str, module: str, *, is_package: bool = False, names: bool = False) -> list[tuple[int, str]]:
    """Every module ``source`` (the text of ``module``) imports, anywhere in it; relative imports resolved.

    With ``names``, ``from X import a`` gives ``X.a`` (a module of X, or a name defined in X) for each name.
    """
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found += ([(node.lineno, f"{target}.{alias.name}") for alias in node.names] if names
                      else [(node.lineno, target)])
    return found


def test_the_walker_sees_lazy_relative_and_type_checking_imports() -> None:
    source = ("from typing import TYPE_CHECKING\nfrom .oracle import Oracle\nfrom .. import theory\n"
              "if TYPE_CHECKING:\n    import torch\ndef f():\n    from sklearn.tree import DecisionTreeClassifier\n")
    targets = sorted(t for _, t in imports_in(source, "zeroopt.sub.mod"))
    assert targets == ["sklearn.tree", "torch", "typing", "zeroopt", "zeroopt.sub.oracle"]


@pytest.mark.parametrize("package", LAYERS)
def test_no_upward_import(package: str) -> None:
    rank = LAYERS.index(package)
    above = set(LAYERS[rank + 1:])
    bad = [f"{path.relative_to(ROOT)}:{line} imports {target}"
           for path in _modules(package) for line, target in imported_modules(path)
           if target.split(".")[0] in above]
    assert not bad, "imports from a higher layer:\n" + "\n".join(bad)


def test_zeroopt_needs_only_numpy_scipy_and_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | ZEROOPT_THIRD_PARTY | {"zeroopt"}
    bad = [f"{path.relative_to(ROOT)}:{line} imports {target}"
           for path in _modules("zeroopt") for line, target in imported_modules(path)
           if target.split(".")[0] not in allowed]
    assert not bad, "zeroopt imports outside numpy, scipy and the standard library:\n" + "\n".join(bad)


def test_no_python_file_over_400_lines() -> None:
    long = [f"{path.relative_to(ROOT)}: {n} lines"
            for package in (*LAYERS, "tests") for path in _modules(package)
            if (n := len(path.read_text().splitlines())) > MAX_LINES]
    assert not long, f"split these into modules with one job each (at most {MAX_LINES} lines):\n" + "\n".join(long)


def import_graph(package: str) -> dict[str, set[str]]:
    """Module → the modules of ``package`` it imports (lazy and ``TYPE_CHECKING`` imports included)."""
    names = {_module_name(path): path for path in _modules(package)}
    graph: dict[str, set[str]] = {}
    for name, path in names.items():
        targets = set()
        for _, target in imports_in(path.read_text(), name, is_package=path.name == "__init__.py", names=True):
            # "from . import x" names module x where x is one, else the package; "from .a import B" module a
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != name and target != package:
                targets.add(target)
        graph[name] = targets
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_the_circle_finder_finds_a_circle_through_three_modules() -> None:
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a", "p.d"}, "p.d": set()}
    assert import_circles(graph) == [["p.a", "p.b", "p.c"]]
    assert import_circles({**graph, "p.c": {"p.d"}}) == []


def test_from_a_package_import_a_module_is_an_import_of_that_module() -> None:
    # applications.cli.main's "from . import attack" needs module attack, not the package's __init__ (which
    # imports main): no circle. A name defined in the package is trimmed back to the package by import_graph.
    found = imports_in("from . import attack\nfrom .common import set_argv\n", "p.cli.main", names=True)
    assert found == [(1, "p.cli.attack"), (2, "p.cli.common.set_argv")]


@pytest.mark.parametrize("package", LAYERS)
def test_no_import_circle(package: str) -> None:
    circles = import_circles(import_graph(package))
    assert not circles, "modules that import each other (through TYPE_CHECKING too):\n" + "\n".join(map(str, circles))


def test_zeroopt_base_and_constants_are_leaves() -> None:
    graph = import_graph("zeroopt")
    # base may use the request types and the published constants; nothing else of zeroopt
    assert graph["zeroopt.core.base"] <= {"zeroopt.oracles.requests", "zeroopt.core.constants"}
    assert graph["zeroopt.core.constants"] == set() and graph["zeroopt.oracles.requests"] == set()


def test_zeroopt_docstring_maps_every_module() -> None:
    # The package docstring groups zeroopt's subpackages and their modules by stage and role; a module or
    # subpackage it does not name is ungrouped.
    import zeroopt

    named = set(re.findall(r":mod:`~zeroopt\.([\w.]+)`", zeroopt.__doc__ or ""))
    found = {_module_name(p).removeprefix("zeroopt.") for p in _modules("zeroopt") if p.parent != ROOT / "zeroopt"}
    assert named == found, f"not in the map: {sorted(found - named)}; no such module: {sorted(named - found)}"


def test_every_zeroopt_module_sits_in_a_subpackage_that_imports_nothing() -> None:
    # One import path per module, zeroopt.<subpackage>.<module>: no module beside zeroopt/__init__.py, no deeper
    # nesting, and a subpackage's __init__ (its docstring only) re-exports nothing; zeroopt exports the public names.
    zeroopt_dir = ROOT / "zeroopt"
    loose = [p.name for p in zeroopt_dir.glob("*.py") if p.name != "__init__.py"]
    deep = [str(p.relative_to(zeroopt_dir)) for p in _modules("zeroopt") if len(p.relative_to(zeroopt_dir).parts) > 2]
    packages = sorted(p for p in zeroopt_dir.iterdir() if p.is_dir() and p.name != "__pycache__")
    missing = [p.name for p in packages if not (p / "__init__.py").is_file()]
    importing = [p.name for p in packages if (p / "__init__.py").is_file() and imported_modules(p / "__init__.py")]
    assert not (loose or deep or missing or importing), (loose, deep, missing, importing)


def test_zeroopt_core_needs_only_itself_and_the_request_types() -> None:
    graph = import_graph("zeroopt")
    outside = {f"{name} imports {target}" for name, targets in graph.items() if name.startswith("zeroopt.core.")
               for target in targets if not target.startswith("zeroopt.core.") and target != "zeroopt.oracles.requests"}
    assert not outside, "\n".join(sorted(outside))


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)


def _blocking(modules: tuple[str, ...]) -> str:
    # A None entry in sys.modules makes `import name` raise ModuleNotFoundError, as on a machine without it.
    return f"import sys\nfor m in {modules!r}:\n    sys.modules[m] = None\n"


def test_import_zeroopt_without_the_attack_frameworks() -> None:
    code = _blocking(ATTACK_EXTRA_MODULES) + (
        "import numpy as np\nimport zeroopt\n"
        "res = zeroopt.minimize(lambda x: float(x @ x), np.ones(4), solver='sign-growing', budget=400, seed=0)\n"
        "print(res.queries <= 400, sorted(m for m in sys.modules if m.split('.')[0] in ('theory', 'applications')))\n"
    )
    out = _run(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "[]"]


def test_console_script_without_click_says_what_to_install() -> None:
    out = _run(_blocking(("click",)) + "from applications.cli import main\nraise SystemExit(main(['--help']))\n")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert "pip install" in out.stderr and "zeroopt[attack]" in out.stderr


# History belongs to git: no line says which work period made something, when a run was made in clock time, or
# what was "remade" — the tree says what is true now and why.
NARRATION = [
    re.compile(r"\bsessions?\b", re.I),
    re.compile(r"\b(eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth"
               r"|twentieth|thirtieth|(twenty|thirty)-(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth))\b",
               re.I),
    re.compile(r"\bat HEAD\b"),
    re.compile(r"\bremade\b", re.I),
    re.compile(r"\bwork period", re.I),
    re.compile(r"\b\d{1,2}:\d{2} ?[–-] ?\d{1,2}:\d{2}\b"),  # a run's clock times, "16:19–16:39"
    # which configuration was the default when: say what a configuration is ("β 0.001", "plain probes")
    re.compile(r"\btoday\b", re.I),  # "today's default", shell-quoted 'today'"'"'s, a folder "remove-one-today"
    re.compile(r"\bnow the default\b", re.I),
    re.compile(r"\b(new|previous|earlier|former|old) defaults?\b", re.I),
    re.compile(r"\bwas the default\b", re.I),
    re.compile(r"\b(until now|formerly|used to be)\b", re.I),
    # "now" as narration: "is now", "now the", "now follows", "(the default now)", "met now" — not "close it now",
    # "the code as it is now" or "the iteration running now"
    re.compile(r"\b(is|are|was|were) now(?=\s+\w)", re.I),
    re.compile(r"\bnow the\b", re.I),
    re.compile(r"\bnow (also )?(?!its\b|this\b|less\b|unless\b|was\b|is\b|as\b)[a-z]+s\b", re.I),
    re.compile(r"\bnow (met|missed|mean|come|return|race|say|has|have)\b", re.I),
    re.compile(r"\bdefaults?( there| here)? now\b", re.I),
    re.compile(r"\b(met|missed|close|ahead|behind) now\b", re.I),
    # an earlier state: "the previous run", "is the previous one", "since commit 92b04ef", "was briefly the default",
    # "the default before", tags named for the period they were copied in ("before28-50000")
    re.compile(r"\bprevious (runs?|reruns?|pages?|headlines?|machine('s)?|versions?|commits?|suite|tables?|figures?)\b",
               re.I),
    re.compile(r"\bis the previous\b", re.I),
    re.compile(r"\bsince (commit )?[0-9a-f]{7,40}\b"),
    re.compile(r"\bsince commit\b", re.I),
    re.compile(r"\bwas briefly\b", re.I),
    re.compile(r"\bdefault (before|then)\b", re.I),
    re.compile(r"\bbefore\d+-"),
    # ("no longer" is left out: the tree uses it for what a mechanism stops doing, "the label is no longer y")
]
# A calendar date says when a run was made; it may stand as data in a table row (a run log's time column) only.
NARRATION_DATE = re.compile(r"\b20\d{2}-[01]\d-[0-3]\d\b")
# Legitimate uses of the words: a process session (setsid, subprocess's start_new_session), a Ray session and a
# pytest fixture's scope.
NARRATION_ALLOWED = re.compile(r"own[ -]session|start_new_session|Ray session|scope=\"session\"", re.I)
TEXT_SUFFIXES = {".py", ".md", ".sh", ".toml", ".cfg", ".txt", ".rst"}


def _tracked_text_files() -> list[Path]:
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        paths = [ROOT / n for n in names.splitlines()]
    except (OSError, subprocess.CalledProcessError):  # no git: every file outside the virtual environment
        paths = [p for p in ROOT.rglob("*") if ".venv" not in p.parts and ".git" not in p.parts]
    return [p for p in paths if p.is_file() and (p.suffix in TEXT_SUFFIXES or p.name == "run")
            and p != Path(__file__).resolve()]


def _narrates(line: str) -> bool:
    if NARRATION_ALLOWED.search(line):
        return False
    return any(p.search(line) for p in NARRATION) or (
        NARRATION_DATE.search(line) is not None and not line.lstrip().startswith("|"))


def narration(text: str) -> list[tuple[int, str]]:
    """The lines of ``text`` that narrate when something was made, as ``(line number, line)``."""
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1) if _narrates(line)]


# Lines this check cannot fix from here: files another part of the project owns, each with the words the line
# keeps until it is rewritten there (a waived line must still hold them; remove the entry with the rewrite).
NARRATION_WAIVED: set[tuple[str, str]] = set()  # (path, words) of lines let through, each with its reason


def _waived(path: str, line: str) -> bool:
    return any(path == p and words in line for p, words in NARRATION_WAIVED)


def test_the_narration_check_catches_what_it_should() -> None:
    text = ("the twenty-eighth session's default\nruns remade at d0a9c0e\nthe headline at HEAD\n"
            "made 16:19–16:39 on two cores\nsetsid: the local executor in its own session\nβ is a tenth of the step\n"
            "# Today's default with one part taken out\nagainst the previous default (tag `eps-B`)\n"
            "probe shape (**now the default**)\nbatched, seed 0, 2026-11-29, by:\n"
            "| 2026-11-26 02:27:50 | `python -m benchmarks.run_suite` | 320 |\nthe label is no longer y\n"
            "the defaults of `sign-growing` (the default)\n"
            # 14-28: "now", "previous", "since", "briefly", tags and names that narrate
            "`sign-growing` now follows the step\nthe default's start is now a record search\n"
            "Now the ratio doubles after two steps\n# Trees, with the tangent level (the default there now)\n"
            "met now: MNIST at 8k (0.904 → 0.899)\nthe previous run of this command had 1720\n"
            "since commit `92b04ef` `sign-growing` uses β = 0.01\nthe step, since d7f7f94 a semicircle\n"
            "at 341410f (where `race_starts=None` was briefly the default)\n--tags 'before28-50000,base-{B}'\n"
            "--variants 'today'\"'\"'s default,x'\nsee `../remove-one-today/`\none search (the default before)\n"
            "the \"default\" rows now mean β = 0.01\n`halving-tournament` is the previous one\n"
            # 29-35: the words in uses that say what is true
            "outcomes.close()  # now, not at garbage collection\n\"with the code as it is now\",\n"
            "#: The estimate of the iteration running now\nthe previous direction is added with a weight\n"
            "restoring the previous setting afterwards\nnow with the best point told so far\nis ``name`` known now?\n")
    assert [i for i, _ in narration(text)] == [1, 2, 3, 4, 7, 8, 9, 10, *range(14, 29)]


def test_no_line_narrates_history() -> None:
    found = [f"{path.relative_to(ROOT)}:{i}: {line[:100]}"
             for path in _tracked_text_files() for i, line in narration(path.read_text(errors="replace"))
             if not _waived(path.relative_to(ROOT).as_posix(), line)]
    assert not found, "say what is true now (history lives in git):\n" + "\n".join(found)


def test_every_waived_narration_is_still_there() -> None:
    """A waiver goes with the rewrite of its line: one whose words are gone must be removed."""
    stale = [f"{path}: {words!r}" for path, words in sorted(NARRATION_WAIVED)
             if words not in (ROOT / path).read_text(errors="replace")]
    assert not stale, "remove these entries from NARRATION_WAIVED:\n" + "\n".join(stale)


# An installed user gets zeroopt/ without benchmarks/: the package points at docs/defaults.md for what its
# constants were measured against, never at a results page it does not ship with.
RESULTS_PATH = "benchmarks/results"


def results_pointers(text: str) -> list[tuple[int, str]]:
    """The lines of ``text`` that name a path under benchmarks/results, as ``(line number, line)``."""
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1) if RESULTS_PATH in line]


def test_the_results_pointer_check_catches_what_it_should() -> None:
    text = ("#: the race's share (benchmarks/results/ablation/race-starts/)\n#: what it was measured against: "
            "docs/defaults.md\nsee ``benchmarks/`` for the studies\n(``benchmarks/results/ablation``).\n")
    assert [i for i, _ in results_pointers(text)] == [1, 4]


def test_zeroopt_points_at_no_results_page() -> None:
    found = [f"{path.relative_to(ROOT)}:{i}: {line[:100]}"
             for path in sorted((ROOT / "zeroopt").rglob("*")) if path.is_file() and path.suffix != ".pyc"
             for i, line in results_pointers(path.read_text(errors="replace"))]
    assert not found, "name docs/defaults.md instead (benchmarks/ is not installed):\n" + "\n".join(found)
