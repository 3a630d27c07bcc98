"""Why a returned point was not adversarial: re-label the stored runs whose claim failed, alone and in batches.

The harness labels each returned point again (``claim.adversarial`` in a run record); this finds the runs
of a suite tag in the results database where that label says "not adversarial", and for those on the MNIST
CNN or the CIFAR-10 ResNet re-labels the stored point (``x_best``, the best point queried, which the former
re-check returned as is) on this machine: the model's margin (logit of the adversarial side minus the best
other, so > 0 is adversarial) when it is labelled alone, in a call with the other two points of the attack's
former re-check (perturbation × 1.001, 1.003), and in calls of 16 and 256 with test images; and the margin of
the points ``applications.hardlabel``'s re-check returns (× 1.001, 1.002, 1.003, labelled alone, see
``applications/hardlabel/recheck.py``).

    python -m benchmarks.studies.nonadversarial                     # tag full of the default database
    python -m benchmarks.studies.nonadversarial --db OLD.sqlite --after-db NEW.sqlite --cost 10

``--after-db`` reports, for each of those runs, the run stored under the same key in a second database (the
runs redone by ``python -m benchmarks.run_suite ... --redo-nonadversarial``), and counts the runs of ours
whose returned point is not adversarial in both. ``--cost N`` attacks the first N MNIST test images (2k
queries, ``sign``, seed 0) with the re-check as it was (candidates × 1, 1.001, 1.003 labelled in one call)
and as it is, and compares distortion and model calls. Writes ``benchmarks/results/nonadversarial.md``.
"""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from applications import datasets, models
from benchmarks.pages import write_page
from benchmarks.store import RunStore, decode_array

RESULTS = Path(__file__).resolve().parents[1] / "results"
OLD_SCALES = (1.0, 1.001, 1.003)
NEW_SCALES = (1.001, 1.002, 1.003)


def failed_claims(store: RunStore) -> list[dict[str, Any]]:
    """Every stored run whose returned point the harness labelled not adversarial."""
    out = []
    for record in store.all_records():
        claim = record.get("claim") or {}
        if claim.get("distortion") is not None and claim.get("adversarial") is False:
            out.append(record)
    return sorted(out, key=_key)


def _key(r: dict[str, Any]) -> tuple[str, str, int]:
    return r["experiment"], r["attack"], int(r["image"])


def _run_name(r: dict[str, Any]) -> str:
    return f"{r['experiment']}/{r['attack']}/{r['image']:05d}"


def _margin(logits: np.ndarray, y0: int, target: int | None) -> np.ndarray:
    """> 0 where the criterion holds (untargeted: any other class wins; targeted: the target wins)."""
    if target is None:
        return np.delete(logits, y0, axis=1).max(1) - logits[:, y0]
    return logits[:, target] - np.delete(logits, target, axis=1).max(1)


