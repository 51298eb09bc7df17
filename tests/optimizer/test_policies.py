"""Each practical policy's decision and state update on known posterior values (hand-checked), and the
state round trip through the study file's JSON."""

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

from ckb.errors import InvalidInputError, UnknownNameError
from ckb.optimizer.acquisition import Maximizer
from ckb.optimizer.models import _View
from ckb.optimizer.policies import OPTIMIZER_POLICIES, Decision
from ckb.rules import PrimalDualRule
from ckb.studies import dumps, loads

GRID = np.array([[0.0], [0.25], [0.5], [0.75], [1.0]])  # 1-D candidates in the unit interval


class StubModels:
    """Known posteriors: ``mean(x) -> (k,)`` and ``std(x) -> (k,)`` as torch functions of x (b, 1)."""

    def __init__(self, mean, std, path=None, X=None):
        self.mean, self.std, self.path = mean, std, path
        #: the modelled points (complete first, then pending), as ``Models.X``: none by default
        self.X = np.zeros((0, 1)) if X is None else X

    def mean_std(self, X):
        return self.mean(X), self.std(X)

    def view(self, name):
        return _View(0.0, 1.0)

    def sample_path(self):
        return self.path


def decide(policy, models, rng=None, y=None, c=None):
    rng = rng or np.random.default_rng(0)
    maxi = Maximizer(1, rng, candidates=GRID)
    y = np.zeros(1) if y is None else y
    c = np.zeros((1, policy.m)) if c is None else c
    return policy.decide(Decision(models, maxi, rng, y, c))


def make(name, m=1, horizon=16, **kw):
    return OPTIMIZER_POLICIES.get(name)(m, horizon, **kw)


# f: mean x, std 0.5; g: mean x - 0.5, std 0.1
LINEAR = StubModels(
    lambda X: torch.cat([X, X - 0.5], -1),
    lambda X: torch.cat([0.5 * torch.ones_like(X), 0.1 * torch.ones_like(X)], -1),
)


def test_ckb_ucb_argmax_and_dual_step_by_hand():
    p = make("ckb-ucb")  # B = G = 5, delta = 1 -> rho = 20, V = 5 sqrt(16) / 20 = 1
    assert (p.rho, p.V) == (20.0, 1.0)
    x, info = decide(p, LINEAR)
    # phi = 0: the UCB x + 1 is largest at x = 1; LCB of g there = 0.5 - 2 * 0.1 = 0.3; phi = 0 + 0.3 / 1
    assert x.tolist() == [1.0] and info["g_bar"] == pytest.approx(0.3) and info["dual"] == 0.0
    assert p.phi == pytest.approx([0.3])
    p.phi = np.array([2.0])  # score x + 1 - 2 (x - 0.7) = 2.4 - x: now x = 0, where the LCB is -0.7
    x, info = decide(p, LINEAR)
    assert x.tolist() == [0.0] and p.phi == pytest.approx([1.3]) and p.t == 2


def test_ckb_ucb_dual_step_on_the_posterior_mean():
    """``dual_estimate="mean"``: the same argmax, the dual steps with the posterior mean of g there
    (0.5 at x = 1) instead of its LCB (0.3)."""
    p = make("ckb-ucb", dual_estimate="mean")  # V = 1
    x, info = decide(p, LINEAR)
    assert x.tolist() == [1.0] and info["g_bar"] == pytest.approx(0.5) and p.phi == pytest.approx([0.5])


def test_ckb_ucb_feasibility_first_until_a_feasible_evaluation():
    """``feasibility_first`` (the optimizer's default): with no feasible evaluation, the argmax of
    log P(g <= 0) + log P(f >= the median observed objective), no dual step; once a row is feasible,
    Algorithm 1's decision. The rule's own default is Algorithm 1 as written."""
    assert not PrimalDualRule.defaults["feasibility_first"]
    p = make("ckb-ucb")
    assert p.rule.feasibility_first
    y, c = np.array([0.0, 0.5]), np.array([[1.0], [2.0]])  # nothing feasible; median objective 0.25
    x, info = decide(p, LINEAR, y=y, c=c)
    g = GRID[:, 0]  # f ~ N(x, 0.5^2), g ~ N(x - 0.5, 0.1^2)
    score = norm.logcdf(-(g - 0.5) / 0.1) + norm.logcdf((g - 0.25) / 0.5)
    assert x.tolist() == [g[np.argmax(score)]] == [0.25]
    assert info["phase"] == 0.0 and p.phi == pytest.approx([0.0]) and p.t == 1
    x, info = decide(p, LINEAR, y=y, c=np.array([[1.0], [-0.1]]))  # a feasible row: the dual steps
    assert x.tolist() == [1.0] and "phase" not in info and p.phi == pytest.approx([0.3])


