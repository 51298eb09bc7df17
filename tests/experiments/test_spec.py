import pytest

from ckb.errors import SpecError, UnknownNameError
from ckb.experiments import ExperimentSpec, load_spec, shipped

GOOD = {
    "name": "tiny",
    "horizon": 50,
    "trials": 2,
    "problem": {"name": "rkhs-synthetic", "n_grid": 20, "constraint": "neg-f-plus-h"},
    "algorithms": {"ucb": {"policy": "igp-ucb", "B": 1.0}},
}


def spec(**changes):
    raw = {k: (dict(v) if isinstance(v, dict) else v) for k, v in GOOD.items()}
    raw.update(changes)
    return ExperimentSpec.from_dict(raw, source="test.toml")


def test_good_spec_builds_configs():
    s = spec().validate()
    cfgs = s.configs()
    assert [(c.algorithm, c.trial) for c in cfgs] == [("ucb", 0), ("ucb", 1)]
    assert cfgs[0].policy_params == {"B": 1.0}


def test_a_policy_that_cannot_run_under_the_environment_is_refused_by_validate():
    """Before, rpol-sw-ucb under independent delays passed validation and failed in round 13 of the sweep."""
    raw = {
        **GOOD,
        "problem": {"name": "gardner", "grid": 10},
        "environment": {"name": "delayed"},
        "algorithms": {"sw": {"policy": "rpol-sw-ucb"}},
    }
    with pytest.raises(
        SpecError,
        match=r"^field 'algorithms.sw' in test.toml: policy 'rpol-sw-ucb' .*arrive separately.*joint",
    ):
        ExperimentSpec.from_dict(raw, source="test.toml").validate()
    raw["environment"] = {"name": "delayed", "joint": True}
    ExperimentSpec.from_dict(raw, source="test.toml").validate()


def _missing_data_file(s) -> str | None:
    """The real-data file a spec's problem needs, if it cannot be found here (else None)."""
    from ckb.errors import DataFileError
    from ckb.problems.data import FINANCE_FILE, LIGHT_SENSOR_FILE, find_data_file

    filename = {"light-sensor": LIGHT_SENSOR_FILE, "finance": FINANCE_FILE}.get(getattr(s, "problem", None))
    if filename is None:
        return None
    try:
        find_data_file(filename, s.problem_params.get("data_dir"))
    except DataFileError:
        return filename
    return None


@pytest.mark.parametrize("name", sorted(shipped()))
def test_shipped_specs_validate(name):
    s = load_spec(name)
    missing = _missing_data_file(s)
    if missing is None:
        s.validate()
    else:  # a clone without ../shared/data: validation stops with an error naming the file and the fix
        with pytest.raises(SpecError, match=f"data file '{missing}' not found.*CKB_DATA_DIR"):
            s.validate()


@pytest.mark.parametrize("name", sorted(shipped()))
def test_shipped_specs_name_papers_by_authors_not_by_our_file_numbers(name):
    # what ckb spec / ckb list / the reproduction reports show: no paper file number (000-004) and no
    # reference to our engineering notes ("digest")
    import re

    text = shipped()[name].read_text()
    assert not re.findall(r"(?<![\d,.])\b00[0-4]\b(?![\d,.]\d)", text)
    assert "digest" not in text.lower()


def test_unknown_top_level_field_suggests_closest():
    with pytest.raises(SpecError, match="'horizn'.*Did you mean 'horizon'"):
        ExperimentSpec.from_dict({**GOOD, "horizn": 5})


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"horizon": 0}, "'horizon'.* >= 1"),
        ({"trials": "many"}, "'trials'.*integer"),
        ({"algorithms": {}}, "at least one algorithm"),
        ({"problem": {"n_grid": 5}}, "problem.name"),
        ({"report": {"boxplot": True}}, "report.boxplot.*Did you mean 'boxplots'"),
        ({"report": {"checkpoints": [10, 0]}}, "report.checkpoints.*>= 1"),
        ({"report": {"utility": "yes"}}, "report.utility.*bool"),
    ],
)
def test_bad_fields_are_named(changes, match):
    with pytest.raises(SpecError, match=match):
        spec(**changes)


def test_missing_required_field():
    raw = dict(GOOD)
    raw.pop("horizon")
    with pytest.raises(SpecError, match="missing required field 'horizon'"):
        ExperimentSpec.from_dict(raw)


