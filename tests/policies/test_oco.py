"""The bandit OCO baseline of 001 (reconstruction of Cao & Liu 2018): steps by hand, invariants, resume."""

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.io import load_state, save_state
from ckb.kernels import SquaredExponential
from ckb.policies import POLICIES, make_policy
from ckb.policies.oco import BanditOCO
from ckb.problems import BoxDomain, FiniteDomain, GaussianNoise, Observation, Problem
from ckb.runner import Environment, TrialConfig

CENTER = np.array([0.8, 0.8])


def bowl(m=1, offset=1.0, noise=(0.0, 0.0), domain=None):
    """f = -|x - (0.8, 0.8)|^2 on [0, 1]^2, g_j = x1 + x2 - offset (constrained optimum (0.5, 0.5))."""
    return Problem(
        "bowl",
        domain or BoxDomain([0.0, 0.0], [1.0, 1.0]),
        lambda X: -np.sum((X - CENTER) ** 2, axis=1),
        lambda X: np.column_stack([X[:, 0] + X[:, 1] - offset] * m),
        GaussianNoise(*noise),
        kernel=SquaredExponential(0.3),
    )


def obs(t, x, y, c):
    return Observation(t, -1, np.asarray(x, dtype=float), float(y), np.atleast_1d(np.asarray(c, float)))


def first_direction(seed, d=2):
    """The u_1 a policy given x0 draws from default_rng(seed): a normalized standard normal vector."""
    z = np.random.default_rng(seed).standard_normal(d)
    return z / np.linalg.norm(z)


def play(pol, problem, rounds, env_seed=0):
    env = Environment(problem, np.random.default_rng(env_seed))
    xs, fs, gs, duals = [], [], [], []
    for _ in range(rounds):
        out = env.step(pol.ask())
        for o in env.deliver(out):
            pol.tell(o)
        xs.append(out.x)
        fs.append(out.f)
        gs.append(out.g)
        duals.append(pol.internals().get("dual", np.nan))
    return np.array(xs), np.array(fs), np.array(gs), np.array(duals)


def test_registered_and_horizon_not_needed():
    assert POLICIES.get("oco") is BanditOCO
    pol = make_policy("oco", bowl().info(), np.random.default_rng(0), horizon=350)
    assert pol.delta_e == pytest.approx(0.05)  # default: 5% of the smallest side
    assert np.all((pol.x >= 0.05) & (pol.x <= 0.95))  # initial point in the shrunk box


def test_one_point_steps_by_hand():
    eta, eta_d, de, beta = 0.05, 0.2, 0.1, 0.5
    x1 = np.array([0.3, 0.6])
    pol = make_policy(
        "oco",
        bowl().info(),
        np.random.default_rng(7),
        eta=eta,
        eta_dual=eta_d,
        delta_e=de,
        dual_reg=beta,
        x0=x1,
    )
    u1 = first_direction(7)
    p1 = pol.ask()
    np.testing.assert_allclose(p1, x1 + de * u1, rtol=0, atol=1e-15)
    assert pol.internals() == {"dual": 0.0, "step_norm": 0.0}
    pol.tell(obs(1, p1, 0.7, 0.4))
    # lambda_1 = 0: the primal step is the loss estimate (d / delta)(-y) u alone
    x2 = np.clip(x1 - eta * (2 / de) * (-0.7) * u1, de, 1 - de)
    lam2 = max(0.0, 0.0 + eta_d * (0.4 - beta * 0.0))
    np.testing.assert_allclose(pol.x, x2, rtol=1e-14)
    assert pol.lam[0] == pytest.approx(lam2, rel=1e-14)

    p2 = pol.ask()
    u2 = (p2 - x2) / de
    assert np.linalg.norm(u2) == pytest.approx(1.0, rel=1e-12)
    assert pol.internals()["dual"] == pytest.approx(lam2)
    assert pol.internals()["step_norm"] == pytest.approx(np.linalg.norm(x2 - x1))
    pol.tell(obs(2, p2, -0.2, -0.5))
    x3 = np.clip(x2 - eta * (2 / de) * (0.2 + lam2 * (-0.5)) * u2, de, 1 - de)
    lam3 = max(0.0, lam2 + eta_d * (-0.5 - beta * lam2))  # = 0: the projection binds
    np.testing.assert_allclose(pol.x, x3, rtol=1e-12)
    assert lam3 == 0.0 and pol.lam[0] == 0.0


