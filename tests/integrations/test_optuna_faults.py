"""CKBSampler on bad input (the robustness report's items 15-21): what constraints_func returns, resumes
with other settings (refused before the trial runs, the study left as it was), settings pinned at the first
trial, n_trials that cannot hold the initial design, and a parameter whose range changes mid-study."""

from __future__ import annotations

import logging
import math

import pytest

optuna = pytest.importorskip("optuna")
pytest.importorskip("botorch")

from ckb.errors import InvalidInputError  # noqa: E402
from ckb.integrations.optuna import SPEC_KEY, CKBSampler  # noqa: E402
from tests.checks import one_line as _one_line  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)

#: small maximizer settings: these tests check messages and bookkeeping
FAST = {"num_restarts": 2, "raw_samples": 32, "maxiter": 20}
COMPLETE, WAITING, FAIL = (
    optuna.trial.TrialState.COMPLETE,
    optuna.trial.TrialState.WAITING,
    optuna.trial.TrialState.FAIL,
)


def _objective(trial):
    """One parameter, one constraint (x <= 0.6): the design is 2d + 2 = 4 trials."""
    x = trial.suggest_float("x", 0.0, 1.0)
    trial.set_user_attr("g", [x - 0.6])
    return (x - 0.3) ** 2


def _g(trial):
    return trial.user_attrs["g"]


def _study(constraints_func=_g, **kw):
    sampler = CKBSampler(policy="config", constraints_func=constraints_func, seed=0, **FAST, **kw)
    return optuna.create_study(sampler=sampler)


# ------------------------------------------------------------------------- items 15-17: constraints_func
@pytest.mark.parametrize(
    "bad",
    [0.5, None, "0.5", {"g": 0.5}, ["0.5"], [[0.1], [0.2]], [True], {0.5}],
    ids=["scalar", "none", "str", "dict", "str-item", "nested", "bool", "set"],
)
def test_constraints_func_must_return_a_flat_sequence_of_numbers_from_the_first_trial(bad):
    study = _study(constraints_func=lambda t: bad)
    with pytest.raises(InvalidInputError) as err:
        study.optimize(_objective, n_trials=3)
    text = _one_line(err)
    assert text.startswith(f"constraints_func returned {bad!r} for trial 0")
    assert "flat sequence of real numbers" in text
    assert len(study.trials) == 1  # refused where the sampler receives it, at the first trial
    # trial 0 keeps no constraint values (as Optuna stores a refused result) and counts as a failed
    # evaluation: the study continues once constraints_func is fixed
    assert study.trials[0].system_attrs["constraints"] is None
    study.sampler = CKBSampler(policy="config", constraints_func=_g, seed=0, **FAST)
    study.optimize(_objective, n_trials=5)
    assert len(study.sampler.decisions(study)) == 2  # trials 4 and 5


def test_constraints_func_must_return_the_studys_number_of_values():
    study = _study(constraints_func=lambda t: [])
    with pytest.raises(InvalidInputError, match=r"returned \[\] for trial 0; CKBSampler needs at least one"):
        study.optimize(_objective, n_trials=1)
    values = iter([[0.1], [0.1], [0.1, 0.2]])
    study = _study(constraints_func=lambda t: next(values))
    with pytest.raises(InvalidInputError) as err:
        study.optimize(_objective, n_trials=3)
    assert _one_line(err).startswith(
        "constraints_func returned [0.1, 0.2] for trial 2: 2 value(s) where the study's trials have 1"
    )
    assert study.trials[2].system_attrs["constraints"] is None
    assert [t.system_attrs["constraints"] for t in study.trials[:2]] == [(0.1,), (0.1,)]  # unchanged


def test_an_infinite_constraint_value_is_a_failed_evaluation_and_said_so(caplog):
    def cf(trial):
        return [math.inf] if trial.number == 1 else trial.user_attrs["g"]

    study = _study(constraints_func=cf)
    with caplog.at_level(logging.WARNING, logger="ckb.integrations.optuna"):
        study.optimize(_objective, n_trials=6)
    notes = [r.getMessage() for r in caplog.records if "trial 1" in r.getMessage()]
    assert len(notes) == 1 and "\n" not in notes[0]
    assert "constraint 0 of trial 1 is inf" in notes[0]
    assert "failed evaluation" in notes[0]
    assert study.trials[1].system_attrs["constraints"] == (math.inf,)  # kept as Optuna keeps it
    assert len(study.sampler.decisions(study)) == 2


