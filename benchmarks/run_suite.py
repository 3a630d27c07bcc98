"""Run the whole benchmark suite: ``python -m benchmarks.run_suite [--quick | --preset full] [options]``.

Every attack — each of our solvers through ``applications.hardlabel.attack``, ART's HopSkipJump and SignOPT,
foolbox's BoundaryAttack and HopSkipJumpAttack — queries the model through the same
:class:`~benchmarks.monitor.QueryMonitor`, on the same inputs and budgets; white-box C&W L2 gives the floor.
Each finished (experiment, attack, input) run is kept in the results database (``--db``, default
``~/.cache/zeroopt/results.sqlite``, outside the repository) and skipped on a rerun, so an interrupted suite
resumes, and a rerun with the same options regenerates every page from the stored runs. Every table is
written as Markdown + JSON + plots, with the command that made it, and ``README.md`` in the tag folder indexes them.

Examples
--------
``python -m benchmarks.run_suite --quick``
    Everything on one or two inputs at small budgets (under two minutes): keeps the harness honest.
``python -m benchmarks.run_suite``
    The default preset, sized to about two hours on a 2-core CPU (``--plan`` prints the estimate).
``python -m benchmarks.run_suite --preset full``
    The issue's sizes (100 MNIST inputs for ours, 20 for peers, ...), about ten times longer.
``python -m benchmarks.run_suite --parts mnist --attacks art-hsj,fb-hsja --peer-images 2 --max-budget 2000``
    A slice.
``python -m benchmarks.run_suite --preset full --parts mnist --attacks ours-sign --redo-nonadversarial --runs-only``
    Rerun, at the current code, only the stored runs whose returned point the harness did not label adversarial.
``python -m benchmarks.run_suite --preset full --solvers rgf,rgf-fixed,coordinate,sign --stored-only``
    Rewrite the pages from the stored runs, starting no run.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import json
import math
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks import plots, sizing, speed, tables, trees_report
from benchmarks.attacks.art_peers import ArtGeoDA, ArtHopSkipJump, ArtSignOPT
from benchmarks.attacks.base import Attack
from benchmarks.attacks.cgba_peer import CGBA, CGBA_METHODS
from benchmarks.attacks.foolbox_peers import BOUNDARY, HOPSKIPJUMP, CarliniWagnerL2, FoolboxDecision
from benchmarks.attacks.ours import Ours, list_solvers
from benchmarks.experiments import Experiment, build
from benchmarks.headline import PLANNED_PEERS
from benchmarks.pages import write_page
from benchmarks.runner import run_attack
from benchmarks.store import RunStore
from benchmarks.suite_options import PEERS, experiment_names, options_for, parse_args, plan_for


def make_attacks(args: argparse.Namespace, exp: Experiment) -> tuple[list[Attack], dict[str, str]]:
    """The attacks to run on ``exp`` and, for those that cannot run, why."""
    solvers = [s for s in (args.solvers.split(",") if args.solvers else list_solvers()) if s]
    wanted = [a.strip() for a in args.attacks.split(",")] if args.attacks else ["ours", *PEERS]
    candidates: list[Attack] = []
    for w in wanted:
        if w == "ours":
            candidates += [Ours(s, impl=args.ours_impl, options=options_for(args.ours_option, s)) for s in solvers]
        elif w.startswith("ours-"):
            s = w.removeprefix("ours-")
            candidates.append(Ours(s, impl=args.ours_impl, options=options_for(args.ours_option, s)))
        elif w == "art-hsj":
            candidates.append(ArtHopSkipJump())
        elif w == "art-signopt":
            candidates.append(ArtSignOPT())
        elif w == "art-geoda":
            candidates.append(ArtGeoDA(sub_dim=exp.facts.get("geoda_sub_dim")))  # ImageNet: its authors' 75
        elif w in CGBA_METHODS:
            candidates.append(CGBA(w))  # its authors' frequency reduction for the input's size
        elif w == "fb-boundary":
            candidates.append(FoolboxDecision(*BOUNDARY))
        elif w == "fb-hsja":
            candidates.append(FoolboxDecision(*HOPSKIPJUMP))
        elif w == "cw-l2":
            steps = args.cw_steps or sizing.CW_STEPS[args.preset]
            candidates.append(CarliniWagnerL2(steps=steps))
        else:
            known = ", ".join(PEERS + PLANNED_PEERS)
            raise SystemExit(f"unknown attack {w!r}; choose from ours, ours-<solver>, {known}")
    ready: list[Attack] = []
    unavailable: dict[str, str] = {}
    if "ours" in wanted and not solvers:
        unavailable["ours"] = "zeroopt.list_solvers() is not available"
    for a in candidates:
        why = a.unavailable()
        if why is None and a.family == "white-box" and exp.torch_model is None:
            why = "white-box C&W needs a differentiable model (not applicable to GBDT)"
        if why is None and hasattr(a, "applicable"):
            why = a.applicable(exp.batch([0]))  # e.g. an attack for untargeted attacks on square images only
        batched = a.family == "white-box" or (a.family == "peer" and a.group_size > 1)
        if why is None and batched:
            group = args.peer_group or max(1, exp.plan.n_peers)
            a = dataclasses.replace(a, group_size=group)  # type: ignore[type-var]
        if why is None:
            ready.append(a)
        else:
            unavailable[a.name] = why
    return ready, unavailable


def environment(args: argparse.Namespace) -> dict[str, Any]:
    """What the numbers depend on: versions, threads, machine, load."""
    versions = {"python": platform.python_version()}
    for pkg in ("numpy", "torch", "lightgbm", "scikit-learn", "adversarial-robustness-toolbox", "foolbox"):
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = "not installed"
    return {
        "versions": versions,
        "torch_threads": torch.get_num_threads(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "seed": args.seed,
        "preset": args.preset,
        "host": platform.node(),
        "torch_device": args.torch_device,
        "made_on": args.made_on,
    }


def command_line(argv: list[str] | None) -> str:
    """The exact command that was run."""
    return "python -m benchmarks.run_suite " + " ".join(
        shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)
    )


def _runs(store: RunStore, exp: Experiment, attacks: list[Attack]) -> dict[str, list[dict[str, Any]]]:
    positions = {a.name: len(exp.jobs(a.family)) for a in attacks}
    out = {}
    for a in attacks:
        recs = [r for r in store.records(exp.name, a.name) if r["position"] < positions[a.name]]
        out[a.name] = sorted(recs, key=lambda r: r["position"])
    return out


def _made_on(record: dict[str, Any]) -> str | None:
    """The ``--made-on`` label of a run made away from the reference machine, else ``None``."""
    return record.get("env", {}).get("made_on")


def _provenance(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Notes on runs made away from the reference machine (``--made-on``), for a table's notes."""
    away: dict[str, dict[str, int]] = {}
    for name, records in runs.items():
        for r in records:
            label = _made_on(r)
            if label:
                away.setdefault(label, {}).setdefault(name, 0)
                away[label][name] += 1
    return [
        f"Runs made on {label} (same code and seeds; the speed table leaves them out): "
        + ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
        + "."
        for label, counts in sorted(away.items())
    ]


