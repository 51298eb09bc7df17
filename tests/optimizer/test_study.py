"""The study behind ckb.Optimizer: transactions, budget, reports, violation metrics (no torch needed)."""

import warnings

import numpy as np
import pytest

import ckb
from ckb.errors import InvalidInputError
from ckb.optimizer.study import BudgetExhaustedError, Metrics, Study
from ckb.studies import StudyFileError, StudyStorage

SPEC = {
    "kind": "ckb.Optimizer",
    "lower": [0.0, 0.0],
    "upper": [1.0, 1.0],
    "m": 2,
    "budget": 4,
    "minimize": False,
}
IDENTITY = ("lower", "upper", "m", "budget", "minimize")


def _open(storage=None, **changes):
    return Study.open(storage, "s", {**SPEC, **changes}, lambda: {"n": 0}, IDENTITY)


def _ask_tell(study, x, y=None, g=None):
    """One transaction asking ``x`` (and telling it if ``y`` is given); counts steps in the state."""

    def decide(step):
        number = step.ask(np.asarray(x, dtype=float), {"source": "test"})
        if y is not None:
            step.tell(number, y, np.asarray(g, dtype=float))
        step.new_state = {"n": step.state["n"] + 1}
        return number

    return study.transact(decide)


def test_a_transaction_writes_its_asks_tells_and_state_together(tmp_path):
    study = _open(tmp_path / "s.db")
    assert _ask_tell(study, [0.1, 0.2], 1.0, [0.5, -1.0]) == 0
    assert _ask_tell(study, [0.3, 0.4]) == 1
    t = study.history()
    assert [(r["number"], r["state"], r["source"]) for r in t] == [
        (0, "complete", "test"),
        (1, "pending", "test"),
    ]
    assert (
        t[0]["objective"] == 1.0 and t[0]["constraints"].tolist() == [0.5, -1.0] and t[0]["feasible"] is False
    )
    assert study.latest_state() == (2, {"n": 2})
    assert [p["trial"] for p in study.pending()] == [1]


def test_a_decision_that_raises_writes_nothing(tmp_path):
    study = _open(tmp_path / "s.db")
    _ask_tell(study, [0.1, 0.2])

    def decide(step):
        step.ask(np.array([0.5, 0.5]), {})
        step.tell(0, 1.0, np.array([0.0, 0.0]))
        raise InvalidInputError("refused")

    with pytest.raises(InvalidInputError, match="refused"):
        study.transact(decide)
    assert [(t["number"], t["state"]) for t in study.trials()] == [(0, "pending")]
    assert study.latest_state() == (1, {"n": 1})


def test_a_transaction_that_finds_the_study_changed_starts_again(tmp_path):
    """A writer outside the queue changes the study between the read and the write: the step is decided
    again on the new snapshot, so the other writer's trial is neither lost nor given the same number."""
    path = tmp_path / "s.db"
    study = _open(path)
    calls = []

    def decide(step):
        calls.append(len(step.trials))
        if len(calls) == 1:
            with StudyStorage(path) as other:
                other.ask("s", [0.9, 0.9])
        return step.ask(np.array([0.1, 0.1]), {})

    assert study.transact(decide) == 1
    assert calls == [0, 1]
    assert [t["x"].tolist() for t in study.trials()] == [[0.9, 0.9], [0.1, 0.1]]


def test_the_budget_is_checked_in_the_transaction_and_a_result_is_always_kept(tmp_path):
    study = _open(tmp_path / "s.db", budget=2)
    _ask_tell(study, [0.1, 0.1], 1.0, [0.0, 0.0])
    assert study.metrics()["remaining"] == 1
    _ask_tell(study, [0.2, 0.2])
    assert study.metrics()["remaining"] == 0
    before = study.trials()
    with pytest.raises(BudgetExhaustedError, match="budget of 2 evaluations is used"):
        _ask_tell(study, [0.3, 0.3])
    assert len(study.trials()) == len(before) and study.latest_state() == (2, {"n": 2})

    def told_without_ask(step):  # a result nobody asked for is kept past the budget
        number = step.ask(np.array([0.4, 0.4]), {"source": "user"}, budgeted=False)
        step.tell(number, 2.0, np.array([-1.0, -1.0]))
        return number

    assert study.transact(told_without_ask) == 2
    assert study.metrics()["remaining"] == 0 and study.metrics()["evaluations"] == 2


def test_metrics_use_the_violation_vocabulary_and_the_old_key_warns(tmp_path):
    study = _open(tmp_path / "s.db", budget=10, minimize=True)
    vals = [(1.0, [0.5, -1.0]), (3.0, [-0.1, 0.0]), (5.0, [2.0, 0.25]), (2.0, [-1.0, -1.0])]
    for i, (y, g) in enumerate(vals):
        _ask_tell(study, [0.1 * i, 0.1], y, g)
    _ask_tell(study, [0.9, 0.9])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the current keys do not warn
        met = study.metrics()
        # hand-computed: sums of g (1.4, -1.75) -> [1.4, 0]; sums of [g]+ (2.5, 0.25)
        assert met["violation_per_constraint"] == pytest.approx([1.4, 0.0])
        assert met["violation"] == pytest.approx(1.4)
        assert met["positive_violation_per_constraint"] == pytest.approx([2.5, 0.25])
        assert met["positive_violation"] == pytest.approx(np.hypot(2.5, 0.25))
        assert met["violating_evaluations"] == 2 and met["evaluations"] == 4 and met["pending"] == 1
        assert met["best_feasible"] == 2.0 and met["remaining"] == 5
    assert isinstance(met, Metrics) and isinstance(met, dict)
    with pytest.warns(DeprecationWarning, match="'positive_violation'"):
        assert met["cumulative_violation"] == pytest.approx(2.75)  # the old L1 sum, still there
    with pytest.warns(DeprecationWarning, match="positive_violation_per_constraint"):
        assert met.get("cumulative_violation_per_constraint") == pytest.approx([2.5, 0.25])