def test_a_nan_constraint_value_is_refused_as_optuna_does_and_the_trial_is_a_failed_evaluation():
    study = _study(constraints_func=lambda t: [math.nan] if t.number == 1 else t.user_attrs["g"])
    with pytest.raises(InvalidInputError) as err:
        study.optimize(_objective, n_trials=3)
    text = _one_line(err)
    assert "constraint 0 of trial 1 is NaN" in text and "failed evaluation" in text
    assert len(study.trials) == 2 and study.trials[1].system_attrs["constraints"] is None
    study.optimize(_objective, n_trials=4)  # the same sampler continues: trial 1 is a failed point
    assert len(study.sampler.decisions(study)) == 2


def test_every_constraint_value_non_finite_is_an_error_that_says_so():
    study = _study(constraints_func=lambda t: [math.inf])
    with pytest.raises(InvalidInputError) as err:
        study.optimize(_objective, n_trials=6)
    text = _one_line(err)
    assert "every complete trial (trials 0-3) has a non-finite constraint value" in text
    assert "Models needs" not in text


# ------------------------------------------------------------------------------ items 18-19: resumes
def _snapshot(study):
    storage = study._storage
    trials = [
        (t.number, t.state, t.params, t.values, dict(t.system_attrs), t.user_attrs)
        for t in storage.get_all_trials(study._study_id)
    ]
    return dict(storage.get_study_system_attrs(study._study_id)), trials


def _rdb(path, sampler, name="s"):
    return optuna.create_study(
        sampler=sampler, storage=f"sqlite:///{path}", study_name=name, load_if_exists=True
    )


BASE = {"policy": "pcei", "constraints_func": _g, "seed": 0, **FAST}


CHANGES = [
    ({"seed": 1}, "seed"),
    ({"policy": "config"}, "policy"),
    ({"kappa": 2.0}, "policy_params"),
    ({"n_startup_trials": 3}, "n_startup_trials"),
    ({"exact": True}, "exact"),
    ({"outcome_transform": "rms"}, "outcome_transform"),
    ({"violation_budget": 1.0}, "violation_budget"),
]


@pytest.mark.parametrize(
    ("change", "key", "before"),
    [
        pytest.param(change, key, before, id=f"{where}-{key}")
        for change, key in CHANGES
        for before, where in ((3, "in-design"), (5, "after-a-decision"))
        # a violation budget is not used before the first decision: a resume in the design may change it
        # (test_optuna_budget.py); after a decision it is refused as every setting is
        if not (key == "violation_budget" and before == 3)
    ],
)
def test_a_refused_resume_changes_nothing_in_the_study(tmp_path, change, key, before):
    # pcei under a budget needs n_trials (the asks left pace it)
    base = {**BASE, "violation_budget": 0.5, "n_trials": 20} if key == "violation_budget" else BASE
    path = tmp_path / "r.db"
    _rdb(path, CKBSampler(**base)).optimize(_objective, n_trials=before)
    study = _rdb(path, CKBSampler(**{**base, **change}))
    was = _snapshot(study)
    for _ in range(2):  # refused again and again: still nothing recorded
        with pytest.raises(InvalidInputError, match=f"was run by CKBSampler with {key}=") as err:
            study.optimize(_objective, n_trials=1)
        _one_line(err)
    attrs, trials = _snapshot(study)
    # Optuna creates the trial before any sampler hook runs: the refused one is back in the queue
    # (WAITING, no parameters, no attributes), the next trial of the study; nothing else changed
    assert attrs == was[0] and trials[:-1] == was[1]
    assert [trials[-1][i] for i in range(5)] == [before, WAITING, {}, None, {}]
    assert not any(t.state == FAIL for t in study.trials)
    # the right sampler takes the queued trial: the same trials as an uninterrupted run
    _rdb(path, CKBSampler(**base)).optimize(_objective, n_trials=2)
    _rdb(tmp_path / "full.db", CKBSampler(**base)).optimize(_objective, n_trials=before + 2)
    got = [t.params for t in _rdb(path, CKBSampler(**base)).trials]
    assert got == [t.params for t in _rdb(tmp_path / "full.db", CKBSampler(**base)).trials]


