"""``CKBSampler.policy_state`` of a study run by a sampler with other settings: it restored the stored
state into the inspecting sampler's own policy and reported that policy's name (multi-process probe:
``CKBSampler().policy_state(study)`` of a ckb-ucb study said 'pcei'). It is now refused, as a resume is."""

from __future__ import annotations

import pytest

optuna = pytest.importorskip("optuna")
pytest.importorskip("botorch")

from ckb.errors import InvalidInputError  # noqa: E402
from ckb.integrations.optuna import CKBSampler  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
FAST = {"num_restarts": 2, "raw_samples": 32, "maxiter": 20}


def _objective(trial):
    x0, x1 = trial.suggest_float("x0", 0.0, 1.0), trial.suggest_float("x1", 0.0, 1.0)
    trial.set_user_attr("g", [x0 + x1 - 0.6])
    return (x0 - 0.3) ** 2 + (x1 - 0.6) ** 2


def _sampler(**kw):
    return CKBSampler(constraints_func=lambda t: t.user_attrs["g"], **FAST, **kw)


def test_policy_state_refuses_a_sampler_with_other_settings_and_changes_nothing():
    study = optuna.create_study(sampler=_sampler(policy="ckb-ucb", n_trials=8))
    study.optimize(_objective, n_trials=8)
    own = _sampler(policy="ckb-ucb", n_trials=8).policy_state(study)
    assert own["policy"] == "ckb-ucb" and own["decisions"] == 2
    before = study._storage.get_study_system_attrs(study._study_id)
    for other, named in (
        ({}, "policy='ckb-ucb'"),
        ({"policy": "ckb-ucb", "n_trials": 8, "seed": 5}, "seed=0"),
    ):
        with pytest.raises(InvalidInputError, match=named) as info:
            _sampler(**other).policy_state(study)
        assert "\n" not in str(info.value)
    assert study._storage.get_study_system_attrs(study._study_id) == before