def test_metrics_of_an_empty_study_are_zero(tmp_path):
    met = _open(tmp_path / "s.db").metrics()
    assert met["violation"] == 0.0 and met["positive_violation_per_constraint"] == [0.0, 0.0]
    assert met["violating_evaluations"] == 0 and met["best_feasible"] is None and met["remaining"] == 4


def test_resuming_checks_the_identity_and_a_study_without_state_is_a_clear_error(tmp_path):
    path = tmp_path / "s.db"
    _open(path).close()
    with pytest.raises(
        InvalidInputError, match="created with budget = 4, but this Optimizer was given budget = 5"
    ):
        _open(path, budget=5)
    import sqlite3

    with sqlite3.connect(path) as conn:  # a file cut short of its state rows
        conn.execute("DELETE FROM policy_states")
    study = _open(path)
    with pytest.raises(StudyFileError, match="study 's' in .* has no stored optimizer state"):
        study.latest_state()


def _tell_with_info(study, x, y, g, info):
    def decide(step):
        number = step.ask(np.asarray(x, dtype=float), info)
        step.tell(number, y, np.asarray(g, dtype=float))
        step.new_state = {"n": step.state["n"] + 1}
        return number

    return study.transact(decide)


def test_the_violation_budget_is_charged_after_the_design_only(tmp_path):
    study = _open(tmp_path / "s.db", budget=10, violation_budget=[1.0, 0.25])
    _tell_with_info(study, [0.1, 0.1], 1.0, [4.0, 4.0], {"source": "init", "design_index": 0})
    _tell_with_info(study, [0.2, 0.1], 1.0, [0.5, -1.0], {"source": "policy"})
    _tell_with_info(study, [0.3, 0.1], 1.0, [-2.0, 0.5], {"source": "user"})
    _tell_with_info(study, [0.4, 0.1], 1.0, [0.25, 0.0], None)  # no info: a user's point
    _ask_tell(study, [0.5, 0.1])  # pending: nothing
    met = study.metrics()
    # hand-computed: [0.5 + 0 + 0.25, 0 + 0.5 + 0]; left [1 - 0.75, max(0.25 - 0.5, 0)]
    assert met["violation_spent"] == [0.75, 0.5]
    assert met["violation_budget"] == [1.0, 0.25] and met["violation_budget_left"] == [0.25, 0.0]
    assert _open(tmp_path / "t.db").metrics()["violation_budget_left"] is None


def test_numerics_totals_add_the_trials_records(tmp_path):
    study = _open(tmp_path / "s.db", budget=10)
    num = {"fit_warnings": 2, "acq_warnings": 1, "fit_failed": 0, "messages": ["RuntimeWarning: a", "W: b"]}
    _tell_with_info(study, [0.1, 0.1], 1.0, [0.0, 0.0], {"source": "policy", "numerics": num})
    num2 = {"fit_warnings": 0, "acq_warnings": 3, "fit_failed": 1, "messages": ["W: b", "W: c"]}
    _tell_with_info(study, [0.2, 0.1], 1.0, [0.0, 0.0], {"source": "policy", "numerics": num2})
    _tell_with_info(
        study, [0.3, 0.1], 1.0, [0.0, 0.0], {"source": "policy", "fit_failed": 1.0}
    )  # older files
    assert study.metrics()["numerics"] == {
        "fit_warnings": 2,
        "acq_warnings": 4,
        "fit_failed": 2,
        "messages": ["RuntimeWarning: a", "W: b", "W: c"],
    }


def test_huge_violations_do_not_overflow_the_metrics(tmp_path):
    study = _open(tmp_path / "s.db", budget=10)
    _ask_tell(study, [0.1, 0.1], 1.0, [1e300, 1e300])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        met = study.metrics()
    assert met["positive_violation"] == pytest.approx(np.sqrt(2) * 1e300)
    assert met["violation"] == pytest.approx(np.sqrt(2) * 1e300)


def test_an_option_a_stored_study_predates_takes_its_default(tmp_path):
    path = tmp_path / "s.db"
    _open(path).close()  # SPEC has no "goal"
    ident = (*IDENTITY, "goal")
    Study.open(
        path,
        "s",
        {**SPEC, "goal": "best-feasible"},
        lambda: {"n": 0},
        ident,
        defaults={"goal": "best-feasible"},
    )
    with pytest.raises(
        InvalidInputError,
        match="created with goal = 'best-feasible', but this Optimizer was given goal = 'x'",
    ):
        Study.open(
            path, "s", {**SPEC, "goal": "x"}, lambda: {"n": 0}, ident, defaults={"goal": "best-feasible"}
        )


def test_a_policy_constant_written_out_at_the_studys_value_resumes(tmp_path):
    """A probe found kappa=1.0 refused for a study started with the default kappa (1.0): the stored
    constants are the same policy. Another value is still refused, naming both."""
    path = tmp_path / "s.db"
    opts = {"m": 1, "budget": 10, "n_init": 3, "seed": 0, "policy": "pcei", "storage": path}
    ckb.Optimizer([0, 0], [1, 1], study_name="pump", **opts).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ckb.Optimizer([0, 0], [1, 1], study_name="pump", kappa=1.0, **opts).close()
    with pytest.raises(
        InvalidInputError, match=r"created with policy_params = \{\}, but .* \{'kappa': 2.0\}"
    ):
        ckb.Optimizer([0, 0], [1, 1], study_name="pump", kappa=2.0, **opts)