def test_the_settings_are_pinned_at_the_first_trial_not_the_first_decision(tmp_path):
    path = tmp_path / "s.db"
    _rdb(path, CKBSampler(**BASE)).optimize(_objective, n_trials=2)  # design trials only
    study = _rdb(path, CKBSampler(**BASE))
    assert SPEC_KEY in study._storage.get_study_system_attrs(study._study_id)
    other = CKBSampler(**{**BASE, "seed": 1, "policy": "ckb-ucb", "n_trials": 30})
    with pytest.raises(InvalidInputError, match="was run by CKBSampler with policy='pcei'; this sampler"):
        _rdb(path, other).optimize(_objective, n_trials=4)
    with pytest.raises(InvalidInputError, match="with seed=0; this sampler has seed=1"):
        _rdb(path, CKBSampler(**{**BASE, "seed": 1})).optimize(_objective, n_trials=4)
    _rdb(path, CKBSampler(**BASE)).optimize(_objective, n_trials=4)
    _rdb(tmp_path / "full.db", CKBSampler(**BASE)).optimize(_objective, n_trials=6)
    got = [t.params for t in _rdb(path, CKBSampler(**BASE)).trials]
    assert got == [t.params for t in _rdb(tmp_path / "full.db", CKBSampler(**BASE)).trials]


# ------------------------------------------------------------------------------- item 20: the horizon
def test_n_trials_that_cannot_hold_the_initial_design_is_refused():
    for n_trials in (1, 3):  # the default design has 2d + 2 >= 4 trials
        with pytest.raises(InvalidInputError) as err:
            CKBSampler(policy="ckb-ucb", n_trials=n_trials)
        assert f"n_trials = {n_trials} is smaller than the initial design (2d + 2" in _one_line(err)
    with pytest.raises(
        InvalidInputError, match="n_trials = 5 is smaller than the initial design of 6 trials"
    ):
        CKBSampler(policy="ckb-ucb", n_trials=5, n_startup_trials=6)
    CKBSampler(policy="ckb-ucb", n_trials=6, n_startup_trials=6)  # as ckb.Optimizer: the design fits

    # the default design's size is known once a trial has completed: d = 2 gives 6 > n_trials = 5
    def objective(trial):
        x, y = trial.suggest_float("x", 0.0, 1.0), trial.suggest_float("y", 0.0, 1.0)
        trial.set_user_attr("g", [x + y - 1.0])
        return x * y

    sampler = CKBSampler(policy="ckb-ucb", n_trials=5, constraints_func=_g, **FAST)
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(InvalidInputError) as err:
        study.optimize(objective, n_trials=5)
    assert _one_line(err).startswith(
        "n_trials = 5 is smaller than the initial design of 2d + 2 = 6 trials (d = 2 parameters)"
    )
    assert [t.state for t in study.trials] == [COMPLETE, WAITING]  # refused before trial 1 ran
    study.sampler = CKBSampler(policy="ckb-ucb", n_trials=8, constraints_func=_g, **FAST)  # fixed
    study.optimize(objective, n_trials=7)
    assert len(study.sampler.decisions(study)) == 2


def test_a_decision_past_n_trials_warns_once():
    sampler = CKBSampler(policy="ckb-ucb", n_trials=5, n_startup_trials=4, constraints_func=_g, **FAST)
    study = optuna.create_study(sampler=sampler)
    with pytest.warns(UserWarning, match=r"trial 5 is past n_trials = 5") as seen:
        study.optimize(_objective, n_trials=7)
    assert len([w for w in seen if "past n_trials" in str(w.message)]) == 1


# ------------------------------------------------------------------------ item 21: a range that changes
def test_a_parameter_whose_range_changes_is_named_with_both_ranges(caplog):
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 6.0 if trial.number < 7 else 1.0)
        y = trial.suggest_float("y", 0.0, 6.0)
        trial.set_user_attr("g", [math.cos(x + y) - 0.5])
        return x + y

    sampler = CKBSampler(policy="config", constraints_func=_g, seed=0, **FAST)
    study = optuna.create_study(sampler=sampler)
    with caplog.at_level(logging.WARNING, logger="ckb.integrations.optuna"):
        study.optimize(objective, n_trials=10)
    notes = [r.getMessage() for r in caplog.records if "'x'" in r.getMessage()]
    assert len(notes) == 1 and "\n" not in notes[0]
    assert "range changed from [0, 6] (trials 0-6) to [0, 1] at trial 7" in notes[0]
    assert "uniformly at random" in notes[0] and "not in every completed trial" not in notes[0]
    # y stays the policy's: the design size stays the study's (6), not 2d + 2 of the smaller space
    decided = {d["number"]: set(d["params"]) for d in sampler.decisions(study)}
    # (trial 7's decision was made before x's new range was seen: x there is the independent draw)
    assert decided == {6: {"x", "y"}, 7: {"x", "y"}, 8: {"y"}, 9: {"y"}}