@pytest.mark.parametrize("name", ["ckb-ucb", "ckb-ts", "ckb-rand"])
def test_each_ckb_strategy_searches_for_a_first_feasible_point(name):
    """The search is the same for the three strategies (no estimate is drawn, no dual step); ckb-rand
    raised AttributeError here when its info read a draw the search never made."""
    models = StubModels(LINEAR.mean, LINEAR.std, lambda X: torch.cat([X, X - 0.5], -1))
    p = make(name)
    x, info = decide(p, models, y=np.array([0.0, 0.5]), c=np.array([[1.0], [2.0]]))
    assert x.tolist() == [0.25] and info["phase"] == 0.0 and "z" not in info and p.phi == [0.0]
    x, info = decide(p, models, y=np.array([0.0, 0.5]), c=np.array([[1.0], [-0.1]]))
    assert "phase" not in info and (name != "ckb-rand" or "z" in info)


@pytest.mark.parametrize("name", ["rpol-ucb", "config"])
def test_rpol_and_config_search_for_a_first_feasible_point(name):
    """With the search (rpol-ucb's default, CONFIG's option) and no feasible evaluation, the argmax of
    log P(g <= 0) + log P(f >= the median observed objective) (0.25 on the grid, as for ckb-ucb), phase 0; once a row is feasible, or with
    ``feasibility_first=False``, the paper's rule: CONFIG the UCB x + 1 over the optimistically feasible
    LCB x - 0.7 <= 0 (x = 0.5), RPOL x + 1 - Q [x - 0.7]+ with Q = 1 (0.75 and 1 tie at 1.7)."""
    y, infeasible, feasible = np.array([0.0, 0.5]), np.array([[1.0], [2.0]]), np.array([[1.0], [-0.1]])
    assert make(name).rule.feasibility_first == (name == "rpol-ucb")  # CONFIG's fallback searches already
    p = make(name, feasibility_first=True)
    x, info = decide(p, LINEAR, y=y, c=infeasible)
    assert x.tolist() == [0.25] and info["phase"] == 0.0 and p.t == 1
    paper = decide(make(name, feasibility_first=False), LINEAR, y=y, c=infeasible)[0].tolist()
    x, info = decide(p, LINEAR, y=y, c=feasible)
    assert x.tolist() == paper and "phase" not in info
    assert paper == [0.5] if name == "config" else paper[0] in (0.75, 1.0)
    if name == "rpol-ucb":  # Q sums the observed costs through the search too
        p = make(name)
        decide(p, LINEAR, y=y, c=infeasible)
        p.observe(0.0, np.array([0.7]))
        assert p.rule.Q == pytest.approx([1.7])


@pytest.mark.parametrize("name", ["ckb-ucb", "ckb-ts", "ckb-rand"])
def test_ckb_without_feasibility_first_is_algorithm_1_with_nothing_feasible(name):
    """``feasibility_first=False``: no feasible evaluation yet, and still Algorithm 1's decision and dual
    step (the same as after a feasible row), for each exploration strategy."""
    y = np.array([0.0, 0.5])
    models = StubModels(LINEAR.mean, LINEAR.std, lambda X: torch.cat([X, X - 0.5], -1))
    runs = []
    for c in (np.array([[1.0], [2.0]]), np.array([[1.0], [-0.1]])):
        p = make(name, feasibility_first=False)
        x, info = decide(p, models, y=y, c=c)
        assert "phase" not in info
        runs.append((x.tolist(), p.phi.tolist()))
    assert runs[0] == runs[1] and runs[0][1] != [0.0]


def test_ckb_clips_estimates_at_B_and_G():
    big = StubModels(lambda X: torch.cat([40 * X, 10 + 0 * X], -1), lambda X: torch.zeros(X.shape[0], 2))
    p = make("ckb-ucb", B=5.0, G=2.0, V=4.0)
    x, info = decide(p, big)
    assert info["g_bar"] == 2.0 and p.phi == pytest.approx([0.5])  # g = 10 clipped at G = 2
    # f = 40 x clipped at 5 ties the points x >= 0.125: the tie is broken at random among them
    assert x[0] >= 0.25


