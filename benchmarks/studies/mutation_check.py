"""Plant realistic bugs one at a time and see which default tests catch each (run on demand).

Each mutant is a list of exact search/replace edits on one named file. Every search string must occur
exactly once in that file, else the check stops and names the mutant, so that after a refactor the
mutant is updated (re-planted where the code moved) rather than silently testing nothing. For each
mutant the working tree (tracked and untracked, not ignored, files; without ``benchmarks/results``) is
copied to a temporary folder, the edit applied, and the default test suite (``pytest -m 'not slow'``) run
there (with the ``mutation`` hypothesis profile of ``tests/conftest.py``: no shrinking, no example database);
the tests that fail there but pass on the unmutated copy are the ones that catch it.

    python -m benchmarks.studies.mutation_check                         # every mutant, the whole default suite
    python -m benchmarks.studies.mutation_check --only bisection-eps    # one mutant
    python -m benchmarks.studies.mutation_check --tests tests/test_attack_quality.py   # a subset of the suite

Writes ``benchmarks/results/mutation.md`` (and ``.json``) unless ``--out -``. A mutant that no test catches
makes the command exit with status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from benchmarks.pages import write_page

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "mutation.md"


@dataclass(frozen=True)
class Mutant:
    """A planted bug: exact ``(search, replace)`` edits on ``path`` (relative to the repository root)."""

    name: str
    bug: str
    path: str
    edits: tuple[tuple[str, str], ...]


MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "budget-off-by-one", "budget check off by one (one query past the cap is allowed)", "zeroopt/oracles/oracle.py",
        (("return max(0, min(wanted, self.budget - self.spent))",
          "return max(0, min(wanted, self.budget + 1 - self.spent))"),
         ("if self.budget is not None and self.spent + units > self.budget:",
          "if self.budget is not None and self.spent + units > self.budget + 1:")),
    ),
    Mutant(
        "initial-uncounted", "initial-search queries not counted (the attack's ledger is reset after it)",
        "applications/hardlabel/initial.py",
        # Both ways of picking the start (the tournament of the cheap start, and the reference's bisect-all).
        (("    hits = _probe(group, candidates)\n",
          "    spent = {i: group.images[i].ledger.spent for i in candidates}\n    hits = _probe(group, candidates)\n"),
         ("        return tournament(group, hits, eps, accelerate=selection == \"tournament\", relative=relative)\n",
          "        won = tournament(group, hits, eps, accelerate=selection == \"tournament\", relative=relative)\n"
          "        for i, s in spent.items():\n"
          "            group.images[i].ledger.spent = s\n        return won\n"),
         ("                best[s.owner] = (copy(s.ray.direction), s.value)  # type: ignore[union-attr]\n"
          "    return best\n",
          "                best[s.owner] = (copy(s.ray.direction), s.value)  # type: ignore[union-attr]\n"
          "    for i, s in spent.items():\n        group.images[i].ledger.spent = s\n    return best\n")),
    ),
    Mutant(
        "estimator-no-1/beta", "estimator drops its 1/β scale", "zeroopt/estimate/estimators.py",
        (("    diffs = differences / width\n", "    diffs = differences\n"),),
    ),
    Mutant(
        "line-search-never-shrinks", "line search never shrinks (OPT line search: no quartering)",
        "zeroopt/step/stepping.py",
        (("    if best_f >= fx:\n        for _ in range(max_shrink):",
          "    if False:\n        for _ in range(max_shrink):"),),
    ),
    Mutant(
        "random-direction", "random direction used instead of the gradient estimate (same norm)",
        "zeroopt/core/stages.py",
        (("self.rule(s.x, s.fx, it.direction, s.step, it.eps, it.solver.retract, **extra)",
          "self.rule(s.x, s.fx, s.rng.standard_normal(s.x.size) * float(np.linalg.norm(it.direction))"
          " / np.sqrt(s.x.size), s.step, it.eps, it.solver.retract, **extra)"),),
    ),
    Mutant(
        "semicircle-radius", "semicircular step compares at f(θ) instead of the circle's radius f(θ) cos φ",
        "zeroopt/step/stepping.py",
        (("levels=np.array([fx * np.cos(angle)])", "levels=np.array([fx])"),),
    ),
    Mutant(
        "bisection-eps", "bisection tolerance ε replaced by a fixed 0.01", "applications/hardlabel/search.py",
        (("        if self.hi - self.lo <= max(self.eps, self.eps_relative * self.hi):\n",
          "        if self.hi - self.lo <= max(0.01, self.eps_relative * self.hi):\n"),),
    ),
    Mutant(
        "recheck-skipped", "the attack's final re-check skipped", "applications/hardlabel/verify.py",
        (("    if reserve == 0:\n        return found\n", "    if True:\n        return found\n"),),
    ),
    Mutant(
        "theory-step-d^1.2", "theory step 1/(4(d+4)L1) × (12/(d+4))^0.2: iterations grow like d^1.2 (same at d=8)",
        "zeroopt/recipes/solvers.py",
        (("    return 1.0 / (4.0 * (dim + 4) * lipschitz)\n",
          "    return 1.0 / (4.0 * (dim + 4) * lipschitz) * (12 / (dim + 4)) ** 0.2\n"),),
    ),
    Mutant(
        "theory-step-d^2", "theory step 1/(4(d+4)L1) × 12/(d+4): iterations grow like d² (same at d=8)",
        "zeroopt/recipes/solvers.py",
        (("    return 1.0 / (4.0 * (dim + 4) * lipschitz)\n",
          "    return 1.0 / (4.0 * (dim + 4) * lipschitz) * 12 / (dim + 4)\n"),),
    ),
    Mutant(
        "sign-flips-loose-level", "the sign search asks its candidates 5% above the incumbent's distance",
        "zeroopt/recipes/sign_flips.py",
        (("        cap = level if math.isfinite(level) else None\n",
          "        cap = level * 1.05 if math.isfinite(level) else None\n"),),
    ),
)


def plant(root: Path, mutant: Mutant) -> None:
    """Apply ``mutant``'s edits under ``root``; raise if a search string does not occur exactly once."""
    path = root / mutant.path
    text = path.read_text()
    for search, replace in mutant.edits:
        n = text.count(search)
        if n != 1:
            raise SystemExit(
                f"mutant {mutant.name!r}: its search text occurs {n} times in {mutant.path} (must be exactly once); "
                f"the code moved: update MUTANTS in benchmarks/studies/mutation_check.py.\nSearch text:\n{search}"
            )
        text = text.replace(search, replace)
    path.write_text(text)