def test_unknown_policy_and_problem_are_named_with_suggestions():
    with pytest.raises(SpecError, match=r"algorithms\.ucb\.policy.*igp-ucb"):
        spec(algorithms={"ucb": {"policy": "igp-ucbb"}}).validate()
    with pytest.raises(SpecError, match=r"problem\.name.*rkhs-synthetic"):
        spec(problem={"name": "rkhs"}).validate()


def test_bad_policy_parameter_is_named():
    with pytest.raises(SpecError, match=r"algorithms\.ucb.*no parameter 'Bx'.*'B'"):
        spec(algorithms={"ucb": {"policy": "igp-ucb", "Bx": 1.0}}).validate()
    with pytest.raises(SpecError, match=r"algorithms\.ucb.*R must be >= 0"):
        spec(algorithms={"ucb": {"policy": "igp-ucb", "R": -1.0}}).validate()


def test_bad_problem_parameter_is_named():
    with pytest.raises(SpecError, match=r"'problem'.*n_grd"):
        spec(problem={"name": "rkhs-synthetic", "n_grd": 5}).validate()


def test_overrides_and_set():
    s = spec().with_overrides(trials=5, sets=["algorithms.ucb.beta_scale=0.5", "problem.n_grid=10"])
    assert s.trials == 5
    assert s.algorithms["ucb"][1]["beta_scale"] == 0.5
    assert s.problem_params["n_grid"] == 10
    with pytest.raises(SpecError, match="KEY=VALUE"):
        spec().with_overrides(sets=["oops"])
    with pytest.raises(SpecError, match="no table 'algoritms'"):
        spec().with_overrides(sets=["algoritms.ucb.B=1"])


def test_load_by_path_and_errors(tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text(
        'name = "mine"\nhorizon = 10\ntrials = 1\n[problem]\nname = "rkhs-synthetic"\n[algorithms.a]\npolicy = "igp-ucb"\n'
    )
    assert load_spec(p).name == "mine"
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(bad)
    with pytest.raises(SpecError, match="does not exist"):
        load_spec(tmp_path / "nope.toml")
    with pytest.raises(UnknownNameError, match="gpucb-synthetic"):
        load_spec("gpucb-synthetc")


def test_loglog_slope_recovers_the_growth_exponent():
    import numpy as np

    from ckb.experiments.report import loglog_slope

    t = np.arange(1, 1001, dtype=float)
    assert loglog_slope(3 * t**0.5) == pytest.approx(0.5, abs=1e-9)
    assert loglog_slope(np.log1p(t)) < 0.2
    assert loglog_slope(np.zeros(1000)) is None


def test_burn_in_is_the_first_round_from_which_the_curve_stays_nonpositive():
    import numpy as np

    from ckb.experiments.report import burn_in

    assert burn_in(np.array([1.0, 2.0, -1.0, 0.5, 0.0, -3.0])) == 5  # rounds 5 and 6 are <= 0
    assert burn_in(np.array([-1.0, -2.0])) == 1
    assert burn_in(np.array([-1.0, 0.1])) is None


def test_report_checkpoints_utility_and_boxplots(tmp_path):
    from ckb.experiments import run_experiment

    s = spec(
        report={"checkpoints": [10, 30, 80], "utility": True, "boxplots": True},
        horizon=40,
        problem={"name": "fixed-penalty-counterexample"},  # a fixed instance: f* = f(0) = -0.25
    ).validate()
    out = run_experiment(s, tmp_path, workers=1)
    cp = out["checkpoints"]["ucb"]
    assert cp["t"] == [10, 30, 40]  # clipped to T, T added
    # time-averaged utility = f* - R(t)/t (maximization); V(t)/t = V(t) / t
    for u, r in zip(cp["utility_over_t"], cp["regret_over_t"]):
        assert u == pytest.approx(-0.25 - r)
    assert cp["violation_over_t"][-1] == pytest.approx(out["algorithms"]["ucb"]["violation"]["mean"] / 40)
    assert (tmp_path / "box_utility_over_t.png").exists() and (tmp_path / "box_violation_over_t.png").exists()
    assert (tmp_path / "violation_over_t.png").exists()
    assert s.with_overrides(trials=1).report == s.report
