"""CKBSampler's violation budget as ckb.Optimizer charges it: the trials charged, the horizon it is paced
over, its checks, and a policy that does not read it."""

from __future__ import annotations

import math
import warnings

import pytest

optuna = pytest.importorskip("optuna")
pytest.importorskip("botorch")


from ckb.errors import InvalidInputError  # noqa: E402
from ckb.integrations.optuna import CKBSampler  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)
FAST = {"num_restarts": 2, "raw_samples": 32, "maxiter": 30}
BAD = {"x0": math.pi, "x1": math.pi}  # g = cos(2 pi) - 0.5 = 0.5: violates by 0.5


def _objective(trial):
    x0 = trial.suggest_float("x0", 0.0, 6.0)
    x1 = trial.suggest_float("x1", 0.0, 6.0)
    trial.set_user_attr("g", [math.cos(x0 + x1) - 0.5])
    return math.cos(2 * x0) * math.cos(x1) + math.sin(x0)


def _cons(t):
    return t.user_attrs["g"]


def _allowances(study):
    return {d["number"]: d["info"]["allowance"] for d in study.sampler.decisions(study)}


def test_pcei_under_a_budget_needs_n_trials():
    """Without n_trials, pcei under a budget took every decision for the last (width z_{0.1} = 1.28 at each,
    against 2.9 with 54 asks left), and refine_last refined at every decision."""
    with pytest.raises(InvalidInputError, match="pass n_trials="):
        CKBSampler(violation_budget=1.0)
    with pytest.raises(InvalidInputError, match="pass n_trials="):
        CKBSampler(refine_last=0.2)
    CKBSampler()  # without a budget or refine_last, pcei reads no horizon
    CKBSampler(violation_budget=1.0, n_trials=20)


@pytest.mark.parametrize(
    "budget, match",
    [
        (True, r"violation_budget must be .*got True"),
        ("1.0", r"violation_budget must be .*got '1.0'"),
        ("abc", r"violation_budget must be .*got 'abc'"),
        ({"a": 1}, r"violation_budget must be .*got \{'a': 1\}"),
        ([], r"violation_budget must be .*got 0 value\(s\): \[\]"),
        (10**400, r"violation_budget"),
        ([1.0, -1.0], r"violation_budget"),
        (float("inf"), r"violation_budget"),
    ],
)
def test_a_bad_violation_budget_is_one_line(budget, match):
    with pytest.raises(InvalidInputError, match=match) as exc:
        CKBSampler(violation_budget=budget, n_trials=10)
    assert "\n" not in str(exc.value)


def test_a_policy_that_does_not_read_the_violation_budget_says_so():
    with pytest.warns(UserWarning, match="policy 'cei' does not read violation_budget"):
        CKBSampler(policy="cei", violation_budget=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CKBSampler(policy="pcei", violation_budget=1.0, n_trials=10)


def test_a_wrong_length_budget_refused_before_its_first_use_can_be_corrected(tmp_path):
    """A budget of two numbers on a one-constraint study was refused at the first decision, after the
    design had stored it; a sampler with one number was then refused as different from the stored
    settings, and no sampler could continue the study."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    kw = {"constraints_func": _cons, "n_startup_trials": 3, "n_trials": 6, **FAST}
    st = optuna.create_study(
        study_name="s", storage=url, sampler=CKBSampler(violation_budget=[1.0, 2.0], **kw)
    )
    # said once the first trial is recorded (it was said at the first decision, after the whole design)
    with pytest.raises(InvalidInputError, match="violation_budget has 2 values but trial 0 has 1 constraint"):
        st.optimize(_objective, n_trials=3)
    assert [t.state for t in st.trials] == [optuna.trial.TrialState.COMPLETE]  # trial 0 is kept
    st = optuna.load_study(study_name="s", storage=url, sampler=CKBSampler(violation_budget=1.0, **kw))
    st.optimize(_objective, n_trials=4)
    assert len(st.sampler.decisions(st)) == 2


def test_a_budget_without_a_feasible_trial_is_named_once(caplog):
    """As ckb.Optimizer warns: until a feasible trial exists, the search for one may violate whatever the
    budget; a feasible trial among the first stops nothing and says nothing."""
    import logging

    def corner(trial):  # feasible on 0.5% of the box: none of the 6-trial design
        x0 = trial.suggest_float("x0", 0.0, 1.0)
        x1 = trial.suggest_float("x1", 0.0, 1.0)
        trial.set_user_attr("g", [1.9 - x0 - x1])
        return x0 + x1

    def run(objective):
        sampler = CKBSampler(
            policy="pcei", constraints_func=_cons, violation_budget=0.0, n_trials=9, seed=0, **FAST
        )
        study = optuna.create_study(sampler=sampler)
        with caplog.at_level(logging.WARNING, logger="ckb.integrations.optuna"):
            study.optimize(objective, n_trials=9)
        notes = [r.getMessage() for r in caplog.records if "none of the" in r.getMessage()]
        caplog.clear()
        return notes

    notes = run(corner)
    assert len(notes) == 1 and notes[0].startswith("CKBSampler: violation_budget = [0.0], but none of the 6")
    assert run(_objective) == []  # its design holds a feasible point
