"""The constrained benchmark: metrics on hand-made histories, the runner end to end, resuming."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ckb.benchmarking.constrained import (
    RunConfig,
    _worker,
    best_feasible_curve,
    final_gap,
    gap_curve,
    markdown_table,
    plan,
    regime_tables,
    run_benchmark,
    run_metrics,
    scaled_positive_violation,
    scaled_soft_violation,
    summarize,
    violating_evaluations,
    within_budget,
)
from ckb.errors import CKBError, InvalidInputError, UnknownNameError
from ckb.optimizer import initial_design
from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS, ConstrainedBenchmark

# f* = 1 (minimized), gap scale |f*| = 1; two constraints with typical magnitudes 2 and 0.5
BENCH = ConstrainedBenchmark("hand", "gramacy", {}, (2.0, 0.5), 1.0, 4.0, "hand-made")
F = np.array([0.5, 3.0, 2.0, 1.5, 0.9, 1.01])
G = np.array(
    [
        [1.0, -1.0],  # infeasible (f = 0.5 would beat f*)
        [-1.0, -1.0],  # feasible, f = 3
        [2.0, 0.5],  # infeasible in both
        [-0.1, 0.0],  # feasible (g = 0 counts as feasible), f = 1.5
        [-1.0, 0.25],  # infeasible
        [-1.0, -2.0],  # feasible, f = 1.01
    ]
)


def test_metrics_on_a_hand_made_history():
    np.testing.assert_allclose(best_feasible_curve(F, G, minimize=True), [np.nan, 3, 3, 1.5, 1.5, 1.01])
    np.testing.assert_allclose(
        gap_curve(F, G, BENCH, minimize=True), [np.inf, 2, 2, 0.5, 0.5, 0.01], atol=1e-12
    )
    assert final_gap(F, G, BENCH, minimize=True) == pytest.approx(0.01)
    # positive parts summed per constraint: (1 + 2, 0.5 + 0.25) / (2, 0.5) = (1.5, 1.5); Euclidean norm
    assert scaled_positive_violation(G, BENCH.constraint_scale) == pytest.approx(math.hypot(1.5, 1.5))
    assert violating_evaluations(G) == 3
    # signed sums (-0.1, -3.25): the cumulative constraint holds; over the first three rows the sums are
    # (2, -1.5) -> ([2 / 2]^+, [-1.5 / 0.5]^+) = (1, 0)
    assert scaled_soft_violation(G, BENCH.constraint_scale) == 0.0
    assert scaled_soft_violation(G[:3], BENCH.constraint_scale) == pytest.approx(1.0)
    # maximizing the same history: the best feasible value is the largest feasible f
    np.testing.assert_allclose(best_feasible_curve(F, G), [np.nan, 3, 3, 3, 3, 3])
    # no feasible evaluation: infinite gap
    assert final_gap(F[:1], G[:1], BENCH, minimize=True) == math.inf
    with pytest.raises(InvalidInputError, match="2 positive"):
        scaled_positive_violation(G, [1.0])
    record = {"problem": "hand", "n_init": 2, "minimize": True, "f": F, "g": G, "seconds": [9, 9, 1, 2, 3, 4]}
    m = run_metrics(record, BENCH)
    assert m["violating_after_init"] == 2 and m["seconds_per_iteration"] == pytest.approx(2.5)
    assert m["scaled_violation_after_init"] == pytest.approx(math.hypot(1.0, 1.5))
    assert m["scaled_soft_violation"] == 0.0


def test_within_budget_sums_each_constraints_violations_after_the_design_against_b_scales():
    # after the design (2 rows): positive parts (2, 0.5 + 0.25) = (2, 0.75) against b * (2, 0.5)
    record = {"problem": "hand", "n_init": 2, "f": F, "g": G}
    assert within_budget({**record, "method": "pcei-b1"}, BENCH) is False  # 0.75 > 0.5
    assert within_budget({**record, "method": "pcei-b5"}, BENCH) is True  # 2 <= 10, 0.75 <= 2.5
    assert within_budget({**record, "method": "pcei-b1", "n_init": 5}, BENCH) is True  # last row feasible
    assert within_budget({**record, "method": "pcei-b0", "n_init": 5}, BENCH) is True
    assert within_budget({**record, "method": "pcei-b0", "n_init": 4}, BENCH) is False  # 0.25 > 0
    # a known-feasible design: no violating evaluation at all, the design's rows included
    feas = {**record, "method": "pcei-b0-feasible-design", "n_init": 5}
    assert within_budget(feas, BENCH) is False
    assert within_budget({**feas, "g": G[[1, 3, 5]], "f": F[[1, 3, 5]], "n_init": 1}, BENCH) is True
    assert within_budget({**record, "method": "pcei"}, BENCH) is None  # no budget
    assert run_metrics({**record, "method": "pcei-b5", "minimize": True, "seconds": [1] * 6}, BENCH)[
        "within_budget"
    ]


def test_summary_statistics_and_infinite_gaps():
    base = {"problem": "gramacy", "method": "x", "n_init": 1, "minimize": True, "d": 2, "budget": 2}
    base["X"] = [[0.5, 0.5], [0.5, 0.5]]
    bench = CONSTRAINED_BENCHMARKS["gramacy"]
    feasible, infeasible = [-1.0, -1.0], [1.0, 1.0]
    records = [
        {**base, "seed": 0, "f": [2.0, bench.f_star], "g": [infeasible, feasible], "seconds": [0, 1]},
        {**base, "seed": 1, "f": [2.0, 2.0], "g": [infeasible, infeasible], "seconds": [0, 3]},
        {**base, "seed": 2, "f": [2.0, 0.6 * 1.5], "g": [feasible, feasible], "seconds": [0, 2]},
    ]
    r = summarize(records)["problems"]["gramacy"]["methods"]["x"]
    gaps = r["final_gap"]["values"]
    assert gaps[0] == pytest.approx(0.0, abs=1e-12) and gaps[1] is None  # None: no feasible point (inf)
    assert r["solved"] == 1 and r["no_feasible"] == 1
    assert r["final_gap"]["median"] == pytest.approx((0.9 - bench.f_star) / bench.f_star)
    assert r["final_gap"]["q75"] is None  # between a finite gap and an infinite one
    assert r["seconds_per_iteration"]["median"] == 2.0
    assert r["best_feasible_curve"]["median"][0] is None  # 2 of 3 seeds infeasible at t = 1
    json.dumps(r)  # JSON-safe (no infinities)
    assert r["within_budget"] is None  # "x" has no budget
    # a budget variant: seeds 0 and 2 spend nothing after the design, seed 1 spends 1 scale per constraint
    budgeted = [{**rec, "method": "pcei-b0"} for rec in records]
    summary = summarize(records + budgeted)
    assert summary["problems"]["gramacy"]["methods"]["pcei-b0"]["within_budget"] == 2
    tables = regime_tables(summary)
    assert "Violation budget" in tables and "| pcei-b0 | 2/3, " in tables
    assert "| x |" not in tables.split("Violation budget")[1]  # only budget variants in its table


def test_plan_validates_names_and_sizes():
    cfgs = plan(["gramacy", "gardner-2"], ["sobol"], 3, 10)
    assert len(cfgs) == 6 and {c.seed for c in cfgs} == {0, 1, 2}
    assert plan(["gramacy"], ["sobol"], [5, 7], 10)[1].seed == 7
    with pytest.raises(UnknownNameError, match="gramacy"):
        plan(["gramcy"], ["sobol"], 1, 10)
    with pytest.raises(UnknownNameError, match="qlognei"):
        plan(["gramacy"], ["qlogne"], 1, 10)
    with pytest.raises(InvalidInputError, match="budget"):
        plan(["gramacy"], ["sobol"], 1, 1)
    with pytest.raises(InvalidInputError, match="not among the methods"):
        plan(["gramacy"], ["sobol"], 1, 10, method_params={"qlognei": {}})


def test_runner_end_to_end_resume_and_report(tmp_path):
    cfgs = plan(
        ["gramacy"],
        ["sobol", "qlognei"],
        1,
        8,
        method_params={"qlognei": {"num_restarts": 2, "raw_samples": 32, "mc_samples": 32}},
    )
    seen = []
    summary = run_benchmark(
        cfgs, tmp_path, workers=1, on_done=lambda c, skipped, st: seen.append((c.method, skipped, st["ok"]))
    )
    assert sorted(seen) == [("qlognei", False, True), ("sobol", False, True)]
    assert summary["errors"] == [] and summary["runs_executed"] == 2
    entry = summary["problems"]["gramacy"]
    assert entry["n_init"] == 6 and entry["initial_design_shared"]
    design = initial_design([0, 0], [1, 1], 6, 0)
    for c in cfgs:
        rec = json.loads(c.path(tmp_path).read_text())
        X = np.array(rec["X"])
        assert X.shape == (8, 2) and np.all((X >= 0) & (X <= 1))
        np.testing.assert_allclose(X[:6], design)  # the shared Sobol design
        f, g = np.array(rec["f"]), np.array(rec["g"])
        P = CONSTRAINED_BENCHMARKS["gramacy"].make()
        np.testing.assert_allclose(f, X.sum(axis=1))  # true values recorded
        np.testing.assert_allclose(g, np.stack([P.evaluate(-1, x)[1] for x in X]))
        assert len(rec["seconds"]) == 8 and rec["config"] == c.identity()
        m = entry["methods"][c.method]
        assert m["violating_evaluations"]["values"] == [int(np.sum(np.any(g > 0, axis=1)))]
    assert len(entry["methods"]["sobol"]["best_feasible_curve"]["median"]) == 8
    table = (tmp_path / "table.md").read_text()
    assert "| qlognei |" in table and "| sobol |" in table and "gap / |f*|" in table
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert table == markdown_table(summary) + "\n" + regime_tables(summary)
    assert "Cumulative regime" in table and "Best-feasible regime" in table
    assert "Violation budget" not in table  # no budget variant ran
    assert (tmp_path / "plots" / "best-feasible-gramacy.png").stat().st_size > 0

    # a second run reuses both files and changes nothing
    mtimes = [c.path(tmp_path).stat().st_mtime_ns for c in cfgs]
    seen.clear()
    again = run_benchmark(cfgs, tmp_path, workers=1, plots=False, on_done=lambda c, s, st: seen.append(s))
    assert seen == [True, True] and again["runs_executed"] == 0 and again["runs_reused"] == 2
    assert [c.path(tmp_path).stat().st_mtime_ns for c in cfgs] == mtimes
    assert again["problems"] == summary["problems"]
    # another configuration in the same directory stops the run and names the file
    with pytest.raises(CKBError, match="seed-000.json"):
        run_benchmark(plan(["gramacy"], ["sobol"], 1, 9), tmp_path, workers=1, plots=False)


def test_a_failing_run_is_reported_not_written(tmp_path):
    cfg = RunConfig("sobol", "gramacy", 0, 8, None, {"no_such_option": 1})
    status = _worker(({**cfg.identity(), "params": cfg.params}, str(tmp_path)))
    assert not status["ok"] and "no_such_option" in status["error"]
    assert not cfg.path(tmp_path).exists()
    summary = run_benchmark([cfg], tmp_path, workers=1, plots=False)
    assert len(summary["errors"]) == 1 and summary["problems"] == {}


def test_the_code_digest_covers_the_rules_the_optimizer_decides_with(tmp_path):
    """A change to a rule (ckb/rules) or a width (ckb/exploration) changes the digest recorded with
    every run, as a change to ckb/optimizer does; other packages do not."""
    import shutil

    import ckb
    from ckb.benchmarking.constrained import source_digest

    root = tmp_path / "ckb"
    for sub in ("optimizer", "rules", "exploration", "problems"):
        shutil.copytree(Path(ckb.__file__).parent / sub, root / sub)
    before = source_digest(root)
    for sub in ("rules", "exploration", "optimizer"):
        f = sorted((root / sub).glob("*.py"))[-1]
        f.write_text(f.read_text() + "\n# changed\n")
        assert source_digest(root) != before, sub
        before = source_digest(root)
    f = sorted((root / "problems").glob("*.py"))[-1]
    f.write_text(f.read_text() + "\n# changed\n")
    assert source_digest(root) == before


def test_every_stored_run_record_names_the_method_directory_it_is_filed_under():
    """A report groups records by their method field, so a record moved to a variant's directory must
    say so (the former slack-cei records moved to ``slack-cei-endgame`` once said "slack-cei" and would
    have been pooled with the new ones)."""
    import re

    root = Path(__file__).resolve().parents[2] / "benchmarks" / "records" / "constrained"
    paths = sorted(root.glob("*/*/seed-*.json"))
    assert paths, f"no run records under {root}"
    wrong = []
    for path in paths:
        with path.open() as fh:
            head = fh.read(300)
        found = re.search(r'"config": \{"method": "([^"]+)"', head)
        method = re.search(r'"method": "([^"]+)", "problem"', head[found.end() :]) if found else None
        names = (found and found.group(1), method and method.group(1))
        if names != (path.parent.name, path.parent.name) or path.parent.parent.name not in head:
            wrong.append(f"{path.relative_to(root)}: {names}")
    assert not wrong, f"{len(wrong)} record(s) name another method: {wrong[:5]}"


def test_plan_refuses_a_repeated_name_and_a_budget_the_design_fills():
    """A repeated name ran one setup twice into one record ("2 seeds, 0/2 solved" from seed 0 alone), and
    a budget of 3 on Hartmann-6 was tabulated as "3 evaluations incl. 14 Sobol"."""
    from ckb.benchmarking.constrained import plan
    from ckb.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="'gardner-1' is named twice"):
        plan(["gardner-1", "gardner-1"], ["sobol"], 1, 20)
    with pytest.raises(InvalidInputError, match="'sobol' is named twice"):
        plan(["gardner-1"], ["sobol", "sobol"], 1, 20)
    with pytest.raises(
        InvalidInputError,
        match=r"budget 3 is smaller than the initial design of 'hartmann6-ball' \(14 points\)",
    ):
        plan(["hartmann6-ball"], ["sobol"], 1, 3)
    assert len(plan(["hartmann6-ball"], ["sobol"], 1, 14)) == 1


def test_the_gap_axis_names_the_difference_it_plots(tmp_path, monkeypatch):
    """The gap is u* - u(best): f* - f_best for a maximized objective (Gardner 2), f_best - f* for a
    minimized one (Gramacy); the axis said "f_best - f*" for both."""
    from pathlib import Path

    from ckb.benchmarking import constrained

    root = Path(__file__).resolve().parents[2] / "benchmarks" / "records" / "constrained"
    records = [
        constrained.load_record(next(iter(sorted((root / p / "cei").glob("*.json")))))
        for p in ("gardner-2", "gramacy")
    ]
    assert [r["minimize"] for r in records] == [False, True]
    labels = {}

    def keep(fig, path, dpi=110):
        labels[Path(path).name] = fig.axes[1].get_ylabel()

    monkeypatch.setattr(constrained, "save_figure", keep)
    constrained.plot_curves(records, tmp_path)
    assert "(f* - f_best)" in labels[constrained.plot_name("gardner-2")]
    assert "(f_best - f*)" in labels[constrained.plot_name("gramacy")]


def test_the_pcei_variants_keep_the_line_search_their_records_were_run_with():
    """pcei's maximizer takes 10 line-search steps since ``max_line_search`` became its own default; every
    pcei variant measured before (the default's violation budgets included) pins SciPy's 20, so it
    replays its records, while ``pcei`` itself runs the policy's default."""
    from ckb.benchmarking.constrained import VARIANTS

    pcei = {name: options for name, (policy, options) in VARIANTS.items() if policy == "pcei"}
    assert {"pcei-ls20", "pcei-no-expand", "pcei-b1", "pcei-b0-feasible-design"} <= set(pcei)
    for name, options in pcei.items():
        assert options["params"]["max_line_search"] == 20, name
    others = [o for policy, o in VARIANTS.values() if policy != "pcei"]
    assert all("max_line_search" not in o.get("params", {}) for o in others)
    assert "pcei" not in VARIANTS
