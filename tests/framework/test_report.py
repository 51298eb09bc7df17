import numpy as np

from ckb.framework.report import table_rows


def _m(regret, violation):
    s = lambda mean, se: {"mean": mean, "stderr": se, "median": mean}
    return {
        "regret": s(*regret),
        "violation": s(*violation),
        "positive_violation": s(0.0, 0.0),
        "violating_rounds": s(3.0, 1.0),
        "seconds_per_round": s(0.001, 0.0),
    }


def test_float_noise_prints_as_zero_relative_to_the_table_scale():
    summary = {"horizon": 100, "algorithms": {"a": _m((120.0, 3.0), (1.15e-14, 3.55e-15))}}
    _, rows = table_rows(summary)
    assert rows[0][3] == "0 ± 0"
    assert rows[0][1] == "120 ± 3"
    # a small value that is not noise relative to the scale is kept
    summary = {"horizon": 100, "algorithms": {"a": _m((2e-6, 1e-7), (1.5e-7, 1e-8))}}
    assert table_rows(summary)[1][0][3] == "1.5e-07 ± 1e-08"


def test_mean_curves_of_one_round_and_of_one_trial_are_drawn_honestly(tmp_path, monkeypatch):
    """A horizon of 1 drew each curve as a line of one point, so the PNG was empty; one trial drew a
    standard-error band 0 wide and a title "mean ± s.e. over 1 trials"; the title named the trial count
    of the last label only."""
    import matplotlib.pyplot as plt

    from ckb.framework import report

    figures = []
    monkeypatch.setattr(report, "save_figure", lambda fig, path, dpi=110: figures.append(fig))
    one_round = {"a": {"regret": np.array([[1.0], [3.0]])}, "b": {"regret": np.array([[2.0], [2.0]])}}
    report.plot_mean_curves(tmp_path, "x", one_round, {"regret": "R(t)"})
    ax = figures[-1].axes[0]
    assert [line.get_marker() for line in ax.lines] == ["o", "o"]
    assert ax.get_title() == "x: mean ± s.e. over 2 trials"
    one_trial = {"a": {"regret": np.array([[0.0, 1.0, 2.0]])}}
    report.plot_mean_curves(tmp_path, "x", one_trial, {"regret": "R(t)"})
    ax = figures[-1].axes[0]
    assert not ax.collections  # no band
    assert ax.get_title() == "x: one trial each (no standard error)"
    mixed = {"a": {"regret": np.zeros((2, 3))}, "b": {"regret": np.zeros((5, 3))}}
    report.plot_mean_curves(tmp_path, "x", mixed, {"regret": "R(t)"})
    assert figures[-1].axes[0].get_title() == "x: mean ± s.e. over 2-5 trials"
    plt.close("all")


def test_one_trial_prints_its_value_without_a_standard_error():
    """One trial's standard error is undefined (summary.json stores 0): the table printed "1.81 ± 0"."""
    from ckb.framework.report import _mean_se, stats

    assert _mean_se(stats(np.array([1.81]))) == "1.81"
    assert _mean_se(stats(np.array([1.0, 3.0]))) == "2 ± 1"


def test_a_problem_without_black_box_constraints_prints_no_violation():
    """m = 0 (DMABO's power allocation: one affine constraint only) printed V(T) = 0, sum [g]+ = 0 and
    N = 0, which read as "never violated" where the affine budget was exceeded in a third of the rounds."""
    from ckb.framework.report import stats, table_rows

    metrics = {
        k: stats(np.array([0.0, 0.0])) for k in ("violation", "positive_violation", "violating_rounds")
    }
    alg = {
        "regret": stats(np.array([1.0, 3.0])),
        "seconds_per_round": stats(np.array([1e-3, 1e-3])),
        **metrics,
    }
    summary = {"horizon": 10, "algorithms": {"a": alg}, "problem_instance_0": {"m": 0}}
    header, rows = table_rows(summary)
    assert rows[0][header.index("V(T)") : header.index("N median") + 1] == ["-"] * 4
    summary["problem_instance_0"]["m"] = 1
    assert table_rows(summary)[1][0][header.index("V(T)")] == "0 ± 0"