def analyse(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    torch.set_num_threads(1)
    nets: dict[str, torch.nn.Module] = {}
    data: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    rows = []
    for r in records:
        which = r["experiment"].split("-")[0]
        if which not in ("mnist", "cifar"):
            rows.append({"run": _run_name(r), "skipped": "not a torch model"})
            continue
        if which not in nets:
            nets[which] = models.load_mnist_cw_bn() if which == "mnist" else models.load_cifar10_resnet20()
            data[which] = datasets.load_mnist_test() if which == "mnist" else datasets.load_cifar10_test_jpeg()
        net, (x, _) = nets[which], data[which]
        filler = x[np.random.default_rng(0).permutation(len(x))[:255]].astype(np.float32)

        def logits(batch: np.ndarray, net: torch.nn.Module = net) -> np.ndarray:
            with torch.inference_mode():
                return net(torch.from_numpy(np.ascontiguousarray(batch, dtype=np.float32))).double().numpy()

        x0 = x[r["image"]].astype(np.float32)
        xb = decode_array(r["x_best"]).reshape(x0.shape)
        delta = xb.astype(np.float64) - x0
        old = np.stack([np.clip(x0 + s * delta, 0, 1) for s in OLD_SCALES]).astype(np.float32)
        new = np.stack([np.clip(x0 + s * delta, 0, 1) for s in NEW_SCALES]).astype(np.float32)

        def m(z: np.ndarray, y0: int = r["y0"], target: int | None = r["target"]) -> np.ndarray:
            return _margin(logits(z), y0, target)

        rows.append(
            {
                "run": _run_name(r),
                "budget": r["budget"],
                "torch_device": r.get("env", {}).get("torch_device"),
                "made_on": r.get("env", {}).get("made_on"),
                "distortion": r["claim"]["distortion"],
                "monitor_distortion": r["distortion"],
                "alone": float(m(old[:1])[0]),
                "with_recheck_points": float(m(old)[0]),
                "in_batch_16": float(m(np.concatenate([old[:1], filler[:15]]))[0]),
                "in_batch_256": float(m(np.concatenate([old[:1], filler]))[0]),
                "new_alone": [float(m(p[None])[0]) for p in new],
                "new_in_batch_256": float(m(np.concatenate([new[:1], filler]))[0]),
            }
        )
    return rows


def render(rows: list[dict[str, Any]], command: str) -> str:
    lines = [
        "# Returned points that the harness did not label adversarial",
        "",
        f"Command: `{command}`",
        "",
        "Margin = logit of the adversarial side minus the best other logit (> 0: adversarial; 0 is a tie, which "
        "argmax settles by class order), re-computed on this machine (CPU, 1 torch thread). `x1.0`: the point "
        "the attack returned; labelled alone, in one call with the former re-check's other two points, and in "
        "calls of 16 and 256 with test images. `now`: the points `applications.hardlabel`'s re-check labels "
        "(× 1.001, 1.002, 1.003), alone, and × 1.001 in a call of 256.",
        "",
        "| run | budget | made with | L2 | x1.0 alone | x1.0 with re-check points | in 16 | in 256 | now alone "
        "| now in 256 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['run']} | skipped: {r['skipped']} |")
            continue
        made = "lent machine" if r["made_on"] else "this machine"
        lines.append(
            f"| {r['run']} | {r['budget']} | {made}, {r['torch_device']} | {r['distortion']:.4f} | "
            f"{r['alone']:.1e} | {r['with_recheck_points']:.1e} | {r['in_batch_16']:.1e} | "
            f"{r['in_batch_256']:.1e} | {', '.join(f'{v:.1e}' for v in r['new_alone'])} | "
            f"{r['new_in_batch_256']:.1e} |"
        )
    return "\n".join(lines) + "\n"


def recheck_cost(n: int, budget: int = 2000, solver: str = "sign") -> list[str]:
    """Markdown lines: the former and the current re-check on the first ``n`` MNIST test images."""
    torch.set_num_threads(1)
    module = importlib.import_module("applications.hardlabel.attack")
    verify = importlib.import_module("applications.hardlabel.verify")  # where the re-check looks its helpers up
    net = models.load_mnist_cw_bn()
    x, y = datasets.load_mnist_test()
    x, y = x[:n], y[:n]
    current = (verify.label_alone, verify.recheck_scales)

    def former_scales(reserve: int, step: float) -> np.ndarray:
        return 1.0 + step * (2.0 ** np.arange(reserve) - 1.0)

    def former_label(group: Any, owners: np.ndarray, points: np.ndarray) -> np.ndarray:
        return group.query(owners, points, record=False)

    lines = [
        f"Re-check cost: first {n} MNIST test images, budget {budget}, `{solver}`, seed 0, 1 torch thread.",
        "",
        "| re-check | adversarial alone | median L2 | returned / best found | model calls | queries (max) | wall s |",
        "|---|---|---|---|---|---|---|",
    ]
    try:
        for name, (label, scales) in {
            "former (× 1, 1.001, 1.003 in one call)": (former_label, former_scales),
            "current (× 1.001, 1.002, then × 1, each alone)": current,
        }.items():
            verify.label_alone, verify.recheck_scales = label, scales
            t0 = time.perf_counter()
            res = module.attack(net, x, y, budget=budget, solver=solver, seed=0, n_classes=10)
            wall = time.perf_counter() - t0
            with torch.inference_mode():
                alone = np.array([int(net(torch.from_numpy(res.x_adv[i : i + 1])).argmax(1)) for i in range(n)])
            ratio = res.distortion / np.array([tr[-1, 1] for tr in res.trace])
            lines.append(
                f"| {name} | {(alone != y).sum()} of {n} | {np.median(res.distortion):.5f} | "
                f"{ratio.min():.5f}-{ratio.max():.5f} | {res.model_calls} | {res.queries.max()} | "
                f"{wall:.1f} |"
            )
    finally:
        verify.label_alone, verify.recheck_scales = current
    return lines


def ours_failures(store: RunStore) -> tuple[int, int]:
    """(runs of ours, of which not adversarial when the harness labelled the returned point) in a tag."""
    n = bad = 0
    for r in store.all_records():
        if r.get("family") != "ours":
            continue
        n += 1
        bad += (r.get("claim") or {}).get("adversarial") is False
    return n, bad


def rerun_report(records: list[dict[str, Any]], before: RunStore, after: RunStore) -> list[str]:
    """Markdown lines: each failed run as it is stored in ``after`` (rerun or not), and the counts."""
    lines = [
        "## The same runs in the results database now",
        "",
        "| run | budget | L2 before (returned / monitor) | rerun by | adversarial now | L2 now (returned / monitor) "
        "| monitor L2 now / before |",
        "|---|---|---|---|---|---|---|",
    ]
    commands: set[str] = set()
    for r in records:
        new = after.load(*_key(r))
        if new is None:
            lines.append(f"| {_run_name(r)} | {r['budget']} | | not stored | | | |")
            continue
        same = new.get("command") == r.get("command") and new.get("time") == r.get("time")
        by = "not rerun" if same else "rerun"
        if not same:
            commands.add(new.get("command", "?"))
        claim = new.get("claim") or {}
        ratio = (new["distortion"] / r["distortion"]) if new.get("distortion") and r.get("distortion") else float("nan")
        lines.append(
            f"| {_run_name(r)} | {new['budget']} | {r['claim']['distortion']:.4f} / {r['distortion']:.4f} | "
            f"{by} | {claim.get('adversarial')} | "
            f"{claim.get('distortion') or float('nan'):.4f} / {new.get('distortion') or float('nan'):.4f} | "
            f"{ratio:.3f} |"
        )
    if commands:
        lines += ["", "Rerun by: " + "; ".join(f"`{c}`" for c in sorted(commands))]
    (n0, bad0), (n1, bad1) = ours_failures(before), ours_failures(after)
    lines += [
        "",
        f"Runs of ours in tag `{before.tag}` whose returned point the harness does not label adversarial: "
        f"{bad0} of {n0} in the first database, {bad1} of {n1} in the second.",
    ]
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", default=None, help="results database (default ~/.cache/zeroopt/results.sqlite)")
    p.add_argument("--tag", default="full", help="suite tag (default full)")
    p.add_argument("--after-db", default=None, help="a second database: how those runs are stored there")
    p.add_argument("--out", default=str(RESULTS / "nonadversarial.md"), help="Markdown page ('-': print only)")
    p.add_argument("--cost", type=int, default=0, metavar="N", help="also time the re-check on N MNIST images")
    args = p.parse_args(argv)
    store = RunStore(args.db, args.tag)
    records = failed_claims(store)
    rows = analyse(records)
    command = "python -m benchmarks.studies.nonadversarial" + "".join(
        f" {flag} {value}" for flag, value in (("--db", args.db), ("--after-db", args.after_db)) if value
    )
    command += f" --tag {args.tag}" if args.tag != "full" else ""
    command += f" --cost {args.cost}" if args.cost else ""
    text = render(rows, command)
    if args.after_db:
        text += "\n" + "\n".join(rerun_report(records, store, RunStore(args.after_db, args.tag))) + "\n"
    if args.cost:
        text += "\n" + "\n".join(recheck_cost(args.cost)) + "\n"
    print(text)
    if args.out != "-":
        write_page(Path(args.out), text, echo=False)


if __name__ == "__main__":
    main()
