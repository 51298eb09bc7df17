import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.policies.igp_ucb import IGPUCB
from ckb.problems import make_problem
from ckb.problems.queueing import StochasticConstraintProblem, clipped_poisson_mean
from ckb.runner import ENVIRONMENTS, Trial, TrialConfig, final_metrics
from ckb.runner.environments.full_information import FullInformationEnvironment


def _queue(**params):
    return make_problem("gpu-queue", np.random.default_rng(0), **params)


def _env(problem=None, seed=1):
    return FullInformationEnvironment(problem or _queue(), np.random.default_rng(seed))


def _service(p, s, k):
    """h_1(x_1) + h_2(x_2) at the candidates, written out independently of the problem module."""
    X = p.domain.candidates
    return sum(s[i] * (1 - np.exp(-k[i] * X[:, i])) / (1 - np.exp(-k[i])) for i in (0, 1))


def cfg(**kw):
    base = dict(
        algorithm="scgp-ucb",
        policy="scgp-ucb",
        problem="gpu-queue",
        horizon=300,
        trial=1,
        seed=3,
        policy_params={"setting": "ii"},
        problem_params={"levels": 6},
        environment="full-information",
    )
    base.update(kw)
    return TrialConfig(**base)


def test_registered():
    assert ENVIRONMENTS.get("full-information") is FullInformationEnvironment


@pytest.mark.parametrize("environment", ["basic", "delayed"])
def test_the_queue_problem_is_refused_by_every_other_environment(environment):
    """Before, gpu-queue under 'basic' told the policy the exact mean g(x_t) as its constraint observation."""
    want = rf"^problem 'gpu-queue' needs environment 'full-information', got '{environment}': .*g_t"
    with pytest.raises(InvalidInputError, match=want):
        Trial(cfg(policy="igp-ucb", policy_params={}, environment=environment))


def test_step_uses_the_revealed_sample_and_records_the_mean():
    p = _queue()
    env = _env(p)
    g_t = env.reveal()
    assert g_t.shape == (p.domain.n, 1) and not g_t.flags.writeable
    assert env.reveal() is g_t  # the same draw until the round is played
    out = env.step(17)
    assert out.c.tolist() == g_t[17].tolist()  # observation: the realized g_t(x_t)
    assert out.g.tolist() == p.g_values[17].tolist()  # truth for metrics: the mean E[g_t(x_t)]
    assert out.f == p.f_values[17]
    assert env.reveal() is not g_t  # the next round draws anew
    with pytest.raises(InvalidInputError, match="reveal"):
        _env(p).step(0)


def test_samples_do_not_depend_on_the_actions():
    # Assumption 5: g_t is independent of everything else; the stream is the same whatever is played
    a, b = _env(seed=4), _env(seed=4)
    for t in range(30):
        ga, gb = a.reveal(), b.reveal()
        np.testing.assert_array_equal(ga, gb)
        a.step(t % 36)
        b.step(35 - t % 36)


def test_g_t_is_revealed_before_acting_in_a_trial():
    seen = []

    class Spy(IGPUCB):
        def ask(self, context=None):
            seen.append(np.array(context))  # what the policy is shown before it acts
            return super().ask(context)

    config = cfg(policy="igp-ucb", policy_params={}, horizon=40)
    trial = Trial(config)
    trial.policy = Spy(trial.problem.info(), config.rng(2))
    tr = trial.run()
    assert len(seen) == 40
    for t in range(40):  # the sample the policy saw is the one the round used
        assert tr.c[t, 0] == seen[t][tr.index[t], 0]


def test_clipped_poisson_mean_matches_a_direct_sum():
    rate, G = 3.0, 4.0
    H = np.array([0.0, 1.5, 3.0, 4.0])
    k = np.arange(200)
    pmf = np.exp(k * math.log(rate) - rate - np.array([math.lgamma(j + 1) for j in k]))
    direct = np.array([np.sum(pmf * np.clip(k - h, -G, G)) for h in H])
    np.testing.assert_allclose(clipped_poisson_mean(rate, H, G), direct, rtol=0, atol=1e-13)
    # clipping only lowers the mean (Poisson has no mass below 0 > -G + H here)
    assert np.all(direct < rate - H)


