"""Tests for the safe-BO baselines (src/ckb/policies/safe_bo.py): SafeOpt, StageOpt, SGP-UCB."""

import math

import numpy as np
import pytest

from ckb.errors import InvalidInputError, OutOfDomainError
from ckb.kernels import PrecomputedKernel, SquaredExponential
from ckb.policies import make_policy
from ckb.policies.safe_bo import (
    GPSafeSet,
    LipschitzSafeSet,
    gp_expanders,
    pessimistic_safe_set,
    reference_expanders,
    reference_safe_set,
)
from ckb.problems import BoxDomain, FiniteDomain, GaussianNoise, Observation, Problem
from ckb.problems.safety import euclidean_distances, kernel_distances
from ckb.runner import Trial, TrialConfig, final_metrics
from ckb.surrogates import dense_posterior

LINE5 = euclidean_distances(np.arange(5.0)[:, None])  # 5 arms at 0, 1, 2, 3, 4: d(i, j) = |i - j|
SYNTH = {"constraint": "neg-f-plus-h", "h_fraction": 0.5}


def _arr(*rows):
    return np.array(rows, dtype=float)


# --------------------------------------------------------------------------------------------------
# The set rules, by hand
# --------------------------------------------------------------------------------------------------


def test_safe_set_expansion_by_hand():
    ss = LipschitzSafeSet(np.array([2]), np.array([1.0]), LINE5)
    assert ss.safe.tolist() == [False, False, True, False, False]
    # l(2) = 1.5 certifies |x' - 2| <= 1.5; arms 0 and 4 have large lower bounds but are not in S_0,
    # so they certify nothing
    assert ss.update(_arr([5.0, -1.0, 1.5, -1.0, 2.5]))
    assert ss.safe.tolist() == [False, True, True, True, False]
    # from S_1 = {1, 2, 3}: l(3) = 2 reaches 1..4 (d(3, 1) = 2: equality counts); arm 0 is at
    # distance 1 > 0.5 from arm 1, 2 > 1.5 from arm 2 and 3 > 2 from arm 3
    assert ss.update(_arr([5.0, 0.5, 1.5, 2.0, 2.5]))
    assert ss.safe.tolist() == [False, True, True, True, True]
    # now arm 4 is a witness too, but l(4) = 2.5 < d(4, 0) = 4: nothing new
    assert not ss.update(_arr([5.0, 0.5, 1.5, 2.0, 2.5]))
    assert ss.update(_arr([5.0, 1.0, 1.5, 2.0, 2.5]))  # l(1) = 1 = L d(1, 0)
    assert ss.safe.all()


def test_safe_set_step_matches_the_definition_by_hand():
    lower = _arr([5.0, -1.0, 1.5, -1.0, 5.0])
    safe, cert = reference_safe_set(np.array([False, False, True, False, False]), lower, [1.0], LINE5)
    assert safe.tolist() == [False, True, True, True, False] and cert.shape == (1, 5)


def test_expanders_by_hand():
    ss = LipschitzSafeSet(np.array([1, 2, 3]), np.array([1.0]), LINE5)  # unsafe: arms 0 and 4
    # distance to the nearest unsafe arm: 1 (arm 1), 2 (arm 2), 1 (arm 3)
    G = ss.expanders(_arr([9.0, 0.5, 3.0, 0.9, 9.0]))
    assert G.tolist() == [False, False, True, False, False]  # unsafe arms are never expanders
    G = ss.expanders(_arr([9.0, 0.5, 1.0, 1.0, 9.0]))  # u(3) - 1 * 1 = 0: equality counts
    assert G.tolist() == [False, False, False, True, False]
    ref = reference_expanders(ss.safe, ss.certified, _arr([9.0, 0.5, 1.0, 1.0, 9.0]), [1.0], LINE5)
    assert ref.tolist() == G.tolist()


