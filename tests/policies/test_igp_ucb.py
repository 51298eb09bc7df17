import numpy as np
import pytest

from ckb.errors import InvalidInputError, UnknownNameError
from ckb.kernels import SquaredExponential
from ckb.policies import POLICIES, make_policy
from ckb.problems import BoxDomain, FiniteDomain, GaussianNoise, Observation, Problem
from ckb.surrogates import dense_posterior


def _problem(n=20, m=1, domain=None):
    dom = domain or FiniteDomain(np.linspace(0, 1, n)[:, None])
    f = lambda X: np.sin(6 * X[:, 0])
    g = lambda X: np.column_stack([X[:, 0] - 0.7] * m)
    return Problem("toy", dom, f, g if m else None, GaussianNoise(0.1, 0.1), kernel=SquaredExponential(0.2))


def _obs(t, i, x, y, m=1):
    return Observation(t, i, np.atleast_1d(x), y, np.zeros(m))


def test_alias_and_unknown_names():
    assert POLICIES.get("gp-ucb") is POLICIES.get("igp-ucb")
    with pytest.raises(UnknownNameError, match="igp-ucb"):
        POLICIES.get("igp-ucbb")


def test_ucb_argmax_matches_hand_computation(rng):
    p = _problem()
    pol = make_policy("igp-ucb", p.info(), rng, B=1.0, R=0.1, noise=0.5, alpha=0.1)
    X = p.domain.candidates
    data = [(3, 0.2), (7, -0.4), (3, 0.3), (15, 0.9)]
    for s, (i, y) in enumerate(data, 1):
        pol.ask()
        pol.tell(_obs(s, i, X[i], y))
    a = pol.ask()
    idx = [i for i, _ in data]
    mean, cov = dense_posterior(p.kernel, 0.5, X[idx], np.array([y for _, y in data]), X)
    gamma = 0.0  # information gain of the chosen points, from dense posteriors
    for s in range(len(idx)):
        _, c = dense_posterior(p.kernel, 0.5, X[idx[:s]], np.array([y for _, y in data[:s]]), X[[idx[s]]])
        gamma += 0.5 * np.log1p(c[0, 0] / 0.5)
    beta = 1.0 + 0.1 * np.sqrt(2 * (gamma + 1 + np.log(1 / 0.1)))
    assert pol.internals()["beta"] == pytest.approx(beta, rel=1e-10)
    assert a == int(np.argmax(mean + beta * np.sqrt(np.diag(cov))))


def test_first_round_ties_are_broken_uniformly_at_random():
    p = _problem(n=10)
    firsts = [make_policy("igp-ucb", p.info(), np.random.default_rng(s)).ask() for s in range(400)]
    counts = np.bincount(firsts, minlength=10)
    # uniform over 10 arms: each count ~ Binomial(400, 0.1), mean 40, sd 6
    assert counts.min() > 15 and counts.max() < 70


def test_checkpoint_round_trip_continues_identically():
    p = _problem()
    env_rng = np.random.default_rng(0)
    a = make_policy("igp-ucb", p.info(), np.random.default_rng(1))
    for s in range(1, 31):
        i = a.ask()
        a.tell(_obs(s, i, p.domain.candidates[i], float(env_rng.normal())))
    state = a.state_dict()
    b = make_policy("igp-ucb", p.info(), np.random.default_rng(999))
    b.load_state_dict(state)
    for s in range(31, 60):
        ia, ib = a.ask(), b.ask()
        assert ia == ib
        y = float(env_rng.normal())
        a.tell(_obs(s, ia, p.domain.candidates[ia], y))
        b.tell(_obs(s, ib, p.domain.candidates[ib], y))
    np.testing.assert_array_equal(a.gp.mean, b.gp.mean)


def test_continuous_box_proposals_stay_inside(rng):
    p = _problem(domain=BoxDomain([0.0], [1.0]), m=0)
    pol = make_policy("igp-ucb", p.info(), rng, beta=2.0)
    for s in range(1, 6):
        x = pol.ask()
        assert x.shape == (1,) and 0.0 <= x[0] <= 1.0
        pol.tell(Observation(s, -1, x, float(np.sin(6 * x[0])), np.zeros(0)))
    assert pol.gp.t == 5


@pytest.mark.parametrize(
    "params, match",
    [
        ({"B": -1.0}, "B must be >= 0"),
        ({"noise": 0.0}, "noise must be >= 1e-12"),
        ({"alpha": 1.5}, "alpha must be < 1"),
        ({"beta": "thoery"}, "theory"),
        ({"Bx": 1.0}, "did you mean 'B'|Did you mean 'B'"),
    ],
)
def test_bad_parameters_are_named(rng, params, match):
    with pytest.raises(InvalidInputError, match=match):
        make_policy("igp-ucb", _problem().info(), rng, **params)


def test_wrong_number_of_constraint_values_is_rejected(rng):
    p = _problem(m=2)
    pol = make_policy("igp-ucb", p.info(), rng)
    i = pol.ask()
    with pytest.raises(InvalidInputError, match="1 constraint value.*m = 2"):
        pol.tell(Observation(1, i, p.domain.candidates[i], 0.0, np.zeros(1)))


def test_nan_observation_is_rejected_and_nothing_recorded(rng):
    p = _problem()
    pol = make_policy("igp-ucb", p.info(), rng)
    i = pol.ask()
    with pytest.raises(InvalidInputError, match="finite"):
        pol.tell(_obs(1, i, p.domain.candidates[i], float("nan")))
    assert pol.gp.t == 0
