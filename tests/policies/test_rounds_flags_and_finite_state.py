"""A harness policy refuses a NaN or infinite number in a saved rule state and the observation of a round
it has not asked; flags are true or false, not whatever ``bool()`` makes of a string; the delayed
environment refuses a mean delay numpy cannot draw. Each refusal is one line and changes nothing."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from ckb.contract import Observation
from ckb.errors import InvalidInputError
from ckb.policies import make_policy
from ckb.problems import make_problem
from ckb.runner import Trial, TrialConfig
from tests.policies.test_tell_and_state_faults import FINITE, _played, _policy, _refused, _same


def _info():
    return make_problem(
        "rkhs-synthetic", np.random.default_rng(0), n_grid=20, constraint="neg-f-plus-h"
    ).info()


def _penalty_after(rounds=5):
    info = _info()
    cand = info.domain.candidates
    p = make_policy("penalty-noisy", info, np.random.default_rng(0), horizon=50)
    for t in range(1, rounds + 1):
        a = p.ask()
        p.tell(Observation(t, int(a), cand[a], 0.3, np.array([0.2])))
    return p


@pytest.mark.parametrize("key", ["epoch_sum", "log_kappa", "kappa"])
@pytest.mark.parametrize("bad", [[float("nan")], [float("inf")], float("nan"), [-float("inf")]])
def test_a_nonfinite_penalty_state_is_refused_naming_its_key(key, bad):
    p = _penalty_after()
    state = copy.deepcopy(p.state_dict())
    state["rule"][key] = bad
    msg = _refused(p, lambda: p.load_state_dict(state), key)
    assert "finite" in msg
    p.ask()  # still usable


def test_a_nonfinite_asked_record_is_refused():
    p = _penalty_after()
    state = copy.deepcopy(p.state_dict())
    state["rule"]["asked"] = [1.0, float("nan")]
    _refused(p, lambda: p.load_state_dict(state), "asked", "finite")


def test_a_good_penalty_state_still_round_trips():
    p = _penalty_after()
    q = make_policy("penalty-noisy", _info(), np.random.default_rng(5), horizon=50)
    q.load_state_dict(copy.deepcopy(p.state_dict()))
    assert _same(p.state_dict(), q.state_dict())
    assert p.ask() == q.ask()


@pytest.mark.parametrize("name", FINITE)
def test_the_observation_of_a_round_not_asked_is_refused(name):
    po = _played(name, rounds=2)
    cand = po.info.domain.candidates
    msg = _refused(
        po, lambda: po.tell(Observation(99, 3, cand[3], 0.5, np.array([0.1]))), "t = 99", "asked 2"
    )
    assert "has not been asked" in msg


@pytest.mark.parametrize("name", ["ckb-ucb", "penalty-noisy", "rpol-ucb"])
def test_before_any_ask_no_observation_is_taken(name):
    po = _policy(name)
    cand = po.info.domain.candidates
    _refused(po, lambda: po.tell(Observation(1, 3, cand[3], 0.5, np.array([0.1]))), "asked 0")


@pytest.mark.parametrize(
    "name, flag", [("ckb-ucb", "anytime_restart_gp"), ("ckb-restart-ucb", "restart_dual")]
)
@pytest.mark.parametrize("bad", ["false", "no", 0.5, [0], float("nan")])
def test_policy_flags_are_true_or_false(name, flag, bad):
    with pytest.raises(InvalidInputError, match=f"{flag} must be true or false"):
        make_policy(name, _info(), np.random.default_rng(0), horizon=20, R=0.1, **{flag: bad})


def _delayed(**env):
    return TrialConfig(
        algorithm="r",
        policy="rpol-ucb",
        problem="rkhs-synthetic",
        horizon=5,
        problem_params={"n_grid": 10, "constraint": "neg-f-plus-h"},
        environment="delayed",
        environment_params=env,
    )


@pytest.mark.parametrize("bad", ["false", "no", 0.5, [0]])
def test_the_joint_flag_is_true_or_false(bad):
    with pytest.raises(InvalidInputError, match="joint must be true or false"):
        Trial(_delayed(joint=bad)).run()


def test_a_mean_delay_numpy_cannot_draw_is_refused_before_the_run():
    with pytest.raises(InvalidInputError, match=r"delay_mean must be <= .*got 1e\+20"):
        Trial(_delayed(delay_mean=1e20)).run()
    assert Trial(_delayed(delay_mean=1e12)).run().horizon == 5  # a delay beyond the horizon is fine