def test_two_constraints_by_hand():
    ss = LipschitzSafeSet(np.array([2]), np.array([1.0, 2.0]), LINE5)
    # constraint 1: l = 1 reaches d <= 1; constraint 2: l = 1.9 with L = 2 reaches d <= 0.95 only
    ss.update(_arr([0.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.9, 0.0, 0.0]))
    assert ss.certified.tolist() == [[False, True, True, True, False], [False, False, True, False, False]]
    assert ss.safe.tolist() == [False, False, True, False, False]  # the intersection
    # arm 2 is an expander through constraint 2 (u = 2 reaches arms 1 and 3 at L d = 2), not 1
    assert ss.expanders(_arr([0.5] * 5, [2.0] * 5)).tolist() == [False, False, True, False, False]
    assert not ss.expanders(_arr([0.5] * 5, [1.9] * 5)).any()


def test_incremental_safe_set_equals_the_definition_on_random_runs():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, m = 30, 2
        D = euclidean_distances(rng.uniform(0, 1, (n, 2)))
        L = rng.uniform(0.5, 3.0, m)
        seeds = rng.choice(n, 2, replace=False)
        ss = LipschitzSafeSet(seeds, L, D)
        lower = np.full((m, n), -np.inf)
        lower[:, seeds] = 0.0
        for _ in range(15):
            # lower bounds only increase, as C_t = C_{t-1} ∩ Q_t makes them
            lower = np.maximum(lower, rng.normal(-0.3, 0.5, (m, n)))
            prev = ss.safe.copy()
            ss.update(lower)
            safe, cert = reference_safe_set(prev, lower, L, D)
            np.testing.assert_array_equal(ss.safe, safe)
            np.testing.assert_array_equal(ss.certified, cert)
            assert np.all(ss.safe[prev]) and np.all(ss.safe[seeds])  # monotone, keeps the seeds
            upper = lower + rng.uniform(0, 1.0, (m, n))
            np.testing.assert_array_equal(
                ss.expanders(upper), reference_expanders(ss.safe, cert, upper, L, D)
            )


def test_with_exact_bounds_the_rule_never_certifies_an_infeasible_arm():
    # Soundness of the Lipschitz rule: with l = u = s = -g and the true Lipschitz constant the closure
    # from a feasible seed stays feasible (and on the synthetic problem covers most of the feasible arms).
    for k in range(5):
        p = make_problem_synthetic(rng=np.random.default_rng(k))
        ss = LipschitzSafeSet(
            np.array([int(p.hints["safe_seed"])]),
            np.array([p.hints["lipschitz"]]),
            euclidean_distances(p.domain.candidates),
        )
        while ss.update(-p.g_values.T):
            pass
        assert np.all(p.feasible[ss.safe]) and ss.safe.sum() > 1
        assert not ss.expanders(-p.g_values.T).any()  # with exact bounds expansion is over


def test_pessimistic_set_by_hand():
    mean = _arr([-1.0, -0.5, 0.2, -2.0], [-1.0, -1.0, -1.0, 0.5])
    std = _arr([0.5, 0.5, 0.1, 1.0], [0.5, 0.2, 0.2, 0.1])
    # constraint 1 (beta 1): -0.5, 0, 0.3, -1 ; constraint 2 (beta 2): 0, -0.6, -0.6, 0.7
    D = pessimistic_safe_set(mean, std, np.array([1.0, 2.0]), np.array([2]))
    assert D.tolist() == [True, True, True, False]  # arm 2 only as the seed


# --------------------------------------------------------------------------------------------------
# Policies on small problems
# --------------------------------------------------------------------------------------------------


def _toy(n=8, m=1, hints=None, kernel=None, domain=None):
    dom = domain or FiniteDomain(np.linspace(0, 1, n)[:, None])
    x = np.linspace(0, 1, n)
    f = np.sin(3 * x)
    g = np.column_stack([x - 0.6 - 0.1 * j for j in range(m)]) if m else None
    hints = {"safe_seed": 1, "lipschitz": 1.0, "B": 1.0, "G": 1.0} if hints is None else hints
    return Problem(
        "toy", dom, f, g, GaussianNoise(0.1, 0.1), kernel=kernel or SquaredExponential(0.3), hints=hints
    )


def _obs(pol, t, i, y, c):
    """An observation of arm ``i`` of ``pol``'s domain (an index out of range keeps a placeholder point)."""
    cand = pol.info.domain.candidates
    x = cand[i] if 0 <= i < len(cand) else np.array([float(i)])
    return Observation(t, i, x, float(y), np.atleast_1d(np.asarray(c, dtype=float)))


