"""Parity: one rule, two worlds. The bandit harness's policy and ckb.Optimizer's policy of each shared rule,
fed the same estimates (and the same observations), make the same choice and end in the same state.

Estimation is what the two worlds do differently (exact GPs on arms vs fitted BoTorch GPs); here it is
replaced in both by one table of estimates per round: the harness's estimate step is patched to return
it, and the optimizer's models are a table lookup at the candidates, maximized by enumeration. Widths are
0 (constant), so the estimates are the table itself. The tables have no ties, so the argmax is unique.
"""

import numpy as np
import pytest
import torch

from ckb.contract.domain import FiniteDomain
from ckb.contract.observation import Observation
from ckb.contract.problem_info import ProblemInfo
from ckb.optimizer.acquisition import Maximizer
from ckb.optimizer.policies import OPTIMIZER_POLICIES, Decision
from ckb.policies import make_policy

N_ARMS, M, ROUNDS = 9, 2, 25
C = np.linspace(0.0, 1.0, N_ARMS)[:, None]  # the arms, as unit-cube points for the optimizer


class TableModels:
    """The optimizer's models replaced by a table: mean = the round's estimates, sd = 1."""

    def __init__(self, f, g):
        self.table = np.column_stack([f, g])

    def view(self, name):  # pragma: no cover - constant widths never read a model
        raise AssertionError("a constant width read a model")

    def mean_std(self, X):
        idx = np.rint(np.asarray(X.detach() if hasattr(X, "detach") else X)[..., 0] * (N_ARMS - 1)).astype(
            int
        )
        mu = torch.as_tensor(self.table[idx])
        return mu, torch.ones_like(mu)


def tables(seed):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(ROUNDS, N_ARMS))
    g = rng.normal(0.3, 1.0, size=(ROUNDS, N_ARMS, M))
    c = rng.normal(0.2, 1.0, size=(ROUNDS, M))  # observed costs told after each round
    return f, g, c


def info():
    from ckb.kernels import SquaredExponential

    hints = {"B": 5.0, "G": 5.0, "R": 0.1, "slater_margin": 0.5}
    return ProblemInfo(name="table", domain=FiniteDomain(C), m=M, kernel=SquaredExponential(0.3), hints=hints)


def optimizer_choice(pol, f, g, rng):
    maximizer = Maximizer(1, rng, candidates=C)
    ctx = Decision(TableModels(f, g), lambda fn: maximizer(fn), rng, np.zeros(0), np.zeros((0, M)))
    x, _ = pol.decide(ctx)
    return int(np.rint(x[0] * (N_ARMS - 1)))


#: optimizer defaults that are not the papers' rules, turned off for the comparison: the CKB policies'
#: and RPOL/CONFIG policies' search for a first feasible point (the table's decisions see no observations)
OPTIMIZER_ONLY = {
    name: {"feasibility_first": False} for name in ("ckb-ucb", "ckb-ts", "ckb-rand", "rpol-ucb", "config")
}


def run_both(harness_name, optimizer_name, patch, constants, seed):
    f, g, c = tables(seed)
    h = make_policy(harness_name, info(), np.random.default_rng(0), horizon=ROUNDS, **constants)
    o = OPTIMIZER_POLICIES.get(optimizer_name)(
        M, ROUNDS, **constants, **OPTIMIZER_ONLY.get(optimizer_name, {})
    )
    rng = np.random.default_rng(1)
    for t in range(ROUNDS):
        patch(h, f[t], g[t])
        a = h.ask()
        b = optimizer_choice(o, f[t], g[t], rng)
        assert a == b, f"round {t + 1}: harness chose {a}, optimizer {b}"
        h.tell(Observation(t=t + 1, index=a, x=C[a], y=0.0, c=c[t]))
        o.observe(0.0, c[t])
        yield h, o


def _ckb_patch(h, f, g):
    h.estimates = lambda bf, bg: (f, g)


def _optimistic_patch(h, f, g):
    h._bounds = lambda: (f, g)
    h._update_models = lambda obs: None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_primal_dual_same_choices_and_duals(seed):
    constants = {"beta": 0.0, "beta_g": 0.0, "B": 4.0, "G": [1.5, 1.5], "delta": 0.5, "slack": "decreasing"}
    steps = 0
    for h, o in run_both("ckb-ucb", "ckb-ucb", _ckb_patch, constants, seed):
        np.testing.assert_array_equal(h.rule.phi, o.rule.phi)
        assert h.internals() == o.rule.internals()
        steps += 1
    assert steps == ROUNDS and np.any(h.rule.phi > 0)  # the duals moved


