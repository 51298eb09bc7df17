import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.problems import make_problem
from ckb.runner import Trial, TrialConfig
from ckb.runner.environments.delayed import DelayedEnvironment

PROB = {"grid": 10, "constraint_noise": "gaussian", "kernel": "se"}


def _env(**kw):
    return DelayedEnvironment(
        make_problem("gardner", np.random.default_rng(0), **PROB), np.random.default_rng(1), **kw
    )


def _play(env, rounds):
    got = []
    for t in range(1, rounds + 1):
        out = env.step(t % 100)
        got.append([(o.t, o.has_y, o.has_c) for o in env.deliver(out)])
    return got


def test_constant_delay_delivers_round_s_at_the_end_of_round_s_plus_d():
    got = _play(_env(delay="constant", delay_mean=2), 6)
    assert got == [[], [], [(1, True, True)], [(2, True, True)], [(3, True, True)], [(4, True, True)]]
    assert _play(_env(delay="none"), 2) == [[(1, True, True)], [(2, True, True)]]


def test_independent_poisson_delays_split_reward_and_cost_and_lose_nothing():
    env = _env(delay="poisson", delay_mean=3.0)
    y_rounds, c_rounds = [], []
    for t in range(1, 401):
        for o in env.deliver(env.step(t % 100)):
            assert np.isnan(o.y) != o.has_y and np.all(np.isnan(o.c)) != o.has_c
            if o.has_y:
                y_rounds.append(o.t)
            if o.has_c:
                c_rounds.append(o.t)
            assert o.t <= t
    # every part delivered exactly once, except what is still in flight at the end
    assert len(set(y_rounds)) == len(y_rounds) and len(set(c_rounds)) == len(c_rounds)
    assert set(range(1, 380)) <= set(y_rounds) and set(range(1, 380)) <= set(c_rounds)
    env2 = _env(delay="poisson", delay_mean=3.0, joint=True)
    for t in range(1, 50):
        for o in env2.deliver(env2.step(t % 100)):
            assert o.has_y and o.has_c


def test_mean_delay_is_the_poisson_mean():
    env = _env(delay="poisson", delay_mean=15.0)
    lags = []
    for t in range(1, 3001):
        lags += [t - o.t for o in env.deliver(env.step(t % 100)) if o.has_y]
    assert abs(np.mean(lags) - 15.0) < 0.4


def test_policies_without_partial_feedback_get_a_clear_error():
    cfg = TrialConfig("p", "igp-ucb", "gardner", 60, 0, 0, {}, PROB, environment="delayed")
    with pytest.raises(InvalidInputError, match="arrive separately"):
        Trial(cfg).run()
    ok = TrialConfig(
        "p",
        "igp-ucb",
        "gardner",
        30,
        0,
        0,
        {},
        PROB,
        environment="delayed",
        environment_params={"joint": True},
    )
    Trial(ok).run()


@pytest.mark.parametrize("policy", ["rpol-sw-ucb", "igp-ucb"])
def test_a_policy_without_partial_feedback_is_refused_when_the_trial_is_built(policy):
    """Before, the trial was built and ran until the first split observation (round 13 for rpol-sw-ucb)."""
    cfg = TrialConfig("p", policy, "gardner", 60, 0, 0, {}, PROB, environment="delayed")
    with pytest.raises(
        InvalidInputError, match=rf"^policy '{policy}' .*arrive separately.*joint = true"
    ) as err:
        Trial(cfg)
    assert "\n" not in str(err.value)
    # the parts of a round cannot arrive apart: nothing to refuse
    for params in ({"joint": True}, {"delay": "constant", "delay_mean": 3}, {"delay": "none"}):
        Trial(
            TrialConfig(
                "p", policy, "gardner", 20, 0, 0, {}, PROB, environment="delayed", environment_params=params
            )
        ).run()


@pytest.mark.parametrize("policy", ["rpol-censored-ucb", "rpol-ucb", "ckb-ucb"])
def test_checkpoint_resume_with_feedback_in_flight_is_exact(policy, split_run):
    cfg = TrialConfig(
        "p",
        policy,
        "gardner",
        70,
        2,
        0,
        {},
        PROB,
        environment="delayed",
        environment_params={"delay_mean": 5.0},
    )
    full, rest = split_run(cfg, 33)
    np.testing.assert_array_equal(full.index, rest.index)


def test_bad_delay_parameters_are_named():
    with pytest.raises(InvalidInputError, match="delay must be"):
        _env(delay="gamma")
    with pytest.raises(InvalidInputError, match="delay_mean"):
        _env(delay_mean=-1.0)
    with pytest.raises(InvalidInputError, match="whole number"):
        _env(delay="constant", delay_mean=2.5)