def test_safeopt_intervals_and_choice_match_dense_reference():
    p = _toy(n=7)
    X = p.domain.candidates
    pol = make_policy("safeopt", p.info(), np.random.default_rng(0), noise=0.5, lipschitz=0.8)
    env = np.random.default_rng(1)
    hist = []  # (arm, y, c)
    lf = np.full(7, -np.inf)
    uf = np.full(7, np.inf)
    ls = np.full(7, -np.inf)
    ls[1] = 0.0
    us = np.full(7, np.inf)
    safe = np.zeros(7, bool)
    safe[1] = True
    for t in range(1, 13):
        a = pol.ask()
        b, bg = pol.internals()["beta"], pol.internals()["beta_g"]
        idx = [h[0] for h in hist]
        mf, cf = dense_posterior(p.kernel, 0.5, X[idx], np.array([h[1] for h in hist]), X)
        mg, cg = dense_posterior(p.kernel, 0.5, X[idx], np.array([h[2] for h in hist]), X)
        sf, sg = np.sqrt(np.maximum(np.diag(cf), 0)), np.sqrt(np.maximum(np.diag(cg), 0))
        lf, uf = np.maximum(lf, mf - b * sf), np.minimum(uf, mf + b * sf)
        ls, us = np.maximum(ls, -mg - bg * sg), np.minimum(us, -mg + bg * sg)  # s = -g
        np.testing.assert_allclose(pol.lf, lf, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(pol.us[0], us, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(pol.ls[0], ls, rtol=1e-9, atol=1e-12)
        prev = safe
        safe, cert = reference_safe_set(prev, ls[None], [0.8], pol.distances)
        np.testing.assert_array_equal(pol.safe, safe)
        G = reference_expanders(safe, cert, us[None], [0.8], pol.distances)
        M = safe & (uf >= lf[safe].max())
        w = np.maximum(uf - lf, us - ls)
        cand = np.flatnonzero(G | M)
        assert a in cand and w[a] == pytest.approx(w[cand].max(), rel=1e-9)
        y, c = np.sin(3 * X[a, 0]) + 0.1 * env.normal(), X[a, 0] - 0.6 + 0.1 * env.normal()
        pol.tell(_obs(pol, t, a, y, c))
        hist.append((a, y, c))


def _two_constraint_problem():
    rng = np.random.default_rng(7)
    x = np.linspace(0, 1, 30)
    f = np.sin(5 * x)
    g = np.column_stack([0.7 - np.cos(3 * (x - 0.5)), x - 0.8])  # safe: |x - 0.5| < 0.27 and x < 0.8
    d = euclidean_distances(x[:, None])
    from ckb.problems.safety import safety_hints

    hints = {"B": 1.0, "G": 1.0, **safety_hints(g, d, rng)}
    return Problem(
        "two",
        FiniteDomain(x[:, None]),
        f,
        g,
        GaussianNoise(0.05, 0.05),
        kernel=SquaredExponential(0.2),
        hints=hints,
    )


@pytest.mark.parametrize("policy", ["safeopt", "stageopt", "sgp-ucb"])
@pytest.mark.parametrize("two_constraints", [False, True])
def test_plays_only_inside_the_current_safe_set(policy, two_constraints):
    if two_constraints:
        problem = _two_constraint_problem()
    else:
        problem = make_problem_synthetic(n_grid=40)
    info = problem.info()
    seed = _widest_margin(problem)  # so that the set grows within the test's 150 rounds
    extra = {"T0": 100} if policy == "stageopt" else {}  # (T0 = 15 by default: too short to grow)
    pol = make_policy(policy, info, np.random.default_rng(11), horizon=150, safe_seed=seed, **extra)
    env = np.random.default_rng(12)
    prev = pol.safe.copy()
    for t in range(1, 151):
        a = pol.ask()
        S = pol.safe.copy()
        assert S[a], f"round {t}: arm {a} is outside the safe set"
        assert S[seed]
        if policy != "sgp-ucb":  # the Lipschitz safe set only grows; SGP-UCB's D_t is recomputed
            assert np.all(S[prev])
        prev = S
        f, g = problem.evaluate(a, problem.domain.candidates[a])
        y, c = f + 0.05 * env.normal(), g + 0.05 * env.normal(size=g.shape)
        pol.tell(Observation(t, a, problem.domain.candidates[a], y, c))
    assert pol.safe.sum() > 1  # it did expand from the seed


def _widest_margin(problem):
    return int(np.argmax(np.min(-problem.g_values, axis=1)))


def make_problem_synthetic(rng=None, **params):
    from ckb.problems import make_problem

    return make_problem("rkhs-synthetic", rng or np.random.default_rng(5), **{**SYNTH, **params})


def _trial(policy, horizon, trial=0, seed=0, n_grid=100, **params):
    return Trial(
        TrialConfig(
            algorithm=policy,
            policy=policy,
            problem="rkhs-synthetic",
            horizon=horizon,
            trial=trial,
            seed=seed,
            policy_params=params,
            problem_params={**SYNTH, "n_grid": n_grid},
        )
    )


def test_stageopt_switches_stage_at_T0_and_then_runs_gp_ucb_in_the_frozen_set():
    tr = _trial("stageopt", 70, n_grid=40, T0=30, safe_set="lipschitz")
    pol = tr.policy
    frozen = None
    for t in range(1, 71):
        if t == 31:
            frozen = pol.safe.copy()
        if t > 30:  # stage 2: x_t = argmax over S_T0 of mu + beta sigma (posterior after t - 1 rounds)
            ucb = pol.gp.mean + pol.beta(t, pol.gp) * pol.gp.std
            best = ucb[frozen].max()
        tr.step()
        if t > 30:
            a = int(tr.trace.index[-1])
            assert frozen[a] and ucb[a] == pytest.approx(best, rel=1e-12)
            np.testing.assert_array_equal(pol.safe, frozen)
    stage = tr.trace.internals["stage"]
    assert np.all(tr.trace.internals["expanders"][:30] > 0)  # stage 1 did not run out of expanders
    assert stage[:30].tolist() == [1] * 30 and stage[30:].tolist() == [2] * 40
    assert pol.switched_at == 31
    assert np.all(np.isnan(tr.trace.internals["expanders"][30:]))


def test_stageopt_default_T0_is_a_tenth_of_the_horizon():
    info = make_problem_synthetic().info()
    assert make_policy("stageopt", info, np.random.default_rng(0), horizon=1000).T0 == 100
    assert make_policy("stageopt", info, np.random.default_rng(0), horizon=1001).T0 == 101
    assert make_policy("stageopt", info, np.random.default_rng(0), horizon=50, T0=7).T0 == 7
    assert _trial("stageopt", 200).policy.T0 == 20  # the runner passes its horizon


def test_when_only_the_seed_is_safe_the_seed_is_played():
    # A huge Lipschitz constant: the seed can certify no neighbour and is no expander.
    info = make_problem_synthetic(n_grid=30).info()
    seed = int(info.hints["safe_seed"])
    rng = np.random.default_rng(0)
    for name, params in [
        ("stageopt", {"T0": 10, "safe_set": "lipschitz"}),
        ("stageopt", {"T0": 10, "switch_when_converged": False, "safe_set": "lipschitz"}),
        ("safeopt", {}),
    ]:
        pol = make_policy(name, info, rng, lipschitz=1e9, **params)
        for t in range(1, 21):
            a = pol.ask()
            assert a == seed and pol.safe.sum() == 1
            if name == "stageopt":
                converged = params.get("switch_when_converged", True)
                assert pol.internals()["stage"] == (2 if converged or t > 10 else 1)
            pol.tell(_obs(pol, t, a, 0.5, -0.1))
        if name == "stageopt" and params.get("switch_when_converged", True):
            assert pol.switched_at == 1  # G_1 is empty: stage 1 ends at once


def test_sgp_ucb_explores_the_seed_then_runs_ucb_on_the_pessimistic_set():
    tr = _trial("sgp-ucb", 100, n_grid=40)
    seed = _widest_margin(tr.problem)
    tr = _trial("sgp-ucb", 100, n_grid=40, safe_seed=seed)
    pol = tr.policy
    assert pol.T_explore == 10  # ceil(sqrt(100))
    for t in range(1, 101):
        mean_g, std_g = pol.gp_g[0].mean.copy(), pol.gp_g[0].std
        bg = pol.beta_g(t, pol.gp_g[0])
        D = (mean_g + bg * std_g <= 0.0) | (np.arange(40) == seed)
        ucb = pol.gp.mean + pol.beta(t, pol.gp) * pol.gp.std
        tr.step()
        a = int(tr.trace.index[-1])
        np.testing.assert_array_equal(pol.safe, D)
        if t <= 10:
            assert a == seed and tr.trace.internals["phase"][-1] == 1
        else:
            assert D[a] and ucb[a] == pytest.approx(ucb[D].max(), rel=1e-12)
            assert tr.trace.internals["phase"][-1] == 2
    assert pol.safe.sum() > 1


def test_sgp_ucb_exploration_is_uniform_over_the_seed_set():
    info = make_problem_synthetic(n_grid=30).info()
    pol = make_policy("sgp-ucb", info, np.random.default_rng(4), safe_seed=[3, 8, 20], T_explore=600)
    counts = np.zeros(30, int)
    for t in range(1, 601):
        a = pol.ask()
        counts[a] += 1
        pol.tell(_obs(pol, t, a, 0.0, -1.0))
    # Binomial(600, 1/3) each: mean 200, sd 11.5
    assert counts.sum() == 600 and set(np.flatnonzero(counts)) == {3, 8, 20}
    assert counts[[3, 8, 20]].min() > 150


def test_sgp_ucb_pessimistic_exploration_stays_in_the_pessimistic_set():
    seed = _widest_margin(_trial("sgp-ucb", 80, n_grid=40).problem)
    tr = _trial("sgp-ucb", 80, n_grid=40, explore="pessimistic", T_explore=80, safe_seed=seed)
    for _ in range(80):
        tr.step()
        assert tr.policy.safe[int(tr.trace.index[-1])]
    assert len(set(tr.trace.index.tolist())) > 1


# --------------------------------------------------------------------------------------------------
# Statistics on the papers' synthetic problem (h = B/2)
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synthetic_runs():
    out = {}
    for policy in ("stageopt", "sgp-ucb", "safeopt"):
        out[policy] = []
        for k in range(4):
            tr = _trial(policy, 1000, trial=k)
            tr.run()
            out[policy].append(tr)
    return out


def test_safe_baselines_almost_never_violate(synthetic_runs):
    # The papers report N = 0-0.3 over 10^4 rounds for StageOpt / SGP-UCB; with theory betas the
    # confidence bounds hold and no round should be infeasible.
    for policy, trials in synthetic_runs.items():
        N = sum(final_metrics(tr.trace)["violating_rounds"] for tr in trials)
        assert N <= 1, f"{policy}: {N} violating rounds over 4 x 1000"


def test_sgp_ucb_regret_is_sublinear_ish(synthetic_runs):
    first = last = 0.0
    for tr in synthetic_runs["sgp-ucb"]:
        r = tr.trace.utility_star - tr.trace.f
        first += r[:250].mean()
        last += r[-250:].mean()
    assert last < 0.25 * first


def test_stageopt_stage_2_regret_within_its_safe_set_falls(synthetic_runs):
    # Stage 2 is GP-UCB on S_T0: its regret against the best arm of S_T0 shrinks, and is far below
    # uniform play on S_T0. (Against the global optimum it is linear when S_T0 misses the optimum.)
    mid = last = uniform = 0.0
    for tr in synthetic_runs["stageopt"]:
        S = tr.policy.safe
        fS = tr.problem.f_values[S]
        r = fS.max() - tr.trace.f
        assert np.all(S[tr.trace.index[100:]])
        mid += r[250:500].mean()
        last += r[-250:].mean()
        uniform += fS.max() - fS.mean()
    assert last < mid and last < 0.2 * uniform


# --------------------------------------------------------------------------------------------------
# Checkpoints, distances, errors
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "policy, params",
    [("safeopt", {}), ("stageopt", {"T0": 80}), ("sgp-ucb", {"T_explore": 70, "explore": "pessimistic"})],
)
def test_checkpoint_round_trip_is_exact(tmp_path, policy, params):
    full = _trial(policy, 120, trial=1, n_grid=60, **params).run()
    part = _trial(policy, 120, trial=1, n_grid=60, **params)
    part.run(until=57)  # the stage / phase switch happens after the checkpoint
    part.save_checkpoint(tmp_path / "ck.npz")
    resumed = Trial.resume(tmp_path / "ck.npz")
    rest = resumed.run()
    for k in ("index", "f", "g", "y", "c"):
        np.testing.assert_array_equal(getattr(full, k), getattr(rest, k))
    assert full.internals.keys() == rest.internals.keys()
    if policy != "safeopt":  # the switch happened after the checkpoint, in the resumed run
        key = "stage" if policy == "stageopt" else "phase"
        assert full.internals[key][56] == 1 and full.internals[key][-1] == 2
    for k in full.internals:
        np.testing.assert_array_equal(full.internals[k], rest.internals[k])


def test_kernel_distance_for_arms_without_coordinates():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(6, 6))
    K = A @ A.T
    K = K / np.sqrt(np.outer(np.diag(K), np.diag(K)))  # a correlation matrix, k(x, x) = 1
    kern = PrecomputedKernel(K)
    dom = FiniteDomain.arms(6)
    p = _toy(n=6, kernel=kern, domain=dom)
    pol = make_policy("stageopt", p.info(), rng, T0=5, safe_set="lipschitz")
    assert pol.distance == "kernel"
    np.testing.assert_allclose(pol.distances, np.sqrt(np.maximum(2 - 2 * K, 0)), atol=1e-12)
    se = _toy(n=6)
    pol = make_policy("safeopt", se.info(), rng)
    assert pol.distance == "euclidean"
    np.testing.assert_allclose(pol.distances, euclidean_distances(se.domain.candidates))
    pol = make_policy("safeopt", se.info(), rng, distance="kernel")
    np.testing.assert_allclose(pol.distances, kernel_distances(se.kernel, se.domain.candidates))


