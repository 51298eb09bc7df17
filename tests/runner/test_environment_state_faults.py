"""``Environment.load_state_dict`` (the harness's environments: basic, delayed, full-information).
Before: a state that did not fit was a raw ValueError or TypeError, a negative round was taken, and a
failure part-way had already moved the environment's round (and, for the delayed one, its queue of
pending observations kept rows of different lengths and failed rounds later). Now each refusal is one
line and the environment is left as it was."""

import copy

import pytest

from ckb.errors import InvalidInputError
from ckb.runner.trial import Trial, TrialConfig


def _used(environment, params):
    cfg = TrialConfig(
        algorithm="a",
        policy="ckb-ucb",
        horizon=20,
        problem="gardner",
        problem_params={"grid": 15},
        environment=environment,
        environment_params=params,
    )
    trial = Trial(cfg)
    trial.run(until=8)
    return trial.env


@pytest.mark.parametrize("environment, params", [("basic", {}), ("delayed", {"delay_mean": 3.0})])
def test_a_state_that_does_not_fit_is_one_line_and_changes_nothing(environment, params):
    env = _used(environment, params)
    state = env.state_dict()
    edits = [
        ("t", -1, r"t = -1 must be a round >= 0"),
        ("rng", "junk", r"rng = 'junk' is not a state of its PCG64"),
    ]
    if environment == "delayed":
        edits += [
            ("_y", [1.0], r"one row each \(rows per key: \{'_t': \d+, '_idx': \d+, '_x': \d+, '_y': 1"),
            (
                "_c",
                "junk",
                r"cannot load this state into the DelayedEnvironment \(ValueError: could not convert",
            ),
        ]
    for key, value, match in edits:
        bad = {**copy.deepcopy(state), key: value}
        with pytest.raises(InvalidInputError, match=match):
            env.load_state_dict(bad)
        after = env.state_dict()
        assert after["t"] == state["t"] and after["rng"] == state["rng"], key
        if environment == "delayed":
            assert all(len(after[k]) == len(state[k]) for k in ("_t", "_y", "_c")), key
    with pytest.raises(InvalidInputError, match=r"loads a dict from state_dict\(\), got \[1\]"):
        env.load_state_dict([1])
    with pytest.raises(InvalidInputError, match=r"missing key 'rng'"):
        env.load_state_dict({"t": 3})
    assert env.t == state["t"]
