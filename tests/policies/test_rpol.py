import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.kernels import PrecomputedKernel
from ckb.policies import POLICIES, make_policy
from ckb.problems import FiniteDomain, GaussianNoise, Observation, Problem
from ckb.runner import Trial, TrialConfig

# Independent arms (identity kernel, lambda = 1): after k observations y at an arm its posterior is
# mean = sum(y) / (k + 1), variance = 1 / (k + 1).


def _info(n=3, m=1):
    p = Problem(
        "toy",
        FiniteDomain.arms(n),
        np.zeros(n),
        np.zeros((n, m)) - 1.0,
        GaussianNoise(0.1, 0.1),
        kernel=PrecomputedKernel(np.eye(n)),
        hints={"B": 1.0, "G": 1.0, "R": 0.1},
    )
    return p.info()


def _policy(name="rpol-ucb", m=1, **kw):
    params = {"beta": 1.0, "noise": 1.0, **kw}
    return make_policy(name, _info(m=m), np.random.default_rng(0), horizon=100, **params)


def _tell(pol, t, i, y, c):
    pol.tell(Observation(t, i, np.array([float(i)]), y, np.atleast_1d(np.asarray(c, dtype=float))))


def test_registered():
    assert POLICIES.get("rpol") is POLICIES.get("rpol-ucb")
    assert POLICIES.get("config").name == "config"


def test_Q_update_by_hand_and_invariants():
    # Q_1 = 1; Q_{t+1} = max(Q_t + [c_t]^+, sqrt(t)) with the observed cost; the Q a round uses is
    # reported by internals() after its ask
    pol = _policy()
    pol.ask()
    assert pol.internals()["Q"] == 1.0
    costs = [0.5, -2.0, 0.0, 3.0, -1.0, 0.2]
    Q, seen = 1.0, [1.0]
    for t, c in enumerate(costs, start=1):
        _tell(pol, t, 0, 0.0, c)
        pol.ask()  # round t + 1
        Q = max(Q + max(c, 0.0), math.sqrt(t))
        q = pol.internals()["Q"]
        assert q == pytest.approx(Q)
        assert q >= math.sqrt(t) and q >= seen[-1] and q >= 1.0
        seen.append(q)
    # Q_2..Q_7: max(1.5, 1), max(1.5, 1.414), max(1.5, 1.732), 4.732, 4.732, 4.932
    np.testing.assert_allclose(
        seen[1:], [1.5, 1.5, math.sqrt(3), 3.0 + math.sqrt(3), 3.0 + math.sqrt(3), 3.2 + math.sqrt(3)]
    )


def test_rectified_penalty_on_the_lcb_of_the_cost_by_hand():
    # beta = 1 for f and g. Arm 0: one observation y = 1, c = 2 -> mean_f 0.5, mean_g 1, std 1/sqrt 2.
    # Arm 1: y = 0.4, c = -3 (deep feasible: LCB < 0 earns no bonus). Arm 2: unobserved: mean 0, std 1.
    pol = _policy()
    pol.ask()
    _tell(pol, 1, 0, 1.0, 2.0)
    pol.ask()
    _tell(pol, 2, 1, 0.4, -3.0)
    s = 1 / math.sqrt(2)
    ucb = np.array([0.5 + s, 0.2 + s, 1.0])
    lcb = np.array([1.0 - s, -1.5 - s, -1.0])
    choice = pol.ask()
    Q = pol.Q[0]  # max(1 + 2, 1) then max(3 + 0, sqrt 2) = 3
    assert Q == pytest.approx(3.0)
    scores = ucb - Q * np.maximum(lcb, 0.0)
    assert choice == int(np.argmax(scores)) == 2
    u, lc = pol._bounds()
    np.testing.assert_allclose(u, ucb)
    np.testing.assert_allclose(lc[:, 0], lcb)  # a lower confidence bound, not an upper one
    assert pol.internals()["Q"] == pytest.approx(3.0)


def test_config_maximizes_ucb_over_the_optimistically_feasible_set_with_a_fallback():
    pol = _policy("config")
    pol.ask()
    _tell(pol, 1, 0, 5.0, 4.0)  # arm 0: UCB 2.5 + 0.71, LCB 2 - 0.71 > 0: not optimistically feasible
    pol.ask()
    _tell(pol, 2, 1, 0.4, -3.0)  # arm 1: UCB 0.2 + 0.71 = 0.91, LCB < 0
    assert pol.ask() == 2  # arm 2: UCB 1 > 0.91 and LCB -1 <= 0
    assert pol.internals()["fallback"] == 0.0
    # every arm infeasible even optimistically: play argmin LCB
    pol = _policy("config", beta=0.0)
    for t, (i, c) in enumerate([(0, 2.0), (1, 0.5), (2, 3.0)], start=1):
        pol.ask()
        _tell(pol, t, i, 0.0, c)
    assert pol.ask() == 1 and pol.internals()["fallback"] == 1.0


