"""A rule's declaration mistakes (docs/adding-a-rule.md) are named where they are made: a constant
declared as a value instead of a checker, at the class; a state key setup() does not set and a missing
score, at construction. They were AttributeErrors at the first construction, the first ask, or the
first checkpoint after the rounds had run."""

from typing import Any, ClassVar

import pytest

from ckb.errors import InvalidInputError
from ckb.rules.base import NONNEGATIVE, positive_part
from ckb.rules.optimistic import OptimisticRule

KW = {"B_f": 1.0, "B_g": 1.0, "R_f": 0.1, "R_g": 0.1}


def test_a_constant_declared_as_a_value_is_refused_at_the_class():
    with pytest.raises(
        TypeError, match=r"rule Raw: constants\['eta'\] must be a checker such as NONNEGATIVE"
    ):
        type("Raw", (OptimisticRule,), {"constants": {**OptimisticRule.constants, "eta": 0.0}})


def test_a_state_key_setup_does_not_set_is_refused_at_construction():
    class Typo(OptimisticRule):
        state_keys = ("lamb",)

        def setup(self) -> None:
            super().setup()
            self.lam = 1.0

        def score(self, ucb_f, lcb_g):
            return ucb_f - self.lam * positive_part(lcb_g).sum(-1)

    with pytest.raises(
        InvalidInputError, match=r"rule Typo: state_keys lists 'lamb', which setup\(\) does not set"
    ):
        Typo(1, 10, **KW)


def test_a_rule_without_a_score_is_refused_at_construction():
    class NoScore(OptimisticRule):
        constants: ClassVar[dict[str, Any]] = {**OptimisticRule.constants, "eta": NONNEGATIVE}
        defaults: ClassVar[dict[str, Any]] = {**OptimisticRule.defaults, "eta": 0.0}

    with pytest.raises(InvalidInputError, match=r"rule NoScore defines no score\(ucb_f, lcb_g\)"):
        NoScore(1, 10, **KW)