def test_queue_problem_mean_is_the_mean_of_the_clipped_samples():
    # a small G that clips often: E[g_t] moves visibly below lambda - H, and g_values must follow
    p = _queue(arrival_rate=1.5, service_max=(1.0, 1.0), G=2.5, levels=3)
    H = _service(p, (1.0, 1.0), (5.0, 3.0))
    assert np.max(np.abs(p.g_values[:, 0] - (1.5 - H))) > 0.05
    assert p.metadata["max_clipping_shift"] == pytest.approx(np.max(np.abs(p.g_values[:, 0] - (1.5 - H))))
    env = _env(p, seed=11)
    N = 20000
    draws = np.empty((N, p.domain.n))
    for s in range(N):
        draws[s] = env.reveal()[:, 0]
        env.step(0)
    assert np.max(np.abs(draws)) <= 2.5  # Assumption 6
    assert np.max(draws) == 2.5  # the clip binds
    se = draws.std(axis=0) / math.sqrt(N)
    z = (draws.mean(axis=0) - p.g_values[:, 0]) / se
    assert np.max(np.abs(z)) < 4.0  # fixed seed; 9 arms
    # and the unclipped mean is rejected by the same test
    assert np.max(np.abs((draws.mean(axis=0) - (1.5 - H)) / se)) > 10.0


def test_queue_problem_defaults_and_hints():
    p = _queue()
    assert p.minimize and p.m == 1 and p.domain.n == 121
    assert p.hints["B"] == 1.0 == float(np.max(np.abs(p.f_values)))
    assert p.hints["G"] == 12.0 == p.constraint_bound
    assert p.hints["slater_margin"] == pytest.approx(float(np.max(-p.g_values)))
    # 5.8 jobs per round against 6 at full allocation (the best arm): the margin is -E[clip(A - 6, -G, G)]
    # with A ~ Poisson(5.8), a little above 6 - 5.8 = 0.2 (the clip at +G cuts the upper tail); direct sum
    k = np.arange(200)
    pmf = np.exp(k * math.log(5.8) - 5.8 - np.array([math.lgamma(j + 1) for j in k]))
    margin = -float(np.sum(pmf * np.clip(k - 6.0, -12.0, 12.0)))
    assert 0.2 < margin < 0.2001
    assert np.max(_service(p, (3.0, 3.0), (5.0, 3.0))) == pytest.approx(6.0)
    assert p.hints["slater_margin"] == pytest.approx(margin, rel=0, abs=1e-12)
    assert np.all(p.g_values[:, 0] <= 5.8 - _service(p, (3.0, 3.0), (5.0, 3.0)))
    _, x, f_star = p.optimum
    assert x.tolist() == pytest.approx([0.6, 0.9]) and f_star == pytest.approx(1.725 / 2.6)
    assert int(np.sum(p.feasible)) == 13


@pytest.mark.parametrize(
    "params, match",
    [
        ({"arrival_rate": 6.5}, "Slater"),
        ({"G": 5.0}, "G = 5.0"),
        ({"service_max": (1.0, 2.0, 3.0)}, "pair"),
        ({"levels": 1}, "levels"),
        ({"energy_linear": 0.0, "energy_quadratic": 0.0}, "energy"),
    ],
)
def test_bad_queue_parameters(params, match):
    with pytest.raises(InvalidInputError, match=match):
        _queue(**params)


def test_problem_without_sampler_is_rejected():
    with pytest.raises(InvalidInputError, match="sample_constraints"):
        Trial(cfg(problem="rkhs-synthetic", problem_params={"constraint": "neg-f-plus-h"}))