def test_one_Q_per_constraint():
    pol = _policy(m=2)
    pol.ask()
    _tell(pol, 1, 0, 0.0, [0.5, -1.0])
    pol.ask()
    np.testing.assert_allclose(pol.Q, [1.5, 1.0])
    assert set(pol.internals()) >= {"Q_0", "Q_1"}


def test_lambda_auto_is_one_plus_two_over_T():
    pol = make_policy("rpol-ucb", _info(), np.random.default_rng(0), horizon=500)
    assert pol.noise == pytest.approx(1.004)
    with pytest.raises(InvalidInputError, match="horizon"):
        make_policy("rpol-ucb", _info(), np.random.default_rng(0))


@pytest.mark.parametrize("policy", ["rpol-ucb", "config"])
def test_checkpoint_resume_is_exact(policy, split_run):
    prob = {"grid": 20, "constraint_noise": "gaussian", "kernel": "se"}
    cfg = TrialConfig("p", policy, "gardner", 60, 1, 0, {}, prob)
    full, rest = split_run(cfg, 27)
    np.testing.assert_array_equal(full.index, rest.index)


def test_continuous_box_search_stays_in_the_box():
    cfg = TrialConfig(
        "p", "rpol-ucb", "gardner", 15, 0, 0, {"n_candidates": 128}, {"constraint_noise": "gaussian"}
    )
    x = Trial(cfg).run().x
    assert np.all((x >= 0) & (x <= 6))


def test_bad_parameters_are_named():
    with pytest.raises(InvalidInputError, match="Q1"):
        _policy(Q1=-1.0)
    with pytest.raises(InvalidInputError, match="p "):
        _policy(p=1.5)
    with pytest.raises(InvalidInputError, match="m >= 1"):
        p = Problem(
            "u",
            FiniteDomain.arms(2),
            np.zeros(2),
            None,
            GaussianNoise(0.1, 0.1),
            kernel=PrecomputedKernel(np.eye(2)),
        )
        make_policy("config", p.info(), np.random.default_rng(0), horizon=10)


def test_censored_targets_are_zero_until_arrival_and_stay_zero_beyond_the_window():
    pol = _policy("rpol-censored-ucb", censor=2)
    a1 = pol.ask()  # round 1
    a2 = pol.ask()  # round 2, nothing arrived yet
    pol.ask()  # round 3: both earlier points are in the models with target 0
    np.testing.assert_array_equal(pol.gp_f.y, [0.0, 0.0])
    np.testing.assert_array_equal(pol.gp_f.arms, [a1, a2])
    # round 1's reward and cost arrive at the end of round 3 (delay 2 <= m = 2): they replace the zeros
    _tell(pol, 1, a1, 0.8, 0.5)
    # round 2's arrive at the end of round 5 (delay 3 > m): censored, the targets stay 0, Q still counts it
    pol.ask()
    pol.ask()
    _tell(pol, 2, a2, 0.6, 0.7)
    pol.ask()  # round 6
    np.testing.assert_allclose(pol.gp_f.y[:3], [0.8, 0.0, 0.0])
    np.testing.assert_allclose(pol.gp_g[0].y[:3], [0.5, 0.0, 0.0])
    assert pol.gp_f.t == 5  # every played point is in the kernel matrix
    # Q_6 = max(Q_5 + 0.7, sqrt 5) with Q_4 = max(1 + 0.5, sqrt 3) = 1.732..., Q_5 = max(Q_4, 2) = 2
    assert pol.internals()["Q"] == pytest.approx(max(2.0 + 0.7, math.sqrt(5)))


def test_censored_models_are_the_posterior_of_the_arrived_targets_after_many_rounds():
    """The models take only the targets that arrived (ExactGP.retarget, a cost flat in t; it re-fitted
    all t targets every round before): after 120 rounds of delays they are the posterior of a fresh GP on
    the played arms with each arrived target, 0 where none arrived or it came too late; a checkpoint
    of the former version (a "dirty" flag) still loads."""
    from ckb.surrogates.gp import ExactGP

    n = 6
    info = _info(n=n)
    pol = make_policy("rpol-censored-ucb", info, np.random.default_rng(0), horizon=200, noise=0.5, censor=5)
    rng = np.random.default_rng(1)
    due: dict[int, list] = {}
    for t in range(1, 121):
        a = pol.ask()
        y, c = float(rng.normal()), float(rng.normal())
        delay = int(rng.integers(0, 9))  # some beyond the censor window of 5: those stay 0
        due.setdefault(t + delay, []).append((t, a, y, c))
        for s, arm, ys, cs in due.pop(t, []):
            _tell(pol, s, arm, ys, cs)
    pol.ask()  # round 121 puts the last arrivals into the models
    played = np.array(pol._played[:120])
    ref = ExactGP(PrecomputedKernel(np.eye(n)), 0.5, np.arange(n)[:, None].astype(float))
    for arm, v in zip(played, pol._yf[:120]):
        ref.update_arm(int(arm), float(v))
    assert 60 < np.count_nonzero(pol._yf[:120]) < 120  # most arrived, some were censored
    np.testing.assert_allclose(pol.gp_f.mean, ref.mean, atol=1e-10)
    np.testing.assert_array_equal(pol.gp_f.y[:120], pol._yf[:120])
    state = pol.state_dict()
    del state["arrived"]
    state["dirty"] = True
    other = make_policy("rpol-censored-ucb", info, np.random.default_rng(0), horizon=200, noise=0.5, censor=5)
    other.load_state_dict(state)
    assert other._arrived == set(range(120))  # all rows in the models are taken again at the next ask
    assert other.ask() == pol.ask()
    np.testing.assert_allclose(other.gp_f.mean, pol.gp_f.mean, atol=1e-10)