@pytest.mark.parametrize(
    "policy, params, match",
    [
        ("stageopt", {"safe_seed": 99}, "safe_seed 99 is outside"),
        ("stageopt", {"safe_seed": 1.5}, "safe_seed must be an integer"),
        ("safeopt", {"safe_seed": []}, "at least one arm"),
        ("safeopt", {"lipschitz": -1.0}, "lipschitz must be >= 0"),
        ("safeopt", {"lipschitz": [1.0, 2.0]}, "one per constraint"),
        ("safeopt", {"distance": "manhattan"}, "distance must be one of"),
        ("stageopt", {"T0": -1}, "T0 must be >= 0"),
        ("stageopt", {"T0_fraction": 1.5}, "T0_fraction must be <= 1"),
        ("stageopt", {"horizon": 0}, "horizon must be >= 1"),
        ("stageopt", {"freeze_safe_set": "yes"}, "freeze_safe_set must be true or false"),
        ("sgp-ucb", {"explore": "random"}, "explore must be"),
        ("sgp-ucb", {"T_explore": 2.5}, "T_explore must be an integer"),
        ("sgp-ucb", {"noise": 0.0}, "noise must be >= 1e-12"),
        ("safeopt", {"alpha": 1.0}, "alpha must be < 1"),
        ("sgp-ucb", {"beta": "thoery"}, "theory"),
        ("stageopt", {"lipschitzz": 1.0}, "Did you mean 'lipschitz'"),
    ],
)
def test_bad_parameters_are_named(policy, params, match):
    params = {"horizon": 100, **params}
    with pytest.raises(InvalidInputError, match=match):
        make_policy(policy, _toy().info(), np.random.default_rng(0), **params)