def main(argv: list[str] | None = None) -> int:
    """Run the suite; returns a process exit code."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.torch_device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    command = command_line(argv)
    names = experiment_names(args)
    parts = {p.strip() for p in args.parts.split(",")}
    root = args.results_dir / args.tag
    store = RunStore(args.db, args.tag)
    if not args.plan and not args.runs_only:
        root.mkdir(parents=True, exist_ok=True)  # tables and plots go here (the runs go to the database)
    if args.fresh and not args.plan:
        store.clear()
        (root / "history.jsonl").unlink(missing_ok=True)
    env = environment(args)
    context = {"command": command, "env": env}
    started = time.perf_counter()
    rounds = sizing.GBDT_ROUNDS[args.preset]

    experiments: list[tuple[Experiment, list[Attack], dict[str, str]]] = []
    total_estimate = 0.0
    print(f"[suite] preset {args.preset}, tag {args.tag}, results in {root}, runs in {store.path}", flush=True)
    for name in names:
        exp = build(name, plan_for(args, name), args.seed, gbdt_rounds=rounds, torch_device=args.torch_device)
        attacks, unavailable = make_attacks(args, exp)
        experiments.append((exp, attacks, unavailable))
        est = sum(sizing.estimate_seconds(name, exp.plan, a.name, a.family, getattr(a, "steps", 1000)) for a in attacks)
        total_estimate += est
        p = exp.plan
        print(
            f"[suite] {name}: ours {p.n_ours} / peers {p.n_peers} inputs, budgets {list(p.columns())}, "
            f"attacks {[a.name for a in attacks]}, est. {est / 60:.1f} min",
            flush=True,
        )
        for a, why in unavailable.items():
            print(f"[suite]   {a}: not run — {why}", flush=True)
    batched = [] if args.batched_solvers == "none" else [s for s in args.batched_solvers.split(",") if s]
    if "speed" in parts:
        for exp, attacks, _ in experiments:
            if any(a.family == "ours" for a in attacks):
                total_estimate += sum(
                    sizing.estimate_seconds(exp.name, dataclasses.replace(exp.plan, n_long=0), f"ours-{s}", "peer")
                    for s in batched
                )
    print(f"[suite] estimated time: {total_estimate / 60:.0f} min (rates in benchmarks/sizing.py)", flush=True)
    if args.plan:
        return 0
    if args.fresh_selection:
        for exp, attacks, _ in experiments:
            for attack in attacks:
                gone = store.forget(exp.name, attack.name)
                print(f"[suite] {exp.name} / {attack.name}: deleted {gone} stored runs of tag {args.tag}", flush=True)

    errors: list[str] = []
    index: list[str] = []
    counts = {"ran": 0, "kept": 0}
    deadline = None if args.deadline_minutes is None else started + 60 * args.deadline_minutes
    if args.stored_only:
        deadline = -math.inf  # every run not stored counts as left; nothing starts
        parts.discard("speed")
    for exp, attacks, unavailable in experiments:
        for attack in attacks:
            summary = run_attack(
                exp,
                attack,
                store,
                suite_seed=args.seed,
                context=context,
                replicate=args.replicate,
                retry_errors=args.retry_errors,
                redo_nonadversarial=args.redo_nonadversarial,
                progress=not args.no_progress,
                shard=args.shard,
                deadline=deadline,
            )
            errors += summary.errors
            counts["ran"] += summary.ran
            counts["kept"] += summary.skipped
            why = "stored only" if args.stored_only else "deadline"
            left = f", left {summary.left} ({why})" if summary.left else ""
            print(f"[suite] {exp.name} {attack.name}: ran {summary.ran}, kept {summary.skipped}{left}", flush=True)
        if args.runs_only:
            continue
        shown = [a for a in attacks if a.attribution != "nearest"]
        runs = _runs(store, exp, shown)
        exp.notes.extend(_provenance(runs))
        curve = plots.plot_curves(exp, runs, root / f"{exp.stem}_curves.png")
        examples = plots.plot_examples(exp, runs, root / f"{exp.stem}_examples.png")
        data = tables.table_json(exp, runs, unavailable, command, env)
        tables.write_table(root, exp, data, [curve.name, examples.name])
        # GBDT pages end with every attack's ratio to the exact minimum, when the minima are cached.
        trees_report.refresh_page(args.results_dir, root, exp.name)

    if args.runs_only:
        print(f"[suite] runs only: {counts['ran']} made in {(time.perf_counter() - started) / 60:.1f} min", flush=True)
        for e in errors:
            print(f"[suite] error: {e}", flush=True)
        return 0
    if "speed" in parts and experiments:
        _speed(args, experiments, store, context, batched, root, errors)
    for md in sorted(root.glob("*.md")):
        if md.name != "README.md":
            index.append(f"- [{md.read_text().splitlines()[0].lstrip('# ')}]({md.name})")

    elapsed = time.perf_counter() - started
    _write_index(root, command, env, index, elapsed, errors, counts, args.tag)
    print(f"[suite] done in {elapsed / 60:.1f} min; index: {root / 'README.md'}", flush=True)
    for e in errors:
        print(f"[suite] error: {e}", flush=True)
    return 0


def _speed(
    args: argparse.Namespace,
    experiments: list[tuple[Experiment, list[Attack], dict[str, str]]],
    store: RunStore,
    context: dict[str, Any],
    batched: list[str],
    root: Path,
    errors: list[str],
) -> Path:
    """Batched runs of our attack, model throughput, and the speed table."""
    seconds = 0.2 if args.preset == "quick" else 2.0
    models: dict[str, Any] = {}
    blocks: dict[str, Any] = {}
    for exp, attacks, _ in experiments:
        key = {"mnist": "mnist_cw_bn (torch)", "cifar": "cifar10_resnet20 (torch)"}.get(
            exp.name.split("-")[0], f"LightGBM {exp.name.removeprefix('gbdt-')}"
        )
        models.setdefault(key, (exp.label_fn, exp.x[: min(len(exp.x), 100)]))
        group = max(1, exp.plan.n_peers)
        extra: list[Attack] = []
        if any(a.family == "ours" for a in attacks) and group > 1:
            speed_exp = dataclasses.replace(exp, plan=dataclasses.replace(exp.plan, n_ours=group, n_long=0))
            for s in batched:
                ours = Ours(s, group_size=group, impl=args.ours_impl, options=options_for(args.ours_option, s))
                if ours.unavailable() is None:
                    summary = run_attack(
                        speed_exp, ours, store, suite_seed=args.seed, context=context, progress=not args.no_progress
                    )
                    errors += summary.errors
                    extra.append(ours)
        # Timings only from runs made here: runs made elsewhere (--made-on) count in the tables, not in speed.
        runs = {k: [r for r in v if not _made_on(r)] for k, v in _runs(store, exp, attacks + extra).items()}
        rows = speed.speed_rows(runs)
        blocks[exp.name] = {"model": key, "rows": rows, "ratios": speed.ratios(rows)}
    forward = {k: {str(b): v for b, v in t.items()} for k, t in speed.model_throughput(models, seconds).items()}
    data = {
        "command": context["command"],
        "notes": [
            f"{context['env']['torch_threads']} torch thread(s), {context['env']['cpus']} CPUs; load average at the "
            f"start {context['env']['load_average']} (other jobs on the machine slow every figure alike).",
            "Queries are counted by the monitor; wall time includes the attack's own work and the monitor's "
            "bookkeeping (one distance per query), the same for every attack.",
            "Our attack is run one input per call for the tables (exact attribution, as for the peers). The "
            "`ours-<solver>-x<G>` rows time it batched over G inputs (their probes share model calls), on the "
            "first G inputs at the standard budget; their per-input attribution is approximate (nearest "
            "original), so they appear here only.",
            "foolbox attacks run batched over the peers' inputs (their design); ART's attack one input at a time.",
        ],
        "forward": forward,
        "experiments": blocks,
    }
    return speed.write(root, data)


def _write_index(
    root: Path,
    command: str,
    env: dict[str, Any],
    index: list[str],
    elapsed: float,
    errors: list[str],
    counts: dict[str, int],
    tag: str,
) -> None:
    """Append this invocation to ``history.jsonl`` and write ``README.md`` (tables + every invocation)."""
    root.mkdir(parents=True, exist_ok=True)
    entry = {
        "command": command,
        "ran": counts["ran"],
        "reused": counts["kept"],
        "minutes": round(elapsed / 60, 2),
        "load_average": env["load_average"],
        "torch_threads": env["torch_threads"],
        "errors": len(errors),
        "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    with open(root / "history.jsonl", "a") as fh:
        fh.write(json.dumps(entry) + "\n")
    history = [json.loads(line) for line in (root / "history.jsonl").read_text().splitlines() if line.strip()]
    lines = [
        "# Benchmark suite results",
        "",
        f"Command: `{command}` (the latest of the invocations below)",
        "",
        f"Machine: {env['cpus']} CPUs, {env['machine']}; versions: "
        + ", ".join(f"{k} {v}" for k, v in env["versions"].items()),
        "",
        *index,
        "",
        "Invocations (a load average above the CPU count means other jobs shared the machine):",
        "",
        "| finished | command | runs made | reused | minutes | threads | load average at start | errors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for h in history:
        load = ", ".join(f"{x:.1f}" for x in h["load_average"]) if h["load_average"] else "?"
        lines.append(
            f"| {h['finished']} | `{h['command']}` | {h['ran']} | {h['reused']} | {h['minutes']} | "
            f"{h['torch_threads']} | {load} | {h['errors']} |"
        )
    lines += ["", "Per-run records (monitor trace, best point, timings, the attack's own claims and settings) are kept "
              f"out of the repository, in the results database (table `suite_runs`, tag `{tag}`; "
              "`benchmarks.store.RunStore` reads them). Rerunning the latest command with `--db PATH` regenerates "
              "these pages from it; see `benchmarks/results/README.md`."]
    if errors:
        lines += ["", "Errors in the latest invocation:", *[f"- {e}" for e in errors]]
    write_page(root / "README.md", lines, echo=False)


if __name__ == "__main__":
    raise SystemExit(main())