def test_projection_onto_the_shrunk_box_binds_exactly():
    de = 0.1
    pol = make_policy("oco", bowl().info(), np.random.default_rng(3), eta=10.0, delta_e=de, x0=[0.5, 0.5])
    u = first_direction(3)
    p = pol.ask()
    pol.tell(obs(1, p, 5.0, 0.0))  # a huge step along +u (the loss estimate is -(d/delta) 5 u)
    expect = np.where(u > 0, 1 - de, np.where(u < 0, de, 0.5))
    np.testing.assert_array_equal(pol.x, expect)


@pytest.mark.parametrize("second_first", [False, True])
def test_two_point_step_by_hand(second_first):
    eta, de = 0.02, 0.15
    x1 = np.array([0.4, 0.35])
    pol = make_policy(
        "oco", bowl().info(), np.random.default_rng(11), eta=eta, delta_e=de, variant="two-point", x0=x1
    )
    u = first_direction(11)
    pp, pm = pol.ask(), pol.ask()
    np.testing.assert_allclose(pp, x1 + de * u, rtol=0, atol=1e-15)
    np.testing.assert_allclose(pm, x1 - de * u, rtol=0, atol=1e-15)
    readings = [obs(1, pp, 0.9, [0.3]), obs(2, pm, 0.1, [-0.1])]
    for o in readings[::-1] if second_first else readings:
        pol.tell(o)
        if o is not (readings[0] if second_first else readings[1]):
            np.testing.assert_array_equal(pol.x, x1)  # no update before the pair is complete
    grad = (2 / (2 * de)) * ((-0.9) - (-0.1)) * u  # lambda = 0: the loss difference alone
    np.testing.assert_allclose(pol.x, np.clip(x1 - eta * grad, de, 1 - de), rtol=1e-14)
    assert pol.lam[0] == pytest.approx(eta * 0.5 * (0.3 - 0.1))  # the mean of the two readings
    # the next pair starts a fresh direction around the new iterate
    p3 = pol.ask()
    assert np.linalg.norm(p3 - pol.x) == pytest.approx(de)
    assert not np.allclose((p3 - pol.x) / de, u)


@pytest.mark.parametrize("variant", ["one-point", "two-point"])
def test_every_played_point_is_inside_the_box_and_the_dual_stays_nonnegative(variant):
    # big steps and a radius close to half the side: the projection is active most rounds
    for eta, de in [(5.0, 0.45), (0.5, 0.2), (1e-3, 0.01)]:
        prob = bowl(m=2, offset=0.3, noise=(0.3, 0.5))
        pol = make_policy(
            "oco", prob.info(), np.random.default_rng(1), eta=eta, delta_e=de, variant=variant, dual_reg=0.1
        )
        xs, _, _, _ = play(pol, prob, 300)
        assert np.all(xs >= 0.0) and np.all(xs <= 1.0)
        assert np.all(pol.x >= de) and np.all(pol.x <= 1 - de)
        assert np.all(pol.lam >= 0.0)
        duals = pol.internals()
        assert set(duals) == {"dual_0", "dual_1", "step_norm"} and min(duals["dual_0"], duals["dual_1"]) >= 0