def test_missing_constants_are_reported():
    bare = _toy(hints={}).info()
    rng = np.random.default_rng(0)
    for name in ("safeopt", "stageopt", "sgp-ucb"):
        with pytest.raises(InvalidInputError, match="safe_seed"):
            make_policy(name, bare, rng, horizon=10)
    for name, extra in (("safeopt", {}), ("stageopt", {"safe_set": "lipschitz"})):
        with pytest.raises(InvalidInputError, match="lipschitz"):
            make_policy(name, bare, rng, horizon=10, safe_seed=0, **extra)
    make_policy("stageopt", bare, rng, horizon=10, safe_seed=0)  # the gp safe set needs none
    make_policy("sgp-ucb", bare, rng, horizon=10, safe_seed=0)  # needs no Lipschitz constant
    with pytest.raises(InvalidInputError, match="T0=ROUNDS or horizon=T"):
        make_policy("stageopt", _toy().info(), rng)
    with pytest.raises(InvalidInputError, match="T_explore=ROUNDS or horizon=T"):
        make_policy("sgp-ucb", _toy().info(), rng)


def test_constants_default_to_the_problem_hints():
    hints = {"safe_seed": [2, 4], "lipschitz": 2.5, "B": 3.0, "G": 4.0, "R": 5.0}
    for name in ("safeopt", "stageopt", "sgp-ucb"):
        extra = {"safe_set": "lipschitz"} if name == "stageopt" else {}
        pol = make_policy(name, _toy(hints=hints).info(), np.random.default_rng(0), horizon=10, **extra)
        assert pol.seeds.tolist() == [2, 4] and (pol.B, pol.G, pol.R, pol.R_g) == (3.0, 4.0, 5.0, 5.0)
        if name != "sgp-ucb":
            assert (
                pol.lipschitz.tolist() == [2.5]
                and pol.safe.tolist() == [False, False, True, False, True] + [False] * 3
            )
    pol = make_policy(
        "stageopt",
        _toy(hints=hints).info(),
        np.random.default_rng(0),
        T0=3,
        R=0.2,
        R_g=0.3,
        lipschitz=1.0,
        safe_set="lipschitz",
    )
    assert (pol.R, pol.R_g, pol.lipschitz.tolist()) == (0.2, 0.3, [1.0])
    pol = make_policy("sgp-ucb", _toy(hints={"safe_seed": 1}).info(), np.random.default_rng(0), T_explore=1)
    assert (pol.B, pol.G, pol.R, pol.R_g) == (1.0, 1.0, 0.1, 0.1)  # documented fallbacks