def test_ckb_slack_and_rho_projection():
    p = make("ckb-ucb", slack=0.25, rho=0.4)  # V = 5 * 4 / 0.4 = 50
    decide(p, LINEAR)
    assert p.phi == pytest.approx([(0.3 + 0.25) / 50])
    p.phi = np.array([0.399])
    decide(p, LINEAR)
    assert p.phi == pytest.approx([0.4])  # projected on [0, rho]
    assert make("ckb-ucb", slack="auto").slack == pytest.approx(min(0.5, 5 / 4))
    p = make("ckb-ucb", slack="decreasing", delta=4.0, V=1.0)  # eps_t = min(2, 5 / sqrt t)
    for t in (1, 2, 9):
        p.t, p.phi = t - 1, np.array([0.0])
        decide(p, LINEAR)
        assert p.phi == pytest.approx([0.3 + min(2.0, 5 / math.sqrt(t))])


def test_ckb_ts_uses_the_sampled_path_widened_by_beta():
    path = lambda X: torch.cat([1 - X, X - 0.2], -1)
    models = StubModels(LINEAR.mean, LINEAR.std, path)
    p = make("ckb-ts")  # beta = 1: the estimate is the path itself
    x, info = decide(p, models)
    assert x.tolist() == [0.0] and info["g_bar"] == pytest.approx(-0.2) and p.phi == [0.0]
    p = make(
        "ckb-ts", beta=3.0
    )  # mu + 3 (s - mu): f = x + 3 (1 - 2x) = 3 - 5x, g = (x - .5) + 3 (.3) at x = 0
    x, info = decide(p, models)
    assert x.tolist() == [0.0] and info["g_bar"] == pytest.approx(-0.5 + 0.9)
    assert p.phi == pytest.approx([0.4])


def test_ckb_rand_shares_one_scalar_per_function():
    p = make("ckb-rand", beta=2.0)
    ref = np.random.default_rng(7)
    zf, zg = 2.0 * ref.standard_normal(), 2.0 * ref.standard_normal()
    x, info = decide(p, LINEAR, rng=np.random.default_rng(7))
    assert info["z"] == pytest.approx(zf) and info["z_g"] == pytest.approx(zg)
    f = GRID[:, 0] + zf * 0.5
    assert x[0] == GRID[int(np.argmax(f)), 0]  # phi = 0: argmax of the shifted mean of f
    assert info["g_bar"] == pytest.approx(np.clip(x[0] - 0.5 + zg * 0.1, -5, 5))


def test_rpol_q_floor_at_ask_and_costs_at_tell():
    p = make("rpol-ucb")
    _, info = decide(p, LINEAR)
    assert info["Q"] == 1.0
    p.observe(0.0, np.array([0.5]))
    assert p.Q == pytest.approx([1.5])
    decide(p, LINEAR)  # t = 2: max(1.5, sqrt 1)
    decide(p, LINEAR)  # t = 3: max(1.5, sqrt 2)
    assert p.Q == pytest.approx([1.5])
    p.observe(0.0, np.array([-1.0]))  # a feasible cost adds nothing
    _, info = decide(p, LINEAR)  # t = 4: sqrt 3 > 1.5
    assert info["Q"] == pytest.approx(math.sqrt(3))


def test_rpol_argmax_penalizes_only_positive_lcb():
    p = make("rpol-ucb")
    p.t, p.Q = 9, np.array([10.0])  # Q = max(10, 3) at the next ask
    x, _ = decide(p, LINEAR)
    # score x + 1 - 10 [x - 0.7]^+: 1.5 at x = 0.5, 1.75 - 0.5 at x = 0.75, 2 - 3 at x = 1
    scores = GRID[:, 0] + 1 - 10 * np.maximum(GRID[:, 0] - 0.7, 0)
    assert x[0] == GRID[int(np.argmax(scores)), 0] == 0.5