@pytest.mark.parametrize("seed", [0, 1])
def test_primal_dual_on_the_mean_same_choices_and_duals(seed):
    """``dual_estimate="mean"``: the score reads the estimates (the table shifted by the widths 0.5), the
    dual step the posterior means (the table itself) in both worlds."""
    from types import SimpleNamespace

    def patch(h, f, g):
        h.estimates = lambda bf, bg: (f + 0.5, g - 0.5)  # UCB / LCB with sd 1, as TableModels gives
        h.gp_g = [SimpleNamespace(mean=g[:, j], update_arm=lambda i, v: None) for j in range(M)]

    constants = {"beta": 0.5, "beta_g": 0.5, "B": 4.0, "G": [1.5, 1.5], "delta": 0.5, "dual_estimate": "mean"}
    for h, o in run_both("ckb-ucb", "ckb-ucb", patch, constants, seed):
        np.testing.assert_array_equal(h.rule.phi, o.rule.phi)
        assert h.internals() == o.rule.internals()
    assert np.any(h.rule.phi > 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_rpol_same_choices_and_penalty_weights(seed):
    constants = {"beta": 0.0, "B_f": 1.0, "B_g": 1.0, "R_f": 0.1, "R_g": 0.1}
    for h, o in run_both("rpol-ucb", "rpol-ucb", _optimistic_patch, constants, seed):
        np.testing.assert_array_equal(h.rule.Q, o.rule.Q)
        np.testing.assert_array_equal(h.rule.Q_asked, o.rule.Q_asked)
    assert h.rule.Q.max() > 1.0


@pytest.mark.parametrize("seed", [0, 1])
def test_config_same_choices_and_fallbacks(seed):
    constants = {"beta": 0.0, "B_f": 1.0, "B_g": 1.0, "R_f": 0.1, "R_g": 0.1}
    fallbacks = []
    for h, o in run_both("config", "config", _optimistic_patch, constants, seed):
        assert h.internals()["fallback"] == o.rule.internals()["fallback"]
        fallbacks.append(h.internals()["fallback"])
    assert 0.0 in fallbacks  # the feasible branch was exercised (the tables decide the rest)


def test_penalty_noisy_same_multipliers_epochs_and_targets():
    """Algorithm 3 in both worlds: the same observations give the same multipliers, epochs and
    penalized targets (the decision is then IGP-UCB on those targets in both)."""
    f, g, c = tables(3)
    S = 4
    h = make_policy("penalty-noisy", info(), np.random.default_rng(0), horizon=ROUNDS, S=S, B=5.0, R=0.1)
    o = OPTIMIZER_POLICIES.get("penalty-noisy")(M, ROUNDS, S=S, B=5.0, R=0.1)
    ys = np.random.default_rng(4).normal(size=ROUNDS)
    for t in range(ROUNDS):
        a = h.ask()
        h.tell(Observation(t=t + 1, index=a, x=C[a], y=ys[t], c=c[t]))
        o.observe(ys[t], c[t])
        np.testing.assert_array_equal(h.rule.kappa, o.rule.kappa)
        assert h.rule.epoch == o.rule.epoch
    assert h.rule.epoch == o.rule.epoch == h.rule.L == 7 and np.any(h.rule.kappa > 0)  # 25 rounds, S = 4
    np.testing.assert_array_equal(h.gp.y, o.targets(ys, c)["pen"])  # relabelled under the last kappa


def test_every_shared_rule_is_one_class_in_both_worlds():
    """No rule exists twice: each harness policy and its optimizer twin hold an instance of one class."""
    pairs = {"ckb-ucb": "ckb-ucb", "ckb-ts": "ckb-ts", "ckb-rand": "ckb-rand", "rpol-ucb": "rpol-ucb"}
    pairs.update({"config": "config", "penalty-noisy": "penalty-noisy"})
    for hn, on in pairs.items():
        h = make_policy(hn, info(), np.random.default_rng(0), horizon=ROUNDS)
        o = OPTIMIZER_POLICIES.get(on)(M, ROUNDS)
        assert type(h.rule) is type(o.rule), hn