def test_unsupported_problems_are_rejected():
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidInputError, match="at least one constraint"):
        make_policy("stageopt", _toy(m=0).info(), rng, T0=5)
    box = Problem(
        "box",
        BoxDomain([0.0], [1.0]),
        lambda X: X[:, 0],
        lambda X: X[:, 0] - 0.5,
        GaussianNoise(0.1),
        kernel=SquaredExponential(0.2),
    )
    with pytest.raises(InvalidInputError, match="continuous box"):
        make_policy("sgp-ucb", box.info(), rng, T_explore=5, safe_seed=0)


def test_bad_observation_is_rejected_and_nothing_recorded():
    p = _toy(m=2, hints={"safe_seed": 1, "lipschitz": [1.0, 1.0]})
    pol = make_policy("safeopt", p.info(), np.random.default_rng(0))
    a = pol.ask()
    with pytest.raises(InvalidInputError, match="finite"):
        pol.tell(_obs(pol, 1, a, 0.3, [0.1, math.nan]))
    with pytest.raises(OutOfDomainError, match="not an arm"):
        pol.tell(_obs(pol, 1, 17, 0.3, [0.1, 0.2]))
    assert pol.gp.t == 0 and all(gp.t == 0 for gp in pol.gp_g)


# --------------------------------------------------------------------------------------------------
# StageOpt's GP safe set (safe_set = "gp", the default), by hand
# --------------------------------------------------------------------------------------------------


