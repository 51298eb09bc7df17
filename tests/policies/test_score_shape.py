"""A rule whose score returns another shape than one value per point (an (n, m) array: the constraints'
sum forgotten; or fewer values) is refused in one line naming the policy and the shapes; its flat argmax
played arms that do not exist, or the wrong arms without a word."""

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.kernels.stationary import SquaredExponential
from ckb.policies.rpol import OptimisticPolicy
from ckb.problems import FiniteDomain, GaussianNoise, Problem
from ckb.rules.base import positive_part
from ckb.rules.optimistic import OptimisticRule


class _NoSum(OptimisticRule):
    def score(self, ucb_f, lcb_g):
        return ucb_f[:, None] - positive_part(lcb_g)  # (n, m): .sum(-1) forgotten


class _Short(OptimisticRule):
    def score(self, ucb_f, lcb_g):
        return ucb_f[:-3]


@pytest.mark.parametrize("rule, shape", [(_NoSum, r"\(20, 2\)"), (_Short, r"\(17,\)")])
def test_a_score_of_the_wrong_shape_is_refused(rule, shape):
    x = np.linspace(0, 1, 20)
    problem = Problem(
        "two-constraints",
        FiniteDomain(x[:, None]),
        x,
        np.stack([x - 0.8, 0.1 - x], axis=1),
        GaussianNoise(0.05, 0.05),
        kernel=SquaredExponential(lengthscale=0.2),
    )
    policy_cls = type("P", (OptimisticPolicy,), {"rule_class": rule})
    policy = policy_cls(problem.info(), np.random.default_rng(0), horizon=10, B_f=1.0, B_g=1.0)
    with pytest.raises(
        InvalidInputError, match=rf"scores have shape {shape}, expected \(20,\), one per candidate"
    ):
        policy.ask()
