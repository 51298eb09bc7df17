"""Trials another sampler completed in the same study carry no constraint values (a sampler without a
``constraints_func`` stores none). CKBSampler refused every later trial for them with "pass
constraints_func=", although one was passed; it now applies its ``constraints_func`` to them."""

from __future__ import annotations

import logging
import math

import pytest

optuna = pytest.importorskip("optuna")

from ckb.integrations.optuna import CKBSampler  # noqa: E402


def _objective(trial):
    x = trial.suggest_float("x", 0.0, 6.0)
    y = trial.suggest_float("y", 0.0, 6.0)
    trial.set_user_attr("c", [math.cos(x + y) - 0.5])
    return math.cos(2 * x) * math.cos(y) + math.sin(x)


@pytest.fixture(autouse=True)
def _quiet():
    optuna.logging.set_verbosity(optuna.logging.WARNING)


def _study(tmp_path, sampler):
    return optuna.create_study(
        storage=f"sqlite:///{tmp_path / 'o.db'}", study_name="st", load_if_exists=True, sampler=sampler
    )


def _ckb():
    return CKBSampler(constraints_func=lambda t: t.user_attrs["c"], seed=0, n_startup_trials=4)


def test_trials_of_another_sampler_are_modelled_with_the_constraints_func(tmp_path):
    _study(tmp_path, _ckb()).optimize(_objective, n_trials=6)
    _study(tmp_path, optuna.samplers.RandomSampler(seed=1)).optimize(_objective, n_trials=2)
    study = _study(tmp_path, _ckb())
    study.optimize(_objective, n_trials=3)
    states = [t.state for t in study.trials]
    assert len(states) == 11 and all(s == optuna.trial.TrialState.COMPLETE for s in states)
    assert study.sampler.decisions(study)[-1]["info"]["source"] == "policy"  # decided, not refused


def test_a_constraints_func_that_fails_on_such_a_trial_makes_it_a_failed_evaluation(tmp_path, caplog):
    _study(tmp_path, _ckb()).optimize(_objective, n_trials=5)
    other = _study(tmp_path, optuna.samplers.RandomSampler(seed=1))
    other.optimize(lambda t: t.suggest_float("x", 0, 6) + t.suggest_float("y", 0, 6), n_trials=1)  # no "c"
    study = _study(tmp_path, _ckb())
    with caplog.at_level(logging.WARNING, logger="ckb.integrations.optuna"):
        study.optimize(_objective, n_trials=2)
    assert [t.state for t in study.trials[-2:]] == [optuna.trial.TrialState.COMPLETE] * 2
    assert any("trial 5 was completed without constraint values" in r.getMessage() for r in caplog.records)


def test_without_a_constraints_func_the_error_says_what_to_do(tmp_path):
    _study(tmp_path, optuna.samplers.RandomSampler(seed=1)).optimize(_objective, n_trials=5)
    study = _study(tmp_path, CKBSampler(seed=0, n_startup_trials=4))
    with pytest.raises(Exception, match=r"trial 0 completed without constraint values \(another sampler's"):
        study.optimize(_objective, n_trials=1)