def test_gp_safe_set_is_ucb_of_g_at_most_zero_plus_the_seeds_by_hand():
    ss = GPSafeSet(np.array([0]), 4, 1)
    # lower bounds of s = -g, i.e. -UCB(g): arm 1 has UCB(g) = 0 (safe: <= 0 counts), arm 2 UCB 0.1
    assert ss.update(_arr([-5.0, 0.0, -0.1, 0.3]))
    assert ss.safe.tolist() == [True, True, False, True]  # arm 0 is a seed: always safe
    assert not ss.update(_arr([-5.0, 0.0, -0.1, 0.3]))
    assert ss.update(_arr([-5.0, -0.2, -0.1, 0.3]))  # recomputed, not a union: arm 1 drops out
    assert ss.safe.tolist() == [True, False, False, True]
    two = GPSafeSet(np.array([0]), 3, 2)
    two.update(_arr([-1.0, 0.5, 0.5], [-1.0, 0.5, -0.5]))  # arm 2 is safe for g_1 only
    assert two.safe.tolist() == [True, True, False]


def test_gp_expanders_by_hand():
    # two arms, posterior covariance [[1, 0.9], [0.9, 1]], means (-2, 0.1), beta = 1, lambda = 0.01;
    # arm 0 safe (UCB -1), arm 1 not (UCB 1.1). Optimistic observation at arm 0: LCB = -3, i.e. -1 from the
    # mean: mean'(1) = 0.1 + 0.9 / 1.01 * (-1) = -0.79109, var'(1) = 1 - 0.81 / 1.01 = 0.19802,
    # UCB' = -0.79109 + 0.44499 = -0.34610 <= 0: arm 0 is an expander.
    cov = np.array([[[1.0, 0.9], [0.9, 1.0]]])
    mean = _arr([-2.0, 0.1])
    safe = np.array([True, False])
    G = gp_expanders(safe, safe[None, :], mean, cov, np.array([1.0]), np.array([0.01]))
    assert G.tolist() == [True, False]
    # a weak correlation: mean'(1) = 0.1 - 0.2/1.01 = -0.09802, sd' = sqrt(1 - 0.04/1.01) = 0.98000: no
    weak = np.array([[[1.0, 0.2], [0.2, 1.0]]])
    assert not gp_expanders(safe, safe[None, :], mean, weak, np.array([1.0]), np.array([0.01])).any()
    # ckb's UCB' moves with arm 1's mean: the expander test flips where the hand value -0.34610 says
    for shift, expander in ((0.34110, True), (0.35110, False)):  # UCB' = -0.005 / +0.005
        moved = _arr([-2.0, 0.1 + shift])
        G = gp_expanders(safe, safe[None, :], moved, cov, np.array([1.0]), np.array([0.01]))
        assert G.tolist() == [expander, False]