def test_sampler_with_wrong_shape_is_rejected():
    q = _queue(levels=3)

    def two_constraints(rng):
        return np.zeros((9, 2))

    bad = StochasticConstraintProblem(
        "bad",
        q.domain,
        q.f_values,
        q.g_values,
        q.noise,
        kernel=q.kernel,
        constraint_sampler=two_constraints,
        constraint_bound=1.0,
    )
    with pytest.raises(InvalidInputError, match=r"shape \(9, 2\), expected shape \(9, 1\)"):
        _env(bad).reveal()


def test_checkpoint_and_resume_is_exact(tmp_path):
    full = Trial(cfg()).run()
    part = Trial(cfg())
    part.run(until=137)
    part.save_checkpoint(tmp_path / "ck.npz")
    resumed = Trial.resume(tmp_path / "ck.npz")
    assert resumed.t == 137
    rest = resumed.run()
    for k in ("index", "f", "g", "y", "c"):
        np.testing.assert_array_equal(getattr(full, k), getattr(rest, k))
    for k in ("Q", "penalty", "V", "eps", "beta"):
        np.testing.assert_array_equal(full.internals[k], rest.internals[k])
    a, b = final_metrics(full), final_metrics(rest)
    assert a["regret"] == b["regret"] and a["violation"] == b["violation"]


def test_queue_recursion_holds_along_a_trial():
    # Q(t+1) = [Q(t) + g_t(x_t) + eps_t]^+ with g_t(x_t) the recorded observation, and pathwise
    # sum_{s<=t} (g_s(x_s) + eps_s) <= Q(t+1): the inequality the papers' violation bound starts from
    tr = Trial(cfg(policy_params={"setting": "i"})).run()
    Q, eps, c = tr.internals["Q"], tr.internals["eps"], tr.c[:, 0]
    prev = np.concatenate(([0.0], Q[:-1]))
    np.testing.assert_allclose(Q, np.maximum(prev + c + eps, 0.0), rtol=0, atol=1e-12)
    assert np.all(np.cumsum(c + eps) <= Q + 1e-9)
    np.testing.assert_allclose(eps, 1 / np.sqrt(np.arange(1, 301)))


@pytest.mark.slow
def test_trial_mean_cumulative_violation_falls_to_zero_after_a_burn_in():
    """Theorems 3-4: E[sum_{t<=tau} g(x_t)] <= 0 once tau is past a burn-in (small instance, fixed seeds).

    25 arms, lambda = 5.6 against a capacity of 6 (delta ~ 0.4), T = 1,500, 16 trials per setting. Most
    of the spread between trials is the arrivals' own noise, sum_t (lambda - omega_t), whose sd is
    sqrt(lambda tau) ~ 90 at T; the check is that the trial mean plus two standard errors stays below
    0 over the second half. IGP-UCB, which ignores the constraint, violates linearly on the same
    instances and arrival streams.
    """
    T, n = 1500, 16
    curves = {}
    for name, policy, params in (
        ("i", "scgp-ucb", {"setting": "i"}),
        ("ii", "scgp-ucb", {"setting": "ii"}),
        ("igp", "igp-ucb", {}),
    ):
        runs = [
            Trial(
                cfg(
                    algorithm=name,
                    policy=policy,
                    policy_params=params,
                    horizon=T,
                    trial=k,
                    seed=0,
                    problem_params={"levels": 5, "arrival_rate": 5.6},
                )
            ).run()
            for k in range(n)
        ]
        curves[name] = np.array([np.cumsum(tr.g[:, 0]) for tr in runs])
    for name in ("i", "ii"):
        S = curves[name]
        upper = S.mean(axis=0) + 2 * S.std(axis=0, ddof=1) / np.sqrt(n)
        assert np.all(upper[T // 2 :] < 0.0), (name, float(np.max(upper[T // 2 :])))
    assert curves["igp"].mean(axis=0)[-1] > 0.5 * T