def test_config_maximizes_ucb_on_the_optimistically_feasible_set_with_fallback():
    x, info = decide(make("config"), LINEAR)  # LCB = x - 0.7 <= 0 for x <= 0.5 (0.75 -> 0.05)
    assert x.tolist() == [0.5] and info["fallback"] == 0.0
    high = StubModels(lambda X: torch.cat([X, 1.5 - X], -1), LINEAR.std)  # LCB = 1.3 - x > 0 everywhere
    x, info = decide(make("config"), high)
    assert x.tolist() == [1.0] and info["fallback"] == 1.0 and info["worst_lcb_g"] == pytest.approx(0.3)


def test_penalty_noisy_epochs_and_multiplier_update():
    p = make("penalty-noisy", S=2, mu=0.5)
    y, c = np.array([1.0, 2.0]), np.array([[0.4], [-1.0]])
    np.testing.assert_allclose(p.targets(y, c)["pen"], y)  # kappa^1 = 0
    tag = p.model_tag()
    p.observe(0.0, np.array([0.4]))
    assert p.kappa == [0.0] and p.in_epoch == 1
    p.observe(0.0, np.array([0.8]))  # end of epoch 1: kappa = [0 + 0.5 * 0.6]^+
    assert p.kappa == pytest.approx([0.3]) and p.epoch == 2 and p.in_epoch == 0
    np.testing.assert_allclose(p.targets(y, c)["pen"], y - 0.3 * c[:, 0])
    assert p.model_tag() != tag  # the penalized target changed: the optimizer refits
    p.observe(0.0, np.array([-2.0]))
    p.observe(0.0, np.array([-2.0]))
    assert p.kappa == [0.0]  # projected at 0
    assert make("penalty-noisy", horizon=54).S == 8  # ceil(sqrt(54))


def test_penalty_noisy_searches_for_a_first_feasible_point_by_default():
    """With no feasible row it models f and each g (not the penalized objective) and asks the argmax of
    log P(g <= 0) + log P(f >= the median objective) (0.25, as for ckb-ucb); the epoch loop still counts
    the observed costs. With a feasible row, or ``feasibility_first=False``, Algorithm 3's target."""
    y, infeasible, feasible = np.array([0.0, 0.5]), np.array([[1.0], [2.0]]), np.array([[1.0], [-0.1]])
    p = make("penalty-noisy", S=2)
    assert list(p.targets(y, infeasible)) == ["f", "g0"] and list(p.targets(y, feasible)) == ["pen"]
    assert list(make("penalty-noisy", feasibility_first=False).targets(y, infeasible)) == ["pen"]
    x, info = decide(p, LINEAR, y=y, c=infeasible)
    assert x.tolist() == [0.25] and info["phase"] == 0.0 and p.t == 1
    p.observe(0.0, np.array([1.0]))
    p.observe(0.0, np.array([0.6]))  # the first epoch closes during the search: kappa = 0.5 * 0.8
    assert p.kappa == pytest.approx([0.4]) and p.epoch == 2


def test_penalty_noisy_plays_the_ucb_of_the_penalized_model():
    models = StubModels(lambda X: (X - 0.6) ** 2 * -4, lambda X: 0.5 * (1 - X))
    x, info = decide(make("penalty-noisy", beta=1.0), models)
    scores = -4 * (GRID[:, 0] - 0.6) ** 2 + 0.5 * (1 - GRID[:, 0])
    assert x[0] == GRID[int(np.argmax(scores)), 0] and info["epoch"] == 1.0


def test_cei_maximizes_ei_times_probability_of_feasibility():
    y = np.array([0.2, 0.9, 0.4])
    c = np.array([[-1.0], [0.5], [-0.1]])  # the best feasible observation is 0.4
    x, info = decide(make("cei"), LINEAR, y=y, c=c)
    u = (GRID[:, 0] - 0.4) / 0.5
    acq = 0.5 * (norm.pdf(u) + u * norm.cdf(u)) * norm.cdf(-(GRID[:, 0] - 0.5) / 0.1)
    assert x[0] == GRID[int(np.argmax(acq)), 0] and info["best_feasible_std"] == 0.4
    x, info = decide(make("cei"), LINEAR, y=y, c=np.ones((3, 1)))  # nothing feasible: P(g <= 0) only
    assert x.tolist() == [0.0] and np.isnan(info["best_feasible_std"])


class _ZeroPriorStub(StubModels):
    """StubModels that also answer ``mean_std(X, zero_prior_mean=True)`` (the same posteriors)."""

    def mean_std(self, X, zero_prior_mean=False):
        return self.mean(X), self.std(X)


