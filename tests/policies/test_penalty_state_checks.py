"""A penalty policy's state whose data do not fit (ys shorter than its GP's data, cs of another m, an
in_epoch past the epoch, a multiplier list of another length, a negative multiplier) was loaded and
failed rounds later with a raw broadcasting traceback, or ran on; now refused, nothing loaded."""

import json

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.io import _json_default
from ckb.runner.trial import Trial, TrialConfig

CFG = TrialConfig(
    algorithm="a", policy="penalty-noisy", horizon=40, problem="gardner", problem_params={"grid": 15}
)


@pytest.fixture
def used():
    trial = Trial(CFG)
    trial.run(until=14)
    return trial.policy


def _broken(state, edit):
    state = json.loads(json.dumps(state, default=_json_default))
    edit(state)
    return state


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda s: s.update(ys=s["ys"][:7], cs=s["cs"][:7]), "ys hold 7 values for 14 in its GP"),
        (lambda s: s.update(cs=[[v, v] for (v,) in s["cs"]]), r"must be \(n,\) and \(n, m = 1\)"),
        (lambda s: s["rule"].update(in_epoch=99), "in_epoch 99"),
        (lambda s: s["rule"].update(asked=[1.0, 2.0, 3.0]), "asked has 3 values"),
        (lambda s: s["rule"].update(kappa=[-1.0], log_kappa=[0.0]), "negative multiplier"),
    ],
)
def test_a_state_that_does_not_fit_is_refused_and_nothing_is_loaded(used, edit, match):
    before = json.dumps(used.state_dict(), default=_json_default)
    with pytest.raises(InvalidInputError, match=match):
        used.load_state_dict(_broken(used.state_dict(), edit))
    assert json.dumps(used.state_dict(), default=_json_default) == before


def test_a_json_round_trip_of_a_fresh_state_still_loads():
    trial = Trial(CFG)
    state = json.loads(json.dumps(trial.policy.state_dict(), default=_json_default))
    trial.policy.load_state_dict(state)
    trial.run(until=3)
    assert np.isfinite(trial.trace.f).all()


@pytest.mark.parametrize("policy, key", [("ckb-ucb", "phi"), ("rpol-ucb", "Q")])
def test_a_negative_dual_or_queue_is_refused(policy, key):
    cfg = TrialConfig(
        algorithm="a",
        policy=policy,
        horizon=30,
        problem="rkhs-synthetic",
        policy_params={"R": 0.1} if policy == "ckb-ucb" else {},
        problem_params={"n_grid": 30, "constraint": "neg-f-plus-h"},
    )
    trial = Trial(cfg)
    trial.run(until=5)
    state = json.loads(json.dumps(trial.policy.state_dict(), default=_json_default))
    state["rule"][key] = [-5.0]
    with pytest.raises(InvalidInputError, match=rf"{key} = \[-5.0\] must be finite and >= 0"):
        trial.policy.load_state_dict(state)