def test_censored_widths_by_hand():
    # identity kernel, lambda = 1, beta theory: v = scale (B_r sum_{last m} std + B + (R + B_r) sqrt(2 (gamma + 1 + ln(4/p))))
    pol = make_policy(
        "rpol-censored-ucb", _info(), np.random.default_rng(0), horizon=100, noise=1.0, censor=2, p=0.05
    )
    pol.ask()
    pol.ask()
    pol.ask()  # two points in the models: std 1/sqrt 2 at them if distinct arms, 1/sqrt 3 at a repeated arm
    arms = pol._played[:2]
    std_sum = float(np.sum(pol.gp_f.std[np.asarray(arms)]))
    B_r = 1.0 + 0.1 * math.sqrt(2 * math.log(100))
    beta = 1.0 + (0.1 + B_r) * math.sqrt(2 * (pol.gp_f.info_gain + 1 + math.log(4 / 0.05)))
    assert pol.internals()["beta"] == pytest.approx(B_r * std_sum + beta)


def test_sliding_window_keeps_the_last_W_plus_one_observations_and_q_is_not_windowed():
    pol = _policy("rpol-sw-ucb", W=3)
    costs = [0.5, 0.2, -1.0, 0.4, 0.3, 0.1]
    for t, c in enumerate(costs, start=1):
        a = pol.ask()
        _tell(pol, t, a, float(t), c)
    assert pol.gp_f.t == 4  # x_{t0..t} with t0 = t - W = 3
    np.testing.assert_array_equal(pol.gp_f.y, [3.0, 4.0, 5.0, 6.0])
    np.testing.assert_array_equal(pol.gp_g[0].y, costs[2:])
    pol.ask()
    # Q accumulates every cost since round 1: max(1 + 0.5, 1), max(1.7, 1.41), ...: not windowed
    Q = 1.0
    for t, c in enumerate(costs, start=1):
        Q = max(Q + max(c, 0.0), np.sqrt(t))
    assert pol.internals()["Q"] == pytest.approx(Q)


def test_sliding_window_width_by_hand():
    pol = make_policy("rpol-sw-ucb", _info(), np.random.default_rng(0), horizon=100, noise=1.0, W=5, p=0.05)
    pol.ask()
    _tell(pol, 1, 0, 1.0, -1.0)
    pol.ask()
    gamma = pol.gp_f.info_gain
    assert gamma == pytest.approx(0.5 * math.log(2.0))  # one point, identity kernel, lambda = 1
    want = 1.0 + 0.1 * math.sqrt(2 * gamma + 2 * math.log(2 * 100 / 0.05))
    assert pol.internals()["beta"] == pytest.approx(want)


def test_restart_ucb_resets_the_posteriors_every_H_rounds_but_not_the_dual():
    pol = make_policy(
        "ckb-restart-ucb", _info(), np.random.default_rng(0), horizon=50, H=5, beta=1.0, delta=0.5
    )
    for t in range(1, 6):  # 3 arms: rounds 4-5 replay observed, strongly infeasible arms (clipped LCB > 0)
        a = pol.ask()
        _tell(pol, t, a, 0.5, 9.0)
    phi = pol.phi.copy()
    assert pol.gp_f.t == 5 and phi[0] > 0
    pol.ask()  # round 6 starts a new block
    assert pol.gp_f.t == 0 and pol.gp_g[0].t == 0
    assert pol.internals()["dual"] == phi[0]  # round 6 decided with the carried-over dual
    pol2 = make_policy(
        "ckb-restart-ucb",
        _info(),
        np.random.default_rng(0),
        horizon=50,
        H=5,
        beta=1.0,
        delta=0.5,
        restart_dual=True,
    )
    for t in range(1, 6):
        a = pol2.ask()
        _tell(pol2, t, a, 0.5, 9.0)
    pol2.ask()
    assert pol2.internals()["dual"] == 0.0