def test_dual_is_nonnegative_every_round_and_grows_while_infeasible():
    # g = x1 + x2 + 1 > 0 everywhere: lambda_{t+1} = lambda_t + eta g > 0 and increasing
    prob = bowl(offset=-1.0, noise=(0.1, 0.0))
    pol = make_policy("oco", prob.info(), np.random.default_rng(2), eta=0.01)
    _, _, _, duals = play(pol, prob, 100)
    assert np.all(duals >= 0.0) and np.all(np.diff(duals) > 0.0)
    # always feasible (g <= -1): the dual stays exactly 0
    prob = bowl(offset=3.0, noise=(0.1, 0.0))
    pol = make_policy("oco", prob.info(), np.random.default_rng(2), eta=0.01)
    _, _, _, duals = play(pol, prob, 100)
    assert np.all(duals == 0.0)


@pytest.mark.parametrize("variant, eta", [("one-point", 0.002), ("two-point", 0.02)])
def test_improves_on_a_smooth_concave_problem(variant, eta):
    """From uniform starts the iterate approaches the constrained optimum x* = (0.5, 0.5) (f* = -0.18,
    multiplier 0.6), and the per-round regret + violation of the last 100 rounds is well below that of
    the first 100: 20 seeded runs of 600 rounds with noisy f and g."""
    prob = bowl(noise=(0.05, 0.05))
    T, f_star = 600, -0.18
    dist0, dist_T, early, late = [], [], [], []
    for seed in range(20):
        pol = make_policy(
            "oco",
            prob.info(),
            np.random.default_rng(seed),
            eta=eta,
            eta_dual=0.2,
            delta_e=0.1,
            variant=variant,
        )
        dist0.append(np.linalg.norm(pol.x - 0.5))
        _, fs, gs, _ = play(pol, prob, T, env_seed=100 + seed)
        dist_T.append(np.linalg.norm(pol.x - 0.5))
        early.append(np.mean(f_star - fs[:100]) + max(0.0, gs[:100].sum()) / 100)
        late.append(np.mean(f_star - fs[-100:]) + max(0.0, gs[-100:].sum()) / 100)
    assert np.mean(dist_T) < 0.5 * np.mean(dist0)
    assert np.mean(late) < 0.5 * np.mean(early)


def test_late_feedback_is_applied_when_it_arrives_in_any_order():
    """Three rounds asked before any feedback (a delaying environment): each reading updates once, with
    the direction of its own round, in arrival order."""
    de, eta = 0.1, 0.01
    pol = make_policy("oco", bowl().info(), np.random.default_rng(0), eta=eta, delta_e=de, x0=[0.5, 0.5])
    x1 = pol.x.copy()
    points = [pol.ask() for _ in range(3)]
    us = [(p - x1) / de for p in points]  # all three asked around x_1
    x, lam = x1.copy(), 0.0
    for t, (y, c) in zip([3, 1, 2], [(0.2, 0.5), (-0.1, 0.3), (0.4, -0.2)], strict=True):
        pol.tell(obs(t, points[t - 1], y, c))
        x = np.clip(x - eta * (2 / de) * (-y + lam * c) * us[t - 1], de, 1 - de)
        lam = max(0.0, lam + eta * c)
        np.testing.assert_allclose(pol.x, x, rtol=1e-12)
        assert pol.lam[0] == pytest.approx(lam, rel=1e-12)
    assert not pol._pending


@pytest.mark.parametrize("variant", ["one-point", "two-point"])
def test_policy_state_round_trips_through_a_file_mid_pair(variant, tmp_path):
    prob = bowl(noise=(0.1, 0.1))
    env = Environment(prob, np.random.default_rng(5))
    a = make_policy("oco", prob.info(), np.random.default_rng(4), eta=0.01, variant=variant)
    for _ in range(7):  # an odd number of rounds: mid-pair for two-point
        out = env.step(a.ask())
        a.tell(env.deliver(out)[0])
    pending = env.step(a.ask())  # asked, feedback not yet told
    save_state(tmp_path / "p.npz", a.state_dict())
    b = make_policy("oco", prob.info(), np.random.default_rng(999), eta=0.01, variant=variant)
    b.load_state_dict(load_state(tmp_path / "p.npz"))
    for pol in (a, b):
        pol.tell(env.deliver(pending)[0])
    for _ in range(40):
        xa, xb = a.ask(), b.ask()
        np.testing.assert_array_equal(xa, xb)
        assert a.internals() == b.internals()
        o = env.deliver(env.step(xa))[0]
        a.tell(o)
        b.tell(o)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.lam, b.lam)