def test_gp_expanders_match_a_refit_gp_with_the_hypothetical_observation():
    p = _toy(n=8)
    pol = make_policy("stageopt", p.info(), np.random.default_rng(0), T0=50, noise=0.05)
    env = np.random.default_rng(3)
    for t in range(1, 9):
        a = pol.ask()
        pol.tell(_obs(pol, t, a, np.sin(3 * a / 7), a / 7 - 0.6 + 0.05 * env.normal()))
    pol.t += 1
    pol._betas()
    pol._lipschitz_step()
    gp = pol.gp_g[0]
    beta = pol._beta_g_t[0]
    X = p.domain.candidates
    mean, var = gp.mean, gp.std**2
    np.testing.assert_array_equal(pol.safe, (mean + beta * np.sqrt(var) <= 0) | (np.arange(8) == 1))
    want = np.zeros(8, bool)
    for x in np.flatnonzero(pol.safe):  # refit with the hypothetical point appended (dense reference)
        Xa = np.vstack([gp.X, X[x : x + 1]])
        ya = np.append(gp.y, mean[x] - beta * np.sqrt(var[x]))
        m2, c2 = dense_posterior(gp.kernel, gp.noise, Xa, ya, X)
        v2 = np.diag(c2)
        want[x] = np.any((m2 + beta * np.sqrt(np.maximum(v2, 0)) <= 0) & ~pol.safe)
    np.testing.assert_array_equal(pol._expanders(), want)


def test_stageopt_gp_plays_in_its_safe_set_and_refuses_a_lipschitz_constant():
    p = _toy(n=8)
    pol = make_policy("stageopt", p.info(), np.random.default_rng(0), T0=10)
    assert pol.safe_rule == "gp" and pol.lipschitz is None
    for t in range(1, 21):
        a = pol.ask()
        assert pol.safe[a]
        pol.tell(_obs(pol, t, a, 0.5, a / 7 - 0.6))
    assert pol.internals()["stage"] == 2
    with pytest.raises(InvalidInputError, match="only used with safe_set = 'lipschitz'"):
        make_policy("stageopt", p.info(), np.random.default_rng(0), T0=10, lipschitz=1.0)
    with pytest.raises(InvalidInputError, match="safe_set"):
        make_policy("stageopt", p.info(), np.random.default_rng(0), T0=10, safe_set="lipshitz")