def test_pcei_under_a_budget_seeks_a_first_feasible_point_it_can_afford():
    """Nothing feasible yet, budget 0.2 left (allowance 0.1 per ask, half of it), 10 asks left (width
    z_{0.1/10} = 2.33). At x = 1 the constraint is likely feasible (mean -1, sd 1: P = 0.84) but its
    pessimistic value 1.33 exceeds the allowance; at x = 0 it is barely infeasible (0.05, sd 0.01) but
    costs at most 0.073. pcei with budget_first="admissible" asks x = 0, where "anywhere" (the default)
    asks the likelier x = 1; with nothing affordable (budget 0) it asks x = 1 too."""
    mean_g = {0.0: 0.05, 1.0: -1.0}
    sd_g = {0.0: 0.01, 1.0: 1.0}
    models = _ZeroPriorStub(
        lambda X: torch.cat([X, X.new_tensor([[mean_g.get(float(x), 0.5)] for x in X[:, 0]])], -1),
        lambda X: torch.cat(
            [torch.ones_like(X), X.new_tensor([[sd_g.get(float(x), 0.01)] for x in X[:, 0]])], -1
        ),
    )

    def ask(policy, left):
        rng = np.random.default_rng(0)
        ctx = Decision(
            models, Maximizer(1, rng, candidates=GRID), rng, np.zeros(1), np.ones((1, 1)),
            violation_left=np.array([left]), c_to_raw=lambda v: v, rounds_left=9,
        )  # fmt: skip
        return policy.decide(ctx)[0].tolist()

    assert ask(make("pcei", budget_first="admissible"), 0.2) == [0.0]
    assert ask(make("pcei"), 0.2) == [1.0]
    assert ask(make("pcei", budget_first="admissible"), 0.0) == [1.0]  # nothing affordable: the likeliest


@pytest.mark.parametrize("name", sorted(OPTIMIZER_POLICIES.names()))
def test_state_round_trips_through_json(name):
    p = make(name, m=2)
    models = StubModels(
        lambda X: torch.cat([X, X - 0.5, 0.3 - X], -1),
        lambda X: 0.2 * torch.ones(X.shape[0], 3),
        lambda X: torch.cat([X, X - 0.4, 0.2 - X], -1),
    )
    decide(p, models)
    p.observe(0.1, np.array([0.3, -0.2]))
    decide(p, models)
    back = make(name, m=2)
    back.load_state_dict(loads(dumps(p.state_dict())))
    assert dumps(back.state_dict()) == dumps(p.state_dict())
    a = decide(p, models, rng=np.random.default_rng(5))
    b = decide(back, models, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a[0], b[0])
    assert dumps(back.state_dict()) == dumps(p.state_dict())


def test_registry_names_and_bad_constants():
    assert set(OPTIMIZER_POLICIES.names()) == {
        "ckb-ucb", "ckb-ts", "ckb-rand", "rpol-ucb", "config", "penalty-noisy", "cei", "pcei", "queue-ucb",
        "slack-cei",
    }  # fmt: skip
    with pytest.raises(UnknownNameError, match="Did you mean 'ckb-ucb'"):
        OPTIMIZER_POLICIES.get("ckb-ubc")
    with pytest.raises(InvalidInputError, match="G must be a number or a list of m = 2"):
        make("ckb-ucb", m=2, G=[1.0, 2.0, 3.0])
    with pytest.raises(InvalidInputError, match=r"slack \(epsilon\) must be <= 0.5"):
        make("ckb-ucb", slack=0.7)
    with pytest.raises(InvalidInputError, match="delta"):
        make("ckb-ucb", delta=0.0)


@pytest.mark.parametrize("name", OPTIMIZER_POLICIES.names())
def test_a_policy_built_from_its_resolved_constants_is_the_same_policy(name):
    """``constants()`` (what a study stores) is JSON, and building the policy with it as keywords gives
    the same constants and the same initial state, non-default values included."""
    cls = OPTIMIZER_POLICIES.get(name)
    policy = cls(2, 30, **({"beta": 3.5} if "beta" in cls(2, 30).constants() else {}))
    stored = loads(dumps(policy.constants()))
    assert stored == policy.constants()  # else every resume would see a change that is none
    again = cls(2, 30, **stored)
    assert again.constants() == stored
    assert dumps(again.state_dict()) == dumps(policy.state_dict())