def copy_tree(dest: Path) -> None:
    """The working tree's files (tracked and untracked, not ignored), without the stored results."""
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.decode().split("\0")
    for rel in files:
        if not rel or rel.startswith("benchmarks/results/") or not (ROOT / rel).is_file():
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)


def run_tests(root: Path, tests: list[str], timeout: float) -> tuple[set[str], set[str], float, str]:
    """Run pytest in ``root``; return (failed test ids, passed test ids, seconds, summary line)."""
    report = root / "report.xml"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-profile=mutation",
             f"--junitxml={report}", *tests],
            cwd=root, env=env, capture_output=True, text=True, timeout=timeout,
        )
        tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
    except subprocess.TimeoutExpired:
        return {"(timed out)"}, set(), time.perf_counter() - started, f"timed out after {timeout:.0f} s"
    seconds = time.perf_counter() - started
    failed, passed = set(), set()
    if report.exists():
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{case.get('classname', '')}::{case.get('name', '')}"
            if case.find("failure") is not None or case.find("error") is not None:
                failed.add(name)
            elif case.find("skipped") is None:
                passed.add(name)
    if not failed and proc.returncode not in (0, 5):
        failed.add(f"(pytest exit {proc.returncode}: {tail})")
    return failed, passed, seconds, tail


def _short(test_id: str) -> str:
    # "tests.test_attack_quality::test_x[rgf-binary]" -> "test_attack_quality::test_x[rgf-binary]"
    return test_id.removeprefix("tests.")


def render(
    rows: list[dict[str, object]], command: str, baseline: dict[str, object], earlier: list[dict] | None = None
) -> str:
    lines = [
        "# Mutation check: which default tests catch each planted bug", "",
        f"Command: `{command}`", "",
        f"Tests run: {baseline['tests']} ({baseline['passed']} passing on the unmutated tree, "
        f"{baseline['seconds']:.0f} s). Each mutant is planted alone in a copy of the tree.", "",
    ]
    for e in earlier or []:
        lines += [f"Rows of {', '.join(f'`{m}`' for m in e['mutants'])} from the earlier command `{e['command']}` "
                  f"({e['baseline']['tests']}; {e['baseline']['passed']} passing on the unmutated tree), "
                  "which the command above did not rerun.", ""]
    lines += ["| planted bug | file | caught by | tests that fail |", "|---|---|---|---|"]
    for r in rows:
        caught = sorted(r["caught"])  # type: ignore[arg-type]
        more = f" and {len(caught) - 6} more" if len(caught) > 6 else ""
        shown = ", ".join(f"`{_short(t)}`" for t in caught[:6]) + more
        lines.append(f"| {r['bug']} | `{r['path']}` | {len(caught)} tests | {shown or '**none**'} |")
    return "\n".join(lines) + "\n"


