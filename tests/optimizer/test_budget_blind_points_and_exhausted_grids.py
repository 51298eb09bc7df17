"""Under a violation budget, no blind point is asked past the design while its results are out, and the
user's data told before the first ask is not charged; with ``exact=True``, an exhausted candidate set
says that its ask repeats a point."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import ckb
from ckb.errors import InvalidInputError

pytest.importorskip("botorch")

DESIGN = [[0.1, 0.1], [0.3, 0.2], [0.2, 0.5], [0.5, 0.1], [0.05, 0.4]]  # all feasible


def _f(x):
    return float((x[0] - 0.8) ** 2 + (x[1] - 0.8) ** 2)


def _g(x):
    return [float(x[0] + x[1] - 1.2)]


def _opt(**kw):
    args = {"m": 1, "budget": 20, "minimize": True, "seed": 1, **kw}
    return ckb.Optimizer([0, 0], [1, 1], **args)


def test_ask_k_before_any_result_returns_only_the_design_under_a_budget():
    """ask(8) with the five design points untold added three Sobol points, two of them violating
    (g = +0.46, +0.03), and charged them: runs spent 0.15-0.49 of a budget of 0.02."""
    opt = _opt(violation_budget=0.02, initial_design=DESIGN)
    xs = opt.ask(8)
    assert len(xs) == 5 and all(h["source"] == "init" for h in opt.history())
    with pytest.raises(InvalidInputError, match="no result is in and 5 ask.s. are pending.*tell a result"):
        opt.ask()
    assert len(opt.history()) == 5  # the refused ask recorded nothing
    for x in xs:
        opt.tell(x, _f(x), _g(x))
    assert opt.metrics()["violation_spent"] == [0.0]
    assert len(opt.ask(3)) == 3  # from results now


def test_without_a_budget_ask_k_still_fills_the_batch():
    opt = _opt(initial_design=DESIGN)
    assert len(opt.ask(8)) == 8
    assert [h["source"] for h in opt.history()][5:] == ["sobol"] * 3


def test_with_no_design_the_first_point_is_asked_under_a_budget():
    opt = _opt(violation_budget=0.0, n_init=0)
    assert len(opt.ask(3)) == 1  # one point is unavoidably blind; two more would be blind too


def test_the_users_data_told_before_the_first_ask_is_not_charged():
    """An old measurement told before the first ask used up the whole budget (spent 0.6 of 0.3)."""
    opt = _opt(violation_budget=0.3, n_init=3)
    opt.tell([0.9, 0.9], 0.02, [0.6])
    assert opt.metrics()["violation_spent"] == [0.0]
    assert opt.metrics()["violation_budget_left"] == [0.3]
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, _f(x), _g(x))
    design_spent = opt.metrics()["violation_spent"][0]
    assert design_spent == 0.0  # design points are never charged
    opt.tell([0.95, 0.95], 0.01, [0.7])  # told during the run: an evaluation of the run, charged
    assert opt.metrics()["violation_spent"] == [pytest.approx(0.7)]


def test_the_users_data_told_before_the_first_ask_is_not_charged_whatever_the_order():
    """Design results on disk told without an ask, then an old measurement of the user's: the
    measurement was charged (0.7 of 5) where told first it was not; neither has started the run."""
    spent = []
    for order in ("design first", "user first"):
        opt = _opt(violation_budget=5.0, initial_design=DESIGN)
        tells = [(DESIGN[1], _f(DESIGN[1]), _g(DESIGN[1])), ([0.95, 0.95], 0.01, [0.7])]
        for x, y, g in tells if order == "design first" else tells[::-1]:
            opt.tell(x, y, g)
        spent.append(opt.metrics()["violation_spent"])
        x = opt.ask()  # the run starts: a point of the user's told from now on is charged
        opt.tell(x, _f(x), _g(x))
        opt.tell([0.9, 0.9], 0.02, [0.6])
        assert opt.metrics()["violation_spent"] == [pytest.approx(0.6)]
    assert spent == [[0.0], [0.0]]


def test_an_exhausted_candidate_set_warns_that_an_exact_ask_repeats_a_point():
    """exact=True on 9 candidates with a budget of 12 repeated [1, 1] three times without a word."""
    C = np.array(list(itertools.product(range(3), range(3))), float)
    opt = ckb.Optimizer(
        [0, 0], [2, 2], m=1, budget=12, minimize=True, exact=True, candidates=C, n_init=3, seed=0
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(12):
            x = opt.ask()
            opt.tell(x, float(((x - 1.3) ** 2).sum()), [float(x[0] - 1.5)])
    repeats = [h for h in opt.history() if h["info"].get("repeat")]
    said = [w for w in caught if "every candidate has been evaluated" in str(w.message)]
    assert len(repeats) == 3 and len(said) == 3
    assert all(w.filename == __file__ for w in said)  # at the caller's line, not inside ckb
    assert len({tuple(h["x"]) for h in opt.history()}) == 9
    assert all(not h["info"].get("repeat") for h in opt.history()[:9])


@pytest.mark.parametrize("bad", [np.array([[0.5, None]], dtype=object), [[0.5, None]]])
def test_a_none_in_a_design_is_named_as_such_not_as_a_nan(bad):
    """None became NaN on the way, and the error said 'must be finite, got [0.5, nan]'."""
    with pytest.raises(InvalidInputError, match=r"real numbers\), got .*None") as err:
        _opt(initial_design=bad)
    assert "nan" not in str(err.value)


def test_a_resume_refused_for_its_settings_does_not_warn_about_the_budget_first(tmp_path):
    """Reopening a best-feasible study with goal='cumulative' and a budget warned that slack-cei ignores
    the budget, then refused the mismatch: only the refusal now."""
    path = tmp_path / "s.db"
    _opt(storage=str(path)).study.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(InvalidInputError):
            _opt(storage=str(path), goal="cumulative", violation_budget=0.1)
    assert not [w for w in caught if "does not read violation_budget" in str(w.message)]
    with pytest.warns(UserWarning, match="does not read violation_budget"):  # a new study: warned
        _opt(storage=str(tmp_path / "t.db"), goal="cumulative", violation_budget=0.1).study.close()


def test_a_refinement_that_never_acts_is_warned_of():
    """refine_radius / refine_last given with leap_radius or a violation budget were accepted and never
    applied, silently (the endgame does not refine then)."""
    with pytest.warns(UserWarning, match="refine_last has no effect with leap_radius"):
        _opt(policy="pcei", refine_last=0.2, leap_radius=0.1)
    with pytest.warns(UserWarning, match="refine_radius has no effect with violation_budget"):
        _opt(policy="pcei", refine_radius=0.05, violation_budget=1.0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _opt(policy="pcei", refine_radius=0.05)  # acts: no warning
        _opt(policy="pcei", leap_radius=0.1)