def test_the_demo_refuses_a_ckb_study_file_and_bad_arguments_in_one_line(tmp_path):
    """The demo's --storage at a ckb study file added Optuna's tables to it; --jobs 0 and a bad URL gave
    raw tracebacks."""
    import hashlib

    from ckb.integrations.optuna import main

    pytest.importorskip("botorch")
    import ckb

    path = tmp_path / "s.db"
    ckb.Optimizer([0.0], [1.0], budget=5, policy="cei", storage=path).close()
    before = hashlib.md5(path.read_bytes()).hexdigest()
    assert main(["--demo", "--trials", "3", "--storage", f"sqlite:///{path}"]) == 2
    assert hashlib.md5(path.read_bytes()).hexdigest() == before
    assert main(["--demo", "--trials", "3", "--jobs", "0"]) == 2
    assert main(["--demo", "--trials", "3", "--storage", "nonsense"]) == 2


def test_a_study_without_constraint_values_stops_after_its_first_trial():
    """Without constraints_func (or trial.set_constraint) the error came at the first decision, after the
    whole initial design (2d + 2 evaluations, which may take days); now after the first trial, kept."""
    import optuna

    from ckb.errors import InvalidInputError
    from ckb.integrations.optuna import CKBSampler

    calls = []

    def objective(trial):
        calls.append(trial.number)
        return trial.suggest_float("x", 0, 1) + trial.suggest_float("y", 0, 1)

    study = optuna.create_study(sampler=CKBSampler(seed=0, n_trials=8))
    with pytest.raises(
        InvalidInputError, match="trial 0 completed without constraint values.*Trial 0 is kept"
    ):
        study.optimize(objective, n_trials=8)
    assert calls == [0] and study.trials[0].state == optuna.trial.TrialState.COMPLETE


def test_an_enqueued_value_outside_its_range_is_left_out_of_the_model(caplog):
    """Optuna keeps an enqueued value outside the parameter's range (with its own warning); CKBSampler
    clipped it into the unit cube, crediting f(5) to the boundary x = 1. It now leaves that trial out of
    the model and says so once."""
    import warnings

    import numpy as np
    from optuna.distributions import FloatDistribution

    from ckb.integrations.optuna import _Data, _Space

    study = _study()
    study.enqueue_trial({"x": 5.0})
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, logger="ckb.integrations.optuna"):
        warnings.simplefilter("ignore", UserWarning)  # Optuna's: "Fixed parameter x ... out of range"
        study.optimize(_objective, n_trials=7)
    notes = [r.getMessage() for r in caplog.records if "out of its model" in r.getMessage()]
    assert notes == [
        "CKBSampler leaves trial 0 out of its model: its value x = 5.0 (range [0, 1]) lies outside the "
        "search space (an enqueued value, which Optuna keeps); enqueue values inside the ranges, or "
        "widen the ranges in a new study."
    ]  # once, though three decisions read it
    assert len(study.sampler.decisions(study)) == 3
    data = _Data(study.trials, _Space({"x": FloatDistribution(0.0, 1.0)}), True, -1, None, 4)
    assert data.outside == [(0, "x = 5.0 (range [0, 1])")]
    assert data.numbers == [1, 2, 3, 4, 5, 6] and np.all((data.X >= 0) & (data.X <= 1))


def test_constraints_told_as_violation_amounts_are_named_once(caplog):
    """As ckb.Optimizer: a constraints_func returning max(g, 0) gets one warning per study."""
    study = _study(constraints_func=lambda t: [max(t.user_attrs["g"][0], 0.0)])
    with caplog.at_level(logging.WARNING, logger="ckb.integrations.optuna"):
        study.optimize(_objective, n_trials=7)
    notes = [r.getMessage() for r in caplog.records if "max(g, 0)" in r.getMessage()]
    assert len(notes) == 1 and notes[0].startswith("CKBSampler: constraint 0 has only values >= 0 (")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="ckb.integrations.optuna"):
        _study().optimize(_objective, n_trials=6)  # signed values
    assert not [r for r in caplog.records if "max(g, 0)" in r.getMessage()]


def test_a_range_wider_than_the_largest_float_is_named():
    """suggest_float('p', -1e308, 1e308) ended in numpy's OverflowError ('high - low range exceeds valid
    bounds'); ckb.Optimizer refuses such a box in one line, and so does the sampler now."""

    def objective(trial):
        trial.set_user_attr("g", [0.0])
        return trial.suggest_float("p", -1e308, 1e308)

    with pytest.raises(InvalidInputError) as err:
        _study().optimize(objective, n_trials=2)
    assert _one_line(err) == (
        "CKBSampler cannot model parameter 'p' on [-1e+308, 1e+308]: its width is beyond the largest float; "
        "rescale the parameter (e.g. in units of 1e300)."
    )