def merge_update(old: dict, rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """``--update``: the stored report ``old`` with ``rows`` (this run's) in place of the rows they redo.

    Returns ``(rows in MUTANTS order, earlier)``, where ``earlier`` names, for each row this run did not redo,
    the one command that made it (oldest first; a row that an older page listed twice belongs to the first).
    """
    rerun = {r["mutant"] for r in rows}
    kept = [r for r in old["mutants"] if r["mutant"] not in rerun]
    earlier: list[dict] = []
    if kept:
        seen: set[str] = set()
        for e in old.get("earlier", []):
            mine = [m for m in e["mutants"] if m not in rerun and m not in seen]
            seen.update(mine)
            earlier.append({**e, "mutants": mine})
        own = [r["mutant"] for r in kept if r["mutant"] not in seen]  # the rows the old command itself ran
        earlier.append({"command": old["command"], "baseline": old["baseline"], "mutants": own})
        earlier = [e for e in earlier if e["mutants"]]
    order = {m.name: k for k, m in enumerate(MUTANTS)}
    return sorted(kept + rows, key=lambda r: order.get(str(r["mutant"]), len(order))), earlier


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default="", help="comma-separated mutant names (default: all)")
    p.add_argument("--tests", nargs="*", default=[], help="pytest arguments selecting tests (default: the suite)")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per pytest run (default 1800)")
    p.add_argument("--out", default=str(OUT), help=f"Markdown report (default {OUT}); '-': print only")
    p.add_argument("--list", action="store_true", help="list the mutants and check that each still applies")
    p.add_argument(
        "--update",
        action="store_true",
        help="with --only: replace those mutants' rows in the existing report and keep the others (the page "
        "names both commands)",
    )
    args = p.parse_args(argv)
    chosen = [m for m in MUTANTS if not args.only or m.name in args.only.split(",")]
    if args.only and len(chosen) != len(args.only.split(",")):
        raise SystemExit(f"unknown mutant in {args.only!r}; mutants: {', '.join(m.name for m in MUTANTS)}")
    with tempfile.TemporaryDirectory(prefix="zeroopt-mutants-") as tmp:
        base = Path(tmp) / "base"
        copy_tree(base)
        for m in chosen:  # fail before any test run if the code moved
            probe = Path(tmp) / "probe"
            shutil.copytree(base, probe)
            plant(probe, m)
            shutil.rmtree(probe)
        if args.list:
            for m in MUTANTS:
                print(f"{m.name:28s} {m.path:40s} {m.bug}")
            return 0
        failed0, passed0, sec0, tail0 = run_tests(base, args.tests, args.timeout)
        print(f"unmutated: {tail0} ({sec0:.0f} s)", flush=True)
        if failed0:
            print(f"warning: {len(failed0)} tests fail without a mutant; they count for no mutant: {sorted(failed0)}")
        rows: list[dict[str, object]] = []
        for m in chosen:
            work = Path(tmp) / m.name.replace("/", "_")
            shutil.copytree(base, work, ignore=shutil.ignore_patterns("report.xml", ".hypothesis"))
            plant(work, m)
            failed, _, sec, tail = run_tests(work, args.tests, args.timeout)
            caught = sorted(failed - failed0)
            rows.append({"mutant": m.name, "bug": m.bug, "path": m.path, "caught": caught, "seconds": sec})
            print(f"{m.name}: caught by {len(caught)} ({tail}, {sec:.0f} s)", flush=True)
            for t in caught:
                print(f"    {_short(t)}")
            shutil.rmtree(work)
    command = "python -m benchmarks.studies.mutation_check" + (f" --only {args.only}" if args.only else "") + (
        f" --tests {shlex.join(args.tests)}" if args.tests else "") + (" --update" if args.update else "")
    baseline = {"tests": shlex.join(args.tests) or "the default suite (pytest -m 'not slow')",
                "passed": len(passed0), "seconds": sec0}
    earlier: list[dict] = []
    if args.update and args.out != "-" and Path(args.out).with_suffix(".json").exists():
        rows, earlier = merge_update(json.loads(Path(args.out).with_suffix(".json").read_text()), rows)
    if args.out != "-":
        out = Path(args.out)
        write_page(out, render(rows, command, baseline, earlier),
                   {"command": command, "baseline": baseline, "mutants": rows, "earlier": earlier}, echo=False)
        print(f"wrote {out}")
    missed = [r["mutant"] for r in rows if not r["caught"]]
    if missed:
        print(f"NOT CAUGHT by any test: {', '.join(missed)}")  # type: ignore[arg-type]
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
