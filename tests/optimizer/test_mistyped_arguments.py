"""A mistyped ckb.Optimizer argument reaches the policy's rule (its ``**policy_params``): the error must
say it is neither an Optimizer parameter nor a policy constant, and point at the closest name of either
(before: "PessimisticCEIRule has no constant 'violation_budgt'", with the rule's constants only, and
one-letter constants offered as the closest names)."""

import pytest

import ckb
from ckb._validation import closest
from ckb.errors import InvalidInputError


@pytest.mark.parametrize(
    "policy, kwargs, hint",
    [
        (None, {"violation_budgt": 0.0}, "'violation_budget'"),
        ("ckb-ucb", {"violation_budgt": 0.0}, "'violation_budget'"),
        (None, {"n_inits": 3}, "'n_init'"),
        (None, {"kapa": 2.0}, "'kappa'"),
        (None, {"n_constraints": 1}, "'m'"),
        ("queue-ucb", {"max_evals": 20}, "'budget'"),
        (None, {"maximize": True}, "'minimize'"),
    ],
)
def test_a_mistyped_argument_names_both_kinds_and_the_closest(policy, kwargs, hint):
    with pytest.raises(InvalidInputError) as exc:
        ckb.Optimizer([0, 0], [1, 1], policy=policy, budget=8, **kwargs)
    msg = str(exc.value)
    key = next(iter(kwargs))
    name = policy or "pcei"
    # the closest name first; others as close may follow ('kapa': 'kappa' or 'expand_kappa')
    assert msg.startswith(
        f"{key!r} is neither a parameter of ckb.Optimizer nor a constant of policy {name!r}. "
        f"Did you mean {hint}"
    )
    assert msg[msg.index("Did you mean") :].split("?")[0].count("'") <= 6  # at most three names
    assert "Optimizer parameters: lower, upper, m," in msg and f"{name!r} constants: " in msg
    assert "\n" not in msg


def test_a_policy_constant_is_still_taken_and_a_bad_value_still_named():
    opt = ckb.Optimizer([0, 0], [1, 1], budget=8, kappa=2.0)
    assert opt.policy_params == {"kappa": 2.0}
    with pytest.raises(InvalidInputError, match="kappa"):
        ckb.Optimizer([0, 0], [1, 1], budget=8, kappa=-1.0)


def test_one_letter_names_are_not_offered_as_substrings():
    assert closest("violation_budgt", ["B", "G", "V", "alpha"]) == []
    assert closest("ucb", ["igp-ucb", "B"]) == ["igp-ucb"]


@pytest.mark.parametrize(
    "kwargs, hint",
    [
        ({"violation_budgt": 0.0}, "Did you mean 'violation_budget'?"),
        ({"num_restart": 3}, "Did you mean 'num_restarts'"),
        ({"policy_params": {"kappa": 1.0}}, "Pass the policy's constants as keywords themselves"),
    ],
)
def test_the_sampler_names_a_mistyped_argument_the_same_way(kwargs, hint):
    pytest.importorskip("optuna")
    from ckb.integrations.optuna import CKBSampler

    with pytest.raises(InvalidInputError) as exc:
        CKBSampler(**kwargs)
    msg = str(exc.value)
    assert msg.startswith(
        f"{next(iter(kwargs))!r} is neither a parameter of CKBSampler nor a constant of policy 'pcei'. {hint}"
    )
    assert "CKBSampler parameters: policy, goal," in msg and "num_restarts" in msg