@pytest.mark.parametrize("variant", ["one-point", "two-point"])
def test_trial_checkpoint_resume_is_bit_identical(variant, split_run):
    cfg = TrialConfig(
        "oco", "oco", "gardner", 80, 0, 0, {"eta": 1e-3, "variant": variant}, {"constraint_noise": "gaussian"}
    )
    full, rest = split_run(cfg, 37)
    np.testing.assert_array_equal(full.x, rest.x)
    np.testing.assert_array_equal(full.internals["dual"], rest.internals["dual"])
    np.testing.assert_array_equal(full.internals["step_norm"], rest.internals["step_norm"])


def test_different_seeds_start_from_different_points():
    starts = np.array([make_policy("oco", bowl().info(), np.random.default_rng(s)).x for s in range(200)])
    assert np.all((starts >= 0.05) & (starts <= 0.95))
    # uniform on [0.05, 0.95]^2: mean 0.5 per coordinate, sd 0.26 / sqrt(200) = 0.018
    np.testing.assert_allclose(starts.mean(axis=0), 0.5, atol=0.06)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"eta": 0.0}, r"eta must be > 0.0, got 0.0"),
        ({"eta": float("nan")}, r"eta must be finite"),
        ({"eta_dual": -1.0}, r"eta_dual must be > 0.0, got -1.0"),
        ({"delta_e": 0.0}, r"delta_e .* must be > 0.0, got 0.0"),
        ({"delta_e": 0.5}, r"delta_e \(half the box's smallest side is 0.5\) must be < 0.5, got 0.5"),
        ({"dual_reg": -0.1}, r"dual_reg \(beta\) must be >= 0.0, got -0.1"),
        ({"variant": "three-point"}, r"variant must be one of .*'one-point'.*got 'three-point'"),
        ({"x0": [0.01, 0.5]}, r"x0 = \[0.01, 0.5\] must lie in the box shrunk by delta_e = 0.05"),
        ({"x0": [0.5]}, r"x0 must have shape \(2\), got \(1,\)"),
        ({"step": 0.1}, r"no parameter 'step'"),
    ],
)
def test_bad_parameters_are_named(params, match):
    with pytest.raises(InvalidInputError, match=match):
        make_policy("oco", bowl().info(), np.random.default_rng(0), **params)


@pytest.mark.parametrize(
    "domain, match",
    [
        (FiniteDomain(np.random.default_rng(0).uniform(size=(5, 2))), "finite domain"),
        (BoxDomain([0.0, 0.0], [1.0, 1.0], grid=5), "grid of candidates"),
    ],
)
def test_needs_a_continuous_box(domain, match):
    with pytest.raises(InvalidInputError, match=match):
        make_policy("oco", bowl(domain=domain).info(), np.random.default_rng(0))


def test_bad_observations_are_rejected_and_nothing_changes():
    pol = make_policy("oco", bowl().info(), np.random.default_rng(0), eta=0.1)
    p = pol.ask()
    x, lam = pol.x.copy(), pol.lam.copy()
    with pytest.raises(InvalidInputError, match="finite"):
        pol.tell(obs(1, p, float("nan"), 0.0))
    with pytest.raises(InvalidInputError, match="round t = 2 has not been asked"):
        pol.tell(obs(2, p, 0.0, 0.0))
    with pytest.raises(InvalidInputError, match="but the policy played"):
        pol.tell(obs(1, p + 0.01, 0.0, 0.0))
    with pytest.raises(InvalidInputError, match="m = 1"):
        pol.tell(Observation(1, -1, p, 0.0, np.zeros(2)))
    np.testing.assert_array_equal(pol.x, x)
    np.testing.assert_array_equal(pol.lam, lam)
    pol.tell(obs(1, p, 0.0, 0.0))  # the round still awaits its feedback
