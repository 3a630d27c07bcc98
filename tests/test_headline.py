"""benchmarks.headline: ours beside the best peer at each budget, and columns read from runs made at a budget."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchmarks.headline import PLANS, _options, main, misses, misses_line, per_input_ratio, table
from benchmarks.store import RunStore
from benchmarks.tables import median_ratio_interval

EXP = "cifar-untargeted"
ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / PLANS["full"]["out"]


def _record(attack: str, image: int, q: list[int], d: list[float], budget: int = 20000) -> dict:
    return {"experiment": EXP, "attack": attack, "image": image, "position": image, "budget": budget,
            "success": True, "distortion": d[-1], "trace": {"q": q, "d": d}}


def _stores(tmp_path: Path) -> tuple[Path, RunStore, RunStore, RunStore]:
    db = tmp_path / "runs.sqlite"
    peers, ours, at8k = RunStore(db, "peers"), RunStore(db, "ours"), RunStore(db, "ours8k")
    for i in range(3):
        peers.save(_record("art-hsj", i, [200, 1000, 8000], [2.0, 1.0, 0.5]))
        peers.save(_record("fb-boundary", i, [200, 1000, 8000], [3.0, 0.8, 0.6]))
        peers.save({**_record("cw-l2", i, [1], [0.3]), "trace": None, "distortion": 0.3})
        # Our 20k run (a race at its start) is behind early; the run made with budget 8000 is not.
        ours.save(_record("ours-sign-growing", i, [200, 5000, 8000], [2.4, 0.6, 0.4]))
        at8k.save(_record("ours-sign-growing", i, [200, 900, 8000], [1.6, 0.7, 0.42], budget=8000))
    return db, peers, ours, at8k


def test_the_ratio_is_ours_over_the_best_peer_at_each_budget(tmp_path: Path) -> None:
    _, peers, ours, _ = _stores(tmp_path)
    t = table(peers, EXP, "ours-sign-growing", ours)
    col = {b: str(b) for b in t["budgets"]}
    assert t["inputs"] == [0, 1, 2]
    assert t["best_peer"][col[250]] == "art-hsj" and t["ratio"][col[250]] == pytest.approx(2.4 / 2.0)
    assert t["best_peer"][col[1000]] == "fb-boundary" and t["ratio"][col[1000]] == pytest.approx(2.4 / 0.8)
    assert t["ratio"][col[8000]] == pytest.approx(0.4 / 0.5)
    assert t["below_floor"][col[8000]] is False and t["ours_run_budget"] == {}


def test_ours_at_takes_each_column_from_the_first_listed_budget_that_covers_it(tmp_path: Path) -> None:
    db, peers, ours, at8k = _stores(tmp_path)
    empty = RunStore(db, "nothing-here")  # a tag without this experiment is passed over
    t = table(peers, EXP, "ours-sign-growing", ours, [(4000, empty), (8000, at8k)])
    assert t["ours_run_budget"] == {b: 8000 for b in ("250", "500", "1000", "2000", "4000", "8000")}
    assert t["medians"]["ours-sign-growing"]["1000"] == pytest.approx(0.7)
    assert t["medians"]["ours-sign-growing"]["8000"] == pytest.approx(0.42)
    assert t["medians"]["ours-sign-growing"]["20000"] == pytest.approx(0.4)  # beyond 8000: the default tag
    out = tmp_path / "headline.md"
    main(["--experiments", EXP, "--tag", "peers", "--ours-tag", "ours", "--ours-at", "8000=ours8k",
          "--db", str(db), "--out", str(out), "--no-plot"])
    text = out.read_text()
    assert "0.700†" in text and "0.400 |" in text and "--ours-at 8000=ours8k" in text
    saved = json.loads(out.with_suffix(".json").read_text())[0]
    assert saved["ratio"]["8000"] == pytest.approx(0.42 / 0.5)
    assert np.isfinite(saved["medians"]["cw-l2"]["8000"])


def test_misses_count_exact_ratios_not_the_rounded_ones(tmp_path: Path) -> None:
    _, peers, ours, _ = _stores(tmp_path)
    t = table(peers, EXP, "ours-sign-growing", ours)
    # 250: 2.4 / 2.0 and 1000: 2.4 / 0.8 are above 0.90; 8000: 0.4 / 0.5 = 0.8 and 20000 are not. The goal
    # starts at 500, so 250 is listed apart and not counted.
    found = {b: r for _, b, r, _ in misses([t])}
    assert found["1000"] == pytest.approx(3.0) and "250" not in found
    assert "8000" not in found and "20000" not in found and len(found) == 4
    assert {b: r for _, b, r, _ in misses([t], smallest=0)}["250"] == pytest.approx(1.2)
    t["ratio"]["8000"], t["ratio_interval"]["8000"] = 0.903, [0.88, 0.95]  # shown as 0.90, and still a miss
    t["below_floor"]["8000"] = True
    assert misses([t])[-1] == (EXP, "8000", 0.903, True)
    line = misses_line([t])
    assert "missed in 5 cells" in line and "1 of them below" in line
    assert "at 8,000: 0.903 [0.88–0.95], per input 0.800 (3 of 3 lower) (below the floor)" in line
    assert "1 of them have a 90% bootstrap" in line
    assert "(outside the goal): cifar-untargeted at 250: 1.200." in line


def test_per_input_ratio_shows_what_a_ratio_of_medians_hides() -> None:
    """Ten inputs where ours is 10% lower on nine and 30% higher on one: the middle pair of the two attacks
    differs, so the ratio of medians reads 1.03 while input by input ours is 0.90."""
    peer = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    ours = 0.9 * peer
    ours[4] = 1.3 * 5.0  # input 4 moves from the 5th to the 7th place of ours
    assert np.median(ours) / np.median(peer) > 1.0
    median, lower, n = per_input_ratio(ours, peer)
    assert median == pytest.approx(0.9) and (lower, n) == (9, 10)


def test_a_planned_peer_is_read_from_the_runs_made_for_each_budget_and_can_be_the_best(tmp_path: Path) -> None:
    db, peers, ours, _ = _stores(tmp_path)
    for b, d in ((1000, 0.6), (8000, 0.45)):  # GeoDA planned for 1000 beats the others there; for 8000 not ours
        s = RunStore(db, f"geoda-{b}")
        for i in range(3):
            s.save(_record("art-geoda", i, [300, b], [5.0, d], budget=b))
    planned = {"art-geoda": [(b, RunStore(db, f"geoda-{b}")) for b in (250, 500, 1000, 2000, 4000, 8000)]}
    t = table(peers, EXP, "ours-sign-growing", ours, None, planned)
    med = t["medians"]["art-geoda"]
    assert med["1000"] == pytest.approx(0.6) and med["8000"] == pytest.approx(0.45)
    # No runs made for these budgets: no figure (not the 8000 plan's trace at 2000, nor the 1000 plan's at 250).
    assert all(np.isnan(med[b]) for b in ("250", "500", "2000", "4000", "14000", "20000"))
    assert t["best_peer"]["1000"] == "art-geoda" and t["ratio"]["1000"] == pytest.approx(2.4 / 0.6)
    assert t["best_peer"]["8000"] == "art-geoda" and t["ratio"]["8000"] == pytest.approx(0.4 / 0.45)
    assert t["best_peer"]["2000"] == "fb-boundary" and t["ours_run_budget"] == {}
    out = tmp_path / "headline.md"
    main(["--experiments", EXP, "--tag", "peers", "--ours-tag", "ours", "--planned", "art-geoda=geoda-{B}",
          "--db", str(db), "--out", str(out), "--no-plot"])
    assert "| art-geoda |" in out.read_text() and "(tag `geoda-{B}`)" in out.read_text()
    with pytest.raises(SystemExit, match="--planned"):
        main(["--experiments", EXP, "--tag", "peers", "--planned", "art-geoda=geoda", "--db", str(db),
              "--out", str(out)])


def test_without_runs_under_the_default_tag_the_largest_per_budget_tag_gives_the_inputs(tmp_path: Path) -> None:
    # --ours-tag names the longest run of another experiment (MNIST's 50k): this one's come from the per-budget
    # tags alone; beyond the largest of them there is no figure (the run did not go that far).
    db, peers, _, at8k = _stores(tmp_path)
    t = table(peers, EXP, "ours-sign-growing", RunStore(db, "other-experiment"), [(8000, at8k)])
    assert t["inputs"] == [0, 1, 2]
    assert t["medians"]["ours-sign-growing"]["8000"] == pytest.approx(0.42)
    assert np.isnan(t["medians"]["ours-sign-growing"]["20000"]) and "20000" not in t["ratio"]
    assert t["ratio"]["8000"] == pytest.approx(0.42 / 0.5)
    assert table(peers, EXP, "ours-sign-growing", RunStore(db, "other-experiment"))["ratio"] == {}


def test_the_ratio_interval_resamples_inputs_in_pairs_and_takes_the_best_peer_of_each_draw() -> None:
    rng = np.random.default_rng(3)
    peer = rng.uniform(0.5, 2.0, size=20)
    # Ours a fixed fraction of the peer on every input: whatever the draw, the ratio is that fraction.
    assert median_ratio_interval(0.8 * peer, {"a": peer}) == pytest.approx((0.8, 0.8))
    # Ours equal to one peer and half another: the best peer of every draw is the half, so the ratio is 2.
    assert median_ratio_interval(peer, {"same": peer, "half": 0.5 * peer}) == pytest.approx((2.0, 2.0))
    # Noisy pairs: the interval holds the ratio of the medians, is the same for the same seed, and narrows with
    # more inputs.
    ours = peer * rng.lognormal(0.0, 0.2, size=20)
    point = np.median(ours) / np.median(peer)
    lo, hi = median_ratio_interval(ours, {"a": peer}, seed=7)
    assert lo < point < hi and (lo, hi) == median_ratio_interval(ours, {"a": peer}, seed=7)
    big_peer = rng.uniform(0.5, 2.0, size=2000)
    big_lo, big_hi = median_ratio_interval(big_peer * rng.lognormal(0.0, 0.2, size=2000), {"a": big_peer})
    assert big_hi - big_lo < (hi - lo) / 3
    # Failures stay in: ours failing on most inputs gives an infinite median in every draw.
    assert median_ratio_interval(np.full(5, np.inf), {"a": np.ones(5)}) == (np.inf, np.inf)
    with pytest.raises(ValueError, match="one distance"):
        median_ratio_interval(ours, {"a": peer[:5]})
    with pytest.raises(ValueError, match="one distance"):
        median_ratio_interval(np.append(ours[:-1], np.nan), {"a": peer})
    with pytest.raises(ValueError, match="level"):
        median_ratio_interval(ours, {"a": peer}, level=1.0)


def test_the_page_shows_each_ratio_with_its_interval_and_counts_the_misses_it_could_undo(tmp_path: Path) -> None:
    db, peers, ours, _ = _stores(tmp_path)
    t = table(peers, EXP, "ours-sign-growing", ours)
    for b, r in t["ratio"].items():  # the three inputs are alike: no spread
        assert t["ratio_interval"][b] == pytest.approx([r, r])
    t["ratio"]["8000"], t["ratio_interval"]["8000"] = 0.93, [0.85, 1.01]
    line = misses_line([t])
    assert "1 of them have a 90% bootstrap interval" in line and "at 8,000: 0.930 [0.85–1.01]" in line
    out = tmp_path / "headline.md"
    main(["--experiments", EXP, "--tag", "peers", "--ours-tag", "ours", "--db", str(db), "--out", str(out)])
    assert "| 90% interval (bootstrap over inputs) | 1.20–1.20 |" in out.read_text()
    assert "| per input: median of ours-sign-growing / that peer (inputs lower) | 1.20 (0/3) |" in out.read_text()
    assert "](headline.png)" in out.read_text() and out.with_suffix(".png").stat().st_size > 0
    assert json.loads(out.with_suffix(".json").read_text())[0]["ratio_interval"]["8000"] == pytest.approx([0.8, 0.8])


def test_peers_from_a_stored_headline_give_the_same_ratios_and_intervals(tmp_path: Path) -> None:
    db, peers, ours, _ = _stores(tmp_path)
    # One input unlike the others, so that the intervals have a spread to lose.
    peers.save(_record("art-hsj", 2, [200, 1000, 8000], [2.0, 1.0, 0.9]))
    full = tmp_path / "full.md"
    main(["--experiments", EXP, "--tag", "peers", "--ours-tag", "ours", "--db", str(db), "--no-plot", "--out",
          str(full)])
    before = json.loads(full.with_suffix(".json").read_text())
    assert before[0]["per_input"]["art-hsj"]["8000"] == [0.5, 0.5, 0.9]
    # A database that holds our runs only (tag "ours" in a new file): the peers come from the stored JSON.
    only_ours = RunStore(tmp_path / "ours-only.sqlite", "ours")
    for r in ours.records(EXP, "ours-sign-growing"):
        only_ours.save(r)
    again = tmp_path / "again.md"
    args = ["--experiments", EXP, "--tag", "ours", "--db", str(tmp_path / "ours-only.sqlite"), "--no-plot",
            "--out", str(again)]
    main([*args, "--peers-from", str(full.with_suffix(".json"))])
    after = json.loads(again.with_suffix(".json").read_text())
    assert after[0]["ratio"] == pytest.approx(before[0]["ratio"])
    assert after[0]["best_peer"] == before[0]["best_peer"]
    for b, span in before[0]["ratio_interval"].items():
        assert after[0]["ratio_interval"][b] == pytest.approx(span)
    assert after[0]["from_stored"]["art-hsj"] == "per-input" and "resampled like any run" in again.read_text()
    # A JSON written before the per-input values were kept: the same ratios, the peers' medians held fixed.
    old = [{k: v for k, v in before[0].items() if k != "per_input"}]
    (tmp_path / "old.json").write_text(json.dumps(old))
    main([*args, "--peers-from", str(tmp_path / "old.json")])
    fixed = json.loads(again.with_suffix(".json").read_text())[0]
    assert fixed["ratio"] == pytest.approx(before[0]["ratio"]) and fixed["from_stored"]["art-hsj"] == "medians"
    assert "art-hsj" not in fixed["per_input"] and "medians alone" in again.read_text()
    assert "per_input_ratio" not in fixed  # no per-input pairing with a peer known by its medians alone
    lo, hi = fixed["ratio_interval"]["8000"]
    assert lo == hi == pytest.approx(0.4 / 0.5)  # our three inputs alike, the peer's spread left out
    assert before[0]["ratio_interval"]["8000"][0] < lo  # ... which the per-input values keep
    # Inputs that do not pair up are refused, with what to do.
    (tmp_path / "short.json").write_text(json.dumps([{**old[0], "inputs": [0, 1]}]))
    with pytest.raises(SystemExit, match="would not pair up"):
        main([*args, "--peers-from", str(tmp_path / "short.json")])


def test_a_peer_run_since_joins_a_redrawn_page_and_can_be_the_best(tmp_path: Path) -> None:
    db, peers, ours, _ = _stores(tmp_path)
    full = tmp_path / "full.md"
    main(["--experiments", EXP, "--tag", "peers", "--ours-tag", "ours", "--db", str(db), "--no-plot", "--out",
          str(full)])
    before = json.loads(full.with_suffix(".json").read_text())[0]
    assert before["best_peer"]["1000"] == "fb-boundary"
    # CGBA-H run since, in a database of its own: lower than every stored peer at 1000 on each input.
    added = RunStore(tmp_path / "added.sqlite", "full")
    for i in range(3):
        added.save(_record("cgba-h", i, [200, 1000, 8000], [2.2, 0.5, 0.55]))
    again = tmp_path / "again.md"
    main(["--experiments", EXP, "--redraw", str(full.with_suffix(".json")), "--add-runs", "cgba-h", "--db",
          str(tmp_path / "added.sqlite"), "--no-plot", "--out", str(again)])
    after = json.loads(again.with_suffix(".json").read_text())[0]
    assert after["medians"]["cgba-h"]["1000"] == pytest.approx(0.5)
    assert after["best_peer"]["1000"] == "cgba-h" and after["ratio"]["1000"] == pytest.approx(2.4 / 0.5)
    assert after["best_peer"]["8000"] == "art-hsj" and after["ratio"]["8000"] == pytest.approx(before["ratio"]["8000"])
    assert after["medians"]["ours-sign-growing"] == before["medians"]["ours-sign-growing"]  # ours as stored
    assert "but for cgba-h, read from the runs in the database" in again.read_text()
    with pytest.raises(SystemExit):
        main(["--experiments", EXP, "--add-runs", "cgba-h", "--db", str(db), "--no-plot", "--out", str(again)])


def test_without_intervals_the_misses_line_does_not_count_them() -> None:
    t = {"experiment": EXP, "ratio": {"8000": 0.95}, "below_floor": {"8000": False}, "ratio_interval": {},
         "interval_level": 0.9}
    line = misses_line([t])
    assert "missed in 1 cells" in line and "no bootstrap intervals" in line and "reaches" not in line


def test_a_plan_stands_for_its_options_and_an_option_given_wins() -> None:
    a = _options(["--plan", "full"])
    assert (a.tag, a.ours_tag, a.planned) == ("full", "base-50000", "art-geoda=geoda-{B}")
    pairs = dict(x.split("=") for x in a.ours_at.split(","))
    assert len(pairs) == 15 and pairs["4229"] == "base-4229" and pairs["50000"] == "base-50000"
    assert _options(["--plan", "full", "--tag", "other"]).tag == "other"
    assert _options(["--plan", "full", "--redraw"]).redraw == PAGE.relative_to(ROOT).with_suffix(".json")


def _same(x: object, y: object) -> bool:
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(map(_same, x, y))
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x):
        return math.isnan(y)
    return x == y


def test_the_full_page_redraws_from_its_committed_json_without_a_database(tmp_path: Path, monkeypatch) -> None:
    """The page's own command, in a folder that holds nothing but the page's JSON, with no database anywhere:
    the same figures as the committed JSON, and the committed page to the byte (the page is what it says made it)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ZEROOPT_CACHE", str(cache))
    folder = tmp_path / PAGE.parent.relative_to(ROOT)
    folder.mkdir(parents=True)
    shutil.copy(PAGE.with_suffix(".json"), folder)
    monkeypatch.chdir(tmp_path)
    command = PAGE.read_text().splitlines()[2]
    assert command == "Command: `python -m benchmarks.headline --plan full --redraw`"
    main(["--plan", "full", "--redraw"])
    assert not cache.exists()  # no database was opened, nor made
    committed = json.loads(PAGE.with_suffix(".json").read_text())
    drawn = json.loads((folder / "headline.json").read_text())
    assert [t["experiment"] for t in drawn] == [t["experiment"] for t in committed]
    for was, now in zip(committed, drawn, strict=True):
        for field in ("inputs", "medians", "ratio", "best_peer", "ratio_interval", "per_input_ratio",
                      "below_floor", "ours_run_budget", "per_input"):
            assert _same(now[field], was[field]), (was["experiment"], field)
        assert set(now["from_stored"].values()) == {"per-input"} and "ours-sign-growing" in now["from_stored"]
    assert (folder / "headline.md").read_text() == PAGE.read_text()
    assert (folder / "headline.png").stat().st_size > 0


def test_without_runs_or_a_stored_table_the_headline_says_what_to_do(tmp_path: Path) -> None:
    db = tmp_path / "empty.sqlite"
    with pytest.raises(SystemExit, match="--redraw"):
        main(["--experiments", EXP, "--db", str(db), "--out", str(tmp_path / "h.md"), "--no-plot"])
    _, peers, _, _ = _stores(tmp_path)  # peers in the database, none of ours: --peers-from gives all but ours
    stored = tmp_path / "stored.json"
    stored.write_text(json.dumps([table(peers, EXP, "art-hsj")]))
    with pytest.raises(SystemExit, match="no runs"):
        main(["--experiments", EXP, "--tag", "nothing", "--db", str(tmp_path / "runs.sqlite"), "--peers-from",
              str(stored), "--out", str(tmp_path / "h.md"), "--no-plot"])
    with pytest.raises(SystemExit, match="no table of this experiment"):
        main(["--experiments", "mnist-untargeted", "--redraw", str(stored), "--out", str(tmp_path / "h.md")])
