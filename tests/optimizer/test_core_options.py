"""ckb.Optimizer's goal, violation budget, initial design, outcome units, exact evaluations and visible
numerics (the options beside the ask/tell loop of test_core)."""

import sqlite3
import warnings

import numpy as np
import pytest

import ckb
from ckb.errors import InvalidInputError, OutOfDomainError
from ckb.optimizer import OPTIMIZER_POLICIES, initial_design
from ckb.optimizer.policies import GOAL_POLICIES
from ckb.studies import StudyStorage

FAST = {"num_restarts": 2, "raw_samples": 32, "maxiter": 50}


def problem(x):
    x = np.asarray(x, dtype=float)
    return float(-((x[0] - 0.3) ** 2) - (x[1] - 0.6) ** 2), [float(x[0] + x[1] - 1.0)]


def run(opt, n, f=problem):
    for _ in range(n):
        x = opt.ask()
        opt.tell(x, *f(x))


def _capped(x):
    """g = 1 - r(x), r = 10^(6 x0 - 5) spanning six decades (1e-5 .. 10): feasible where x0 >= 5/6; values
    of 0.99-1 over most of the box, as the tension spring's first constraint."""
    return float(x[0] + x[1]), [float(1.0 - 10.0 ** (6.0 * x[0] - 5.0))]


def _edit_stored_spec(path, name, edit):
    """Rewrite study ``name``'s spec in the SQLite file ``path`` by ``edit(spec)`` (in place): the study as
    an older version stored it."""
    from ckb.studies.storage import dumps, loads

    with sqlite3.connect(path) as conn:
        spec = loads(conn.execute("SELECT spec FROM studies WHERE name = ?", (name,)).fetchone()[0])
        edit(spec)
        conn.execute("UPDATE studies SET spec = ? WHERE name = ?", (dumps(spec), name))
    conn.close()


def _snapshot(opt):
    return [(t["number"], t["state"], t["objective"]) for t in opt.history()]


def _spy_decisions(monkeypatch, policy):
    """Record the Decision every ``decide`` of ``policy``'s class receives."""
    cls = OPTIMIZER_POLICIES.get(policy)
    seen, real = [], cls.decide

    def decide(self, ctx):
        seen.append(ctx)
        return real(self, ctx)

    monkeypatch.setattr(cls, "decide", decide)
    return seen


# ------------------------------------------------------------------------------------------- goal
def test_the_goal_picks_the_default_policy_and_is_stored(tmp_path):
    path = tmp_path / "s.db"
    a = ckb.Optimizer([0, 0], [1, 1], budget=6, storage=path, study_name="a")
    assert a.goal == "best-feasible" and a.policy_name == OPTIMIZER_POLICIES.canonical(
        GOAL_POLICIES["best-feasible"]
    )
    b = ckb.Optimizer([0, 0], [1, 1], goal="cumulative", budget=6, storage=path, study_name="b")
    assert b.policy_name == OPTIMIZER_POLICIES.canonical(GOAL_POLICIES["cumulative"])
    c = ckb.Optimizer([0, 0], [1, 1], goal="cumulative", policy="cei", budget=6, storage=path, study_name="c")
    assert c.policy_name == "cei" and c.metrics()["goal"] == "cumulative"
    for x in (a, b, c):
        x.close()
    with StudyStorage(path) as s:
        assert [s.spec(n)["goal"] for n in ("a", "b", "c")] == ["best-feasible", "cumulative", "cumulative"]
    assert ckb.Optimizer.load(path, "b").goal == "cumulative"
    with pytest.raises(
        InvalidInputError, match="created with goal = 'cumulative', but this Optimizer was given goal"
    ):
        ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=6, storage=path, study_name="c")


@pytest.mark.parametrize(
    "goal, match",
    [("best_feasible", "Did you mean 'best-feasible'"), ("regret", "goal must be one of"), (3, "got 3")],
)
def test_a_bad_goal_is_named_before_anything_is_stored(tmp_path, goal, match):
    path = tmp_path / "s.db"
    with pytest.raises(InvalidInputError, match=match):
        ckb.Optimizer([0, 0], [1, 1], goal=goal, storage=path)
    with StudyStorage(path) as s:
        assert s.study_names() == []


def test_a_study_written_before_the_new_options_loads_with_their_defaults(tmp_path):
    """Studies written before goal, initial_design, violation_budget, outcome_transform and exact existed
    store none of them: they load as best-feasible with their stored policy, and resume with the same
    arguments as before."""
    path = tmp_path / "old.db"
    opt = ckb.Optimizer(
        [0, 0], [1, 1], policy="ckb-ucb", budget=8, n_init=3, storage=path, study_name="p", **FAST
    )
    run(opt, 4)
    before = _snapshot(opt)
    opt.close()

    def as_version_1(spec):
        for key in (
            "goal",
            "initial_design",
            "violation_budget",
            "outcome_transform",
            "exact",
            "horizon",
            "policy_constants",
        ):
            spec.pop(key)
        spec["version"] = 1

    _edit_stored_spec(path, "p", as_version_1)
    old = ckb.Optimizer.load(path, "p")
    assert old.goal == "best-feasible" and old.policy_name == "ckb-ucb" and _snapshot(old) == before
    assert old.violation_budget is None and old.outcome_transform == "auto" and old.exact is False
    old.close()
    again = ckb.Optimizer(
        [0, 0], [1, 1], policy="ckb-ucb", budget=8, n_init=3, storage=path, study_name="p", **FAST
    )
    run(again, 1)
    assert len(again.history()) == 5


# ------------------------------------------------------------------------- stored policy constants
def _bowl(x):
    return float((x[0] - 0.9) ** 2 + (x[1] - 0.9) ** 2), [float(x[0] + x[1] - 1.0)]


def _pcei_study(path):
    return ckb.Optimizer(
        [0, 0], [1, 1], m=1, policy="pcei", budget=14, minimize=True, seed=2, storage=path, **FAST
    )


def test_a_resumed_study_keeps_the_policy_constants_it_was_started_with(monkeypatch, tmp_path):
    """A study started when pcei's default width was 2 and resumed after it became 1 (this version's)
    asks what an uninterrupted run at width 2 asks (resumed at width 1, its last ask differs by 0.007),
    with a warning naming the constant; its spec is not rewritten."""
    from ckb.rules.feasible_ei import PessimisticCEIRule

    reference = ckb.Optimizer(
        [0, 0], [1, 1], m=1, policy="pcei", budget=14, minimize=True, seed=2, kappa=2.0, **FAST
    )
    run(reference, 14, _bowl)
    with monkeypatch.context() as patch:
        patch.setitem(PessimisticCEIRule.defaults, "kappa", 2.0)
        opt = _pcei_study(tmp_path / "s.db")
        run(opt, 9, _bowl)
        spec = opt.store.spec("study")
        opt.close()
    assert spec["policy_constants"]["kappa"] == 2.0 and spec["policy_params"] == {}
    with pytest.warns(UserWarning, match=r"resumes with the pcei constants .*: kappa=2.0 \(now 1.0\)\.$"):
        resumed = _pcei_study(tmp_path / "s.db")
    assert resumed.policy.kappa == 2.0 and resumed.store.spec("study") == spec
    run(resumed, 5, _bowl)
    X = lambda o: np.array([t["x"] for t in o.history()])
    np.testing.assert_array_equal(X(resumed), X(reference))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (
            ckb.Optimizer(  # the default now: nothing to keep, no warning
                [0, 0],
                [1, 1],
                m=1,
                policy="pcei",
                budget=14,
                minimize=True,
                seed=2,
                storage=tmp_path / "t.db",
            ).policy.kappa
            == 1.0
        )


@pytest.mark.parametrize(
    "edit, match",
    [
        ({"retired": 3}, r"constant 'retired' = 3, which this version of ckb does not have"),
        ({"budget_certify": "sometimes"}, r"constants this version of ckb does not accept \(.*sometimes"),
    ],
)
def test_a_stored_policy_constant_this_version_cannot_take_is_named_and_nothing_changes(
    tmp_path, edit, match
):
    path = tmp_path / "s.db"
    opt = _pcei_study(path)
    run(opt, 3, _bowl)
    before = _snapshot(opt)
    opt.close()
    _edit_stored_spec(path, "study", lambda spec: spec["policy_constants"].update(edit))
    with pytest.raises(InvalidInputError, match=match):
        _pcei_study(path)
    with StudyStorage(path) as store:
        assert [(t["number"], t["state"], t["objective"]) for t in store.trials("study")] == before


@pytest.mark.parametrize("edit", ["no constants", "no first_value"])
def test_a_study_stored_without_a_constant_added_since_resumes_with_its_legacy_value(tmp_path, edit):
    """slack-cei's ``first_value`` and ``objective_log`` came after studies stored no constants (or
    constants without them): such a study resumes with the values that reproduce its decisions,
    "probability" and False (``legacy_constants``), with a warning; a new study takes the defaults."""
    path = tmp_path / "s.db"
    make = lambda: ckb.Optimizer([0, 0], [1, 1], m=1, policy="slack-cei", budget=12, storage=path, **FAST)
    opt = make()
    run(opt, 4)
    assert opt.policy.first_value == "improvement" and opt.policy.objective_log is True
    opt.close()
    if edit == "no constants":
        _edit_stored_spec(path, "study", lambda spec: spec.pop("policy_constants"))
    else:
        _edit_stored_spec(path, "study", lambda spec: spec["policy_constants"].pop("first_value"))
    with pytest.warns(UserWarning, match=r"first_value='probability' \(now 'improvement'\)"):
        old = make()
    assert old.policy.first_value == "probability"
    assert old.policy.objective_log is (edit == "no first_value")  # stored True in the second case
    run(old, 1)


@pytest.mark.parametrize("edit", ["no constants", "no expand_kappa"])
def test_a_pcei_study_stored_before_the_expansion_was_the_default_resumes_without_it(tmp_path, edit):
    """pcei's ``expand_kappa`` became 2 (the expansion on) after studies stored it as None or not at all
    (``expand_margin`` came later still): a study that stores neither resumes with both None, the rule
    it was run with (``legacy_constants``), with a warning; one that stores ``expand_kappa`` None keeps it."""
    path = tmp_path / "s.db"
    opt = _pcei_study(path)
    run(opt, 3, _bowl)
    assert opt.policy.expand_kappa == 2.0 and opt.policy.expand_margin == 3.0
    opt.close()

    def older(spec):
        if edit == "no constants":
            spec.pop("policy_constants")
        else:
            spec["policy_constants"].pop("expand_kappa")
            spec["policy_constants"].pop("expand_margin")

    _edit_stored_spec(path, "study", older)
    with pytest.warns(UserWarning, match=r"expand_kappa=None \(now 2.0\), expand_margin=None \(now 3.0\)"):
        old = _pcei_study(path)
    assert old.policy.expand_kappa is None and old.policy.expand_margin is None
    run(old, 1, _bowl)
    old.close()
    _edit_stored_spec(
        path, "study", lambda spec: spec.setdefault("policy_constants", {}).update(expand_kappa=None)
    )
    with pytest.warns(UserWarning, match=r"expand_kappa=None \(now 2.0\)"):
        assert _pcei_study(path).policy.expand_kappa is None


def _spanning(x):
    """Minimize a positive cost spanning five decades over the square, s.t. x0 + x1 <= 1.5."""
    return float(10.0 ** (5.0 * x[0] * x[1]) * 1e-3), [float(x[0] + x[1] - 1.5)]


@pytest.mark.parametrize("policy, kind", [("slack-cei", "log"), ("pcei", "standardize")])
def test_under_auto_slack_cei_models_a_minimized_objective_spanning_decades_by_its_log(policy, kind):
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, policy=policy, budget=12, minimize=True, **FAST)
    run(opt, 8, _spanning)
    assert opt.metrics()["outcome_units"]["objective"] == kind
    off = ckb.Optimizer(
        [0, 0], [1, 1], m=1, policy="slack-cei", budget=12, minimize=True, objective_log=False
    )
    run(off, 6, _spanning)
    assert off.metrics()["outcome_units"]["objective"] == "standardize"
    with pytest.raises(InvalidInputError, match="objective_log must be true or false, got 'yes'"):
        ckb.Optimizer([0, 0], [1, 1], m=1, policy="slack-cei", objective_log="yes")


# ------------------------------------------------------------------------------- violation budget
@pytest.mark.parametrize(
    "budget, match",
    [
        (-1.0, r"violation_budget\[0\] is -1.0; each entry must be a finite number >= 0"),
        ([0.5, np.nan], r"violation_budget\[1\] is nan"),
        ([1.0, 2.0, 3.0], "m = 2 numbers >= 0.*got 3 value"),
        ("lots", "violation_budget must be None, a number"),
    ],
)
def test_a_bad_violation_budget_is_named(budget, match):
    with pytest.raises(InvalidInputError, match=match):
        ckb.Optimizer([0, 0], [1, 1], m=2, violation_budget=budget)


def test_the_violation_budget_counts_raw_violations_after_the_design(monkeypatch):
    seen = _spy_decisions(monkeypatch, "cei")
    with pytest.warns(UserWarning, match="'cei' does not read violation_budget"):  # the accounting's test
        opt = ckb.Optimizer(
            [0, 0], [1, 1], m=2, policy="cei", budget=10, n_init=2, violation_budget=[1.0, 0.5], **FAST
        )
    assert opt.metrics()["violation_budget"] == [1.0, 0.5]
    X = opt.ask(2)  # the design: its violations are not charged
    opt.tell(X[0], 1.0, [3.0, -1.0])
    opt.tell(X[1], 2.0, [-1.0, 2.0])
    opt.tell([0.5, 0.5], 0.5, [0.25, 0.1])  # the user's point: charged
    x = opt.ask()
    assert seen[-1].violation_left.tolist() == [0.75, 0.4]  # hand-computed: [1 - 0.25, 0.5 - 0.1]
    opt.tell(x, 0.0, [0.5, -0.3])
    met = opt.metrics()
    assert met["violation_spent"] == pytest.approx([0.75, 0.1])
    assert met["violation_budget_left"] == pytest.approx([0.25, 0.4])
    X = opt.ask(2)  # the first of the batch is pending while the second is decided: it counts nothing
    assert seen[-2].violation_left.tolist() == seen[-1].violation_left.tolist() == pytest.approx([0.25, 0.4])
    opt.tell(X[0], 0.0, [5.0, 5.0])  # overspent: nothing is left, never less
    assert opt.metrics()["violation_budget_left"] == [0.0, 0.0]
    assert opt.metrics()["violation_spent"] == pytest.approx([5.75, 5.1])
    opt.ask()
    assert seen[-1].violation_left.tolist() == [0.0, 0.0]


def test_without_a_budget_the_spent_violation_is_still_reported(monkeypatch):
    seen = _spy_decisions(monkeypatch, "cei")
    opt = ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=6, n_init=2, **FAST)
    run(opt, 3)
    met = opt.metrics()
    assert met["violation_budget"] is None and met["violation_budget_left"] is None
    pos = [max(t["constraints"][0], 0.0) for t in opt.history()[2:]]
    assert met["violation_spent"] == pytest.approx([sum(pos)])
    assert seen[0].violation_left is None


def test_each_decision_sees_the_rounds_left_and_the_map_back_to_raw_units(monkeypatch):
    seen = _spy_decisions(monkeypatch, "cei")

    def heavy(x):  # the constraint is 1e10 in part of the box: its units are the robust map
        y, g = problem(x)
        return y, [1e10 if x[0] > 0.8 else g[0]]

    opt = ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=12, n_init=5, seed=1, **FAST)
    run(opt, 7, heavy)
    assert [d.rounds_left for d in seen] == [6, 5]  # budget 12 - design 5 - this ask - earlier ones
    opt.tell([0.1, 0.1], *heavy([0.1, 0.1]))  # a told point uses a trial of the budget
    opt.ask(2)
    assert [d.rounds_left for d in seen[2:]] == [3, 2]
    d = seen[-1]
    raw = np.array([t["constraints"] for t in opt.history() if t["state"] == "complete"])
    assert opt.metrics()["outcome_units"]["constraints"] == ["bilog2"]
    assert np.any(raw > 1e9)
    np.testing.assert_allclose(d.c_to_raw(d.c), raw, rtol=1e-12)
    assert d.exact is False


# -------------------------------------------------------------------------------- initial design
def test_a_given_design_is_asked_first_in_order_and_states_the_horizon(tmp_path, monkeypatch):
    seen = _spy_decisions(monkeypatch, "ckb-ucb")
    D = np.array([[0.1, 0.9], [0.5, 0.5], [0.9, 0.2]])
    path = tmp_path / "s.db"
    opt = ckb.Optimizer(
        [0, 0], [1, 1], policy="ckb-ucb", budget=8, initial_design=D, storage=path, study_name="d", **FAST
    )
    assert opt.n_init == 3 and opt.horizon == 5 and opt.policy.horizon == 5
    X = opt.ask(2)
    np.testing.assert_array_equal(X, D[:2])
    opt.tell(X[0], *problem(X[0]))
    opt.tell(X[1], *problem(X[1]))
    opt.tell([0.3, 0.3], *problem([0.3, 0.3]))  # the user's point does not change the horizon
    x = opt.ask()
    np.testing.assert_array_equal(x, D[2])
    opt.tell(x, *problem(x))
    run(opt, 2)
    h = opt.history()
    assert [t["source"] for t in h] == ["init", "init", "user", "init", "policy", "policy"]
    assert [t["info"].get("design_index") for t in h[:4]] == [0, 1, None, 2]
    assert opt.metrics()["remaining"] == 2 and opt.metrics()["horizon"] == 5
    assert all(d.models is not None for d in seen) and len(seen) == 2
    opt.close()
    with StudyStorage(path) as s:
        spec = s.spec("d")
    assert spec["horizon"] == 5 and spec["initial_design"] == D.tolist() and spec["n_init"] == 3
    loaded = ckb.Optimizer.load(path, "d")
    assert loaded.horizon == 5 and np.array_equal(loaded._design(), D)


def test_a_callable_design_gets_n_init_and_a_seeded_generator():
    calls = []

    def latin(n, rng):
        calls.append(n)
        return (rng.permutation(n)[:, None] + rng.uniform(0, 1, (n, 2))) / n

    a = ckb.Optimizer([0, 0], [1, 1], budget=10, n_init=4, initial_design=latin, seed=3)
    b = ckb.Optimizer([0, 0], [1, 1], budget=10, n_init=4, initial_design=latin, seed=3)
    assert calls == [4, 4] and np.array_equal(a._design(), b._design()) and a._design().shape == (4, 2)
    np.testing.assert_array_equal(a.ask(4), a._design())
    c = ckb.Optimizer([0], [1], budget=10, initial_design=lambda n, rng: np.linspace(0, 1, 3)[:, None])
    assert c.n_init == 3 and c.horizon == 7  # without n_init, the callable's points define it


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        (
            {"initial_design": [[0.5, 0.5], [0.5, 1.5]]},
            OutOfDomainError,
            r"initial_design point 1 .* coordinate 1 = 1.5",
        ),
        ({"initial_design": [[0.5, np.nan]]}, InvalidInputError, "initial_design point 0 must be finite"),
        (
            {"initial_design": [0.5, 0.5]},
            InvalidInputError,
            r"\(n, d\) array of points with d = 2, got shape \(2,\)",
        ),
        ({"initial_design": [["a", 0.5]]}, InvalidInputError, "initial_design must be an"),
        (
            {"initial_design": np.full((3, 2), 0.5), "n_init": 2},
            InvalidInputError,
            "n_init = 2 but initial_design has 3",
        ),
        (
            {"initial_design": lambda n, rng: np.full((n + 1, 2), 0.5), "n_init": 2},
            InvalidInputError,
            r"initial_design\(2, rng\) has 3",
        ),
        (
            {"initial_design": lambda n, rng: 1 / 0},
            InvalidInputError,
            r"initial_design\(6, rng\) raised ZeroDivisionError",
        ),
        ({"initial_design": np.full((9, 2), 0.5)}, InvalidInputError, "9 points but the budget is 8"),
        (
            {"initial_design": [[0.5, 0.5]], "candidates": [[0.1, 0.1]]},
            InvalidInputError,
            "not one of the candidates",
        ),
    ],
)
def test_a_bad_design_is_named_before_anything_is_stored(tmp_path, kwargs, err, match):
    path = tmp_path / "s.db"
    with pytest.raises(err, match=match):
        ckb.Optimizer([0, 0], [1, 1], budget=8, storage=path, study_name="x", **kwargs)
    with StudyStorage(path) as s:
        assert s.study_names() == []


@pytest.mark.filterwarnings("ignore:violation_budget = .* feasible:UserWarning")  # designs without one
@pytest.mark.parametrize("given", [False, True])
def test_design_results_told_without_an_ask_count_as_design_points(given):
    """Results already on disk: telling design points that were not asked records them as the design
    (source init), in any order; the asks skip them and the policy starts once the design is done. The
    design's violations are not charged to the violation budget, and the horizon does not change."""
    D = np.array([[0.1, 0.9], [0.5, 0.5], [0.9, 0.2], [0.2, 0.3]]) if given else None
    opt = ckb.Optimizer([0, 0], [1, 1], budget=10, n_init=4, initial_design=D, violation_budget=1.0, **FAST)
    design = opt._design()
    if not given:
        np.testing.assert_array_equal(design, initial_design([0, 0], [1, 1], 4, seed=0))
    for i in (2, 0):
        opt.tell(design[i], 1.0, [5.0])
    assert opt.ask().tolist() == design[1].tolist()
    opt.tell(design[1], 1.0, [5.0])
    with pytest.warns(UserWarning, match="told already"):
        opt.tell(design[1], 2.0, [0.5])  # the same point again: a repeat, the user's
    opt.tell(design[3], 1.0, [5.0])
    x = opt.ask()
    h = opt.history()
    assert [(t["source"], t["info"].get("design_index")) for t in h] == [
        ("init", 2),
        ("init", 0),
        ("init", 1),
        ("user", None),
        ("init", 3),
        ("policy", None),
    ]
    assert not np.array_equal(x, design[0]) and opt.horizon == 6
    assert opt.metrics()["violation_spent"] == [0.5] and opt.metrics()["violation_budget_left"] == [0.5]


# --------------------------------------------------------------------------------- outcome units
def test_one_huge_constraint_value_no_longer_silences_the_others(monkeypatch):
    """A told constraint value of 1e300 made the RMS overflow: every constraint value became 0 to the
    policy for every later ask. Now it gets the robust map and the others keep their signs, and the
    fitted model still tells the feasible observations from the infeasible ones."""
    import torch

    seen = _spy_decisions(monkeypatch, "cei")
    opt = ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=14, n_init=10, seed=2, **FAST)
    X = opt.ask(10)
    for i, x in enumerate(X):
        y, g = problem(x)
        opt.tell(x, y, [1e300] if i == 0 else g)
    opt.ask()
    d = seen[-1]
    raw = np.array([problem(x)[1][0] for x in X[1:]])
    assert np.all(np.sign(d.c[1:, 0]) == np.sign(raw)) and np.std(d.c[1:, 0]) > 0.05
    mu, _ = d.models.mean_std(torch.as_tensor(opt.space.to_unit(X[1:])))
    assert np.mean(np.sign(mu[:, 1].detach().numpy()) == np.sign(raw)) >= 0.8
    assert opt.history()[0]["constraints"][0] == 1e300  # the raw value stays in the study
    assert opt.metrics()["outcome_units"] == {"objective": "standardize", "constraints": ["bilog2"]}
    assert opt.history()[-1]["info"]["units"] == {"objective": "standardize", "constraints": ["bilog2"]}


def test_auto_models_a_capped_ratio_constraint_by_its_log_distance_to_the_cap(monkeypatch, tmp_path):
    """g = 1 - r(x) with r spanning six decades (the tension spring's first constraint): "auto-no-bounds"
    (the default before the bound map) keeps it in rms units, where every value but the feasible
    corner's sits at about 1; "auto" hands the policy -log(1 - g / b), b just past the largest value,
    and maps the models' values back exactly. The setting is stored with the study and resumed; a study
    stored with "auto" before the bound map joined it resumes with "auto-no-bounds", its units."""

    seen = _spy_decisions(monkeypatch, "cei")
    path = tmp_path / "s.db"
    units = {}
    kw = dict(policy="cei", budget=12, n_init=10, seed=0, storage=path, **FAST)
    for transform in ("auto-no-bounds", "auto"):
        opt = ckb.Optimizer([0, 0], [1, 1], outcome_transform=transform, study_name=transform, **kw)
        run(opt, 11, _capped)
        units[transform] = opt.metrics()["outcome_units"]["constraints"]
        d = seen[-1]
        raw = np.array([t["constraints"][0] for t in opt.history()[:10]])  # what the last ask saw
        np.testing.assert_allclose(d.c_to_raw(d.c)[:, 0], raw, rtol=1e-12, atol=1e-15)
        if transform == "auto":
            b = raw.max() + float(np.median(np.unique(raw.max() - raw)[1:]))
            np.testing.assert_allclose(d.c[:, 0], -np.log1p(-raw / b), rtol=1e-12)
        opt.close()
    assert units == {"auto-no-bounds": ["rms"], "auto": ["bound"]}
    again = ckb.Optimizer.load(path, "auto")
    assert again.outcome_transform == "auto"
    assert again.metrics()["outcome_units"]["constraints"] == ["bound"]
    again.close()
    # the study as a version before the bound map stored it: "auto", no units version
    _edit_stored_spec(path, "auto", lambda spec: spec.pop("units"))
    old = ckb.Optimizer.load(path, "auto")
    assert old.outcome_transform == "auto-no-bounds"
    assert old.metrics()["outcome_units"]["constraints"] == ["rms"]
    old.close()
    with pytest.raises(
        InvalidInputError,
        match="created with outcome_transform = 'auto-no-bounds', but this Optimizer was given "
        "outcome_transform = 'auto'",
    ):
        ckb.Optimizer([0, 0], [1, 1], study_name="auto", **kw)


def test_a_study_of_a_rule_without_the_bound_map_stored_with_auto_before_it_resumes_with_auto(tmp_path):
    """CKB-UCB sees the former units under today's "auto" (bound_map = False): its study stored with
    "auto" before the bound map joined it resumes with "auto", by the constructor and by load."""
    path = tmp_path / "s.db"
    kw = dict(policy="ckb-ucb", budget=12, n_init=5, seed=0, storage=path, study_name="s", **FAST)
    opt = ckb.Optimizer([0, 0], [1, 1], **kw)
    run(opt, 6, _capped)
    opt.close()
    _edit_stored_spec(path, "s", lambda spec: spec.pop("units"))
    again = ckb.Optimizer([0, 0], [1, 1], **kw)
    assert again.outcome_transform == "auto" and again.trials_told == 6
    again.close()
    loaded = ckb.Optimizer.load(path, "s")
    assert loaded.outcome_transform == "auto"
    loaded.close()


@pytest.mark.parametrize(
    "policy, kind",
    [
        ("ckb-ucb", "rms"),
        ("penalty-noisy", "rms"),
        ("queue-ucb", "rms"),
        ("rpol-ucb", "bound"),
        ("pcei", "bound"),
    ],
)
def test_auto_leaves_the_bound_map_out_for_rules_that_weigh_signed_constraints(policy, kind):
    """The primal-dual, penalty and queue rules weigh the signed constraint estimates together, where the
    bound map lets one constraint's stretched margin buy another's violation (OptimizerPolicy.bound_map):
    under "auto" they see the capped ratio constraint in rms units, the others by the bound map."""

    opt = ckb.Optimizer([0, 0], [1, 1], policy=policy, budget=12, n_init=10, seed=0, **FAST)
    run(opt, 10, _capped)
    assert opt.metrics()["outcome_units"]["constraints"] == [kind]
    assert opt.units().describe()["constraints"] == [kind]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_slack_cei_with_a_margin_past_a_bound_maps_floor_or_cap_asks_all_points(monkeypatch, sign):
    """In auto-bounds units a floored constraint r(x) - 1 can never go below its floor, a capped one
    1 - r(x) never above its cap. A debt whose per-ask margin lies past the floor made the threshold
    about -2^200 in the models' units and slack-cei's acquisition gradient NaN (BoTorch's
    OptimizationGradientError, found on the welded beam); an infinite threshold for a credit past the
    cap did the same (found on the spring). Now a debt no point can repay gives the threshold 0
    (feasibility), as the rule's relaxation, and such a credit a far finite one."""
    from ckb.optimizer.policies.pcei import _signed_thresholds
    from ckb.optimizer.policies.slack_cei import FAR_THRESHOLD

    def g(x):  # r = 10^(4 x0 - 2) spans 1e-2..1e2: the values crowd against the bound
        return float(x[0] + x[1]), [sign * float(10.0 ** (4.0 * x[0] - 2.0) - 1.0)]

    seen = _spy_decisions(monkeypatch, "slack-cei")
    opt = ckb.Optimizer(
        [0, 0],
        [1, 1],
        policy="slack-cei",
        budget=13,
        n_init=10,
        seed=0,
        outcome_transform="auto-bounds",
        **FAST,
    )
    run(opt, 13, g)
    d = seen[-1]
    assert opt.metrics()["outcome_units"]["constraints"] == ["bound"]
    assert all(t["state"] == "complete" for t in opt.history())
    raw = np.array([t["constraints"][0] for t in opt.history()[:12]])
    margin = -raw.sum() / (d.rounds_left + 1)
    assert sign * margin < -2.0  # past the floor (a debt) or the cap (a credit) of the map
    assert _signed_thresholds(np.array([margin]), d.c_to_raw, 1)[0] == -sign * np.inf
    _, tau = opt.policy._allowance(d)
    assert tau[0] == (0.0 if sign > 0 else FAR_THRESHOLD)


def test_one_huge_objective_value_leaves_the_order_of_the_others_to_the_policy(monkeypatch):
    """A heavy-tailed objective gets the normal scores of its ranks: the others keep their order (not
    their spacing: only the order decides the incumbent and where the GP puts the optimum), and a
    change of that order changes the next ask."""
    seen = _spy_decisions(monkeypatch, "cei")
    asks = []
    for best in (2, 3):
        opt = ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=8, n_init=5, seed=3, **FAST)
        X = opt.ask(5)
        for i, x in enumerate(X):
            y = 1e300 if i == 0 else (5.0 if i == best else float(i))
            opt.tell(x, y, [-1.0 + 0.1 * i])
        asks.append(opt.ask())
        y_p = seen[-1].y
        assert (
            np.all(np.isfinite(y_p))
            and np.argmax(y_p) == 0
            and np.argsort(y_p[1:]).tolist()
            == np.argsort([5.0 if i == best else float(i) for i in range(1, 5)]).tolist()
        )
    assert not np.array_equal(asks[0], asks[1])


@pytest.mark.parametrize("big", [1e155, float(np.finfo(float).max)])
def test_huge_objective_values_do_not_overflow(big):
    opt = ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=8, n_init=4, minimize=True, **FAST)
    X = opt.ask(4)
    for i, x in enumerate(X):
        opt.tell(x, big if i == 1 else -problem(x)[0], problem(x)[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        x = opt.ask()
    assert np.all(np.isfinite(x)) and opt.metrics()["outcome_units"]["objective"] == "rank"


def test_a_bad_outcome_transform_is_named():
    with pytest.raises(
        InvalidInputError,
        match="outcome_transform must be one of 'auto', 'rms', 'bilog', 'bilog-constraints', 'auto-bounds', 'auto-no-bounds', 'auto-log-objective', got 'log'",
    ):
        ckb.Optimizer([0, 0], [1, 1], outcome_transform="log")


# ---------------------------------------------------------------------------------------- exact
@pytest.mark.parametrize("exact", [False, True])
def test_exact_evaluations_are_never_repeated(monkeypatch, exact):
    """On a tiny candidate set, ckb-ucb returns to the unconstrained maximum (a corner) while it is
    optimistic about its constraint; with exact=True no candidate is evaluated twice until all were."""
    seen = _spy_decisions(monkeypatch, "ckb-ucb")
    C = np.array([[1.0, 1.0], [0.0, 0.0], [0.5, 0.0], [0.0, 0.5], [0.25, 0.25]])

    def corner(x):
        return float(x[0] + x[1]), [float(x[0] + x[1] - 0.6)]

    opt = ckb.Optimizer(
        [0, 0], [1, 1], policy="ckb-ucb", budget=9, n_init=2, candidates=C, exact=exact, seed=0, **FAST
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(opt, 9, corner)
    X = [tuple(t["x"]) for t in opt.history()]
    first = X[: len(C)]
    assert all(d.exact is exact for d in seen)
    repeats = sum("every candidate has been evaluated" in str(w.message) for w in caught)
    assert repeats == (9 - len(C) if exact else 0)  # an exact repeat is said, once per ask
    if exact:
        assert len(set(first)) == len(C)  # every candidate once before any repeat
    else:
        assert len(set(first)) < len(C)  # the policy repeats a point when allowed to


def test_pcei_under_a_budget_keeps_to_the_candidates_it_has_not_evaluated():
    """pcei with a zero violation budget drew points in its trust-region boxes (around evaluated feasible
    points) when the maximizer's pick lay outside them, and the optimizer snapped such a point to its
    nearest candidate: the evaluated centre. With exact=True it asked the same candidate at four asks in
    a row (2 distinct points in 6, 5 of 7 candidates never evaluated), and ask(3) gave one point 3 times."""
    C = np.round(np.random.default_rng(1).random((7, 2)), 3)

    def f(x):
        return float(np.sum((x - 0.3) ** 2)), [float(x[0] - 0.5), float(0.2 - x[1])]

    kw = dict(m=2, n_init=2, policy="pcei", candidates=C, seed=1, violation_budget=0.0)
    opt = ckb.Optimizer([0, 0], [1, 1], budget=6, exact=True, **kw, **FAST)
    run(opt, 6, f)
    assert len({tuple(t["x"]) for t in opt.history()}) == 6
    for exact in (False, True):
        opt = ckb.Optimizer([0, 0], [1, 1], budget=8, exact=exact, **kw, **FAST)
        run(opt, 2, f)
        X = opt.ask(3)
        assert len({tuple(x) for x in X}) == 3
        if exact:
            assert not {tuple(x) for x in X} & {
                tuple(t["x"]) for t in opt.history() if t["state"] == "complete"
            }


def test_exact_continuous_asks_avoid_every_evaluated_point(monkeypatch):
    from ckb.optimizer.acquisition import SAME_POINT

    opt = ckb.Optimizer([0, 0], [1, 1], policy="ckb-ucb", budget=14, n_init=4, exact=True, seed=1, **FAST)
    run(opt, 14, lambda x: (float(x[0] + x[1]), [float(x[0] - 0.2)]))
    U = np.array([t["x"] for t in opt.history()])
    gaps = np.max(np.abs(U[:, None] - U[None]), axis=-1) + 2 * np.eye(len(U))
    assert np.all(gaps > SAME_POINT)


# -------------------------------------------------------------------------------------- numerics
def test_fit_warnings_are_counted_per_trial_and_in_the_metrics(monkeypatch):
    import botorch.fit

    real = botorch.fit.fit_gpytorch_mll

    def noisy(mll, **kw):
        warnings.warn("added jitter of 1.0e-06 to the diagonal", RuntimeWarning, stacklevel=2)
        return real(mll, **kw)

    opt = ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=8, n_init=3, **FAST)
    run(opt, 3)
    monkeypatch.setattr(botorch.fit, "fit_gpytorch_mll", noisy)
    run(opt, 2)
    h = opt.history()
    num = h[3]["info"]["numerics"]
    assert num["fit_warnings"] == 2 and num["acq_warnings"] == 0 and num["fit_failed"] == 0  # f and g0
    assert num["messages"] == ["RuntimeWarning: added jitter of 1.0e-06 to the diagonal"]
    met = opt.metrics()["numerics"]
    assert met["fit_warnings"] == 4 and met["fit_failed"] == 0 and len(met["messages"]) == 1


def test_acquisition_warnings_are_counted(monkeypatch):
    import botorch.optim

    real = botorch.optim.optimize_acqf

    def warns(*a, **kw):
        from botorch.exceptions.warnings import OptimizationWarning

        warnings.warn("Optimization failed within scipy.optimize.minimize", OptimizationWarning, stacklevel=2)
        return real(*a, **kw)

    monkeypatch.setattr(botorch.optim, "optimize_acqf", warns)
    opt = ckb.Optimizer([0, 0], [1, 1], policy="ckb-ucb", budget=6, n_init=3, **FAST)
    run(opt, 4)
    num = opt.history()[3]["info"]["numerics"]
    assert num["acq_warnings"] == 1 and num["messages"][0].startswith(
        "OptimizationWarning: Optimization failed"
    )


def test_a_failed_fit_is_recorded(monkeypatch):
    """fit_failed never fired: a failure of BoTorch's fit only shows when every retry failed, and the
    benchmark read a fit_failures attribute the optimizer did not have. Forced here."""
    import botorch.fit
    from botorch.exceptions import ModelFittingError

    def fails(mll, **kw):
        raise ModelFittingError("All attempts to fit the model have failed.")

    opt = ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=8, n_init=3, **FAST)
    run(opt, 3)
    monkeypatch.setattr(botorch.fit, "fit_gpytorch_mll", fails)
    run(opt, 1)
    info = opt.history()[3]["info"]
    assert info["fit_failed"] == 1.0 and info["numerics"]["fit_failed"] == 1
    assert "fit of f failed: ModelFittingError: All attempts" in info["numerics"]["messages"][0]
    assert opt.metrics()["numerics"]["fit_failed"] == 1 and opt.fit_failures == 1


def test_strict_numerics_turns_a_warning_or_failure_into_an_error_and_records_nothing(monkeypatch, tmp_path):
    import botorch.fit
    from botorch.exceptions import ModelFittingError

    real = botorch.fit.fit_gpytorch_mll
    opt = ckb.Optimizer([0, 0], [1, 1], policy="cei", budget=8, n_init=3, strict_numerics=True, **FAST)
    run(opt, 4)  # no warning in a plain run
    before = _snapshot(opt)

    def noisy(mll, **kw):
        warnings.warn("added jitter of 1.0e-06 to the diagonal", RuntimeWarning, stacklevel=2)
        return real(mll, **kw)

    monkeypatch.setattr(botorch.fit, "fit_gpytorch_mll", noisy)
    with pytest.raises(
        ckb.NumericsError,
        match=r"^strict_numerics: fitting the GPs warned: RuntimeWarning: added jitter .* \(and 1 more\); nothing was recorded\.$",
    ):
        opt.ask()
    monkeypatch.setattr(
        botorch.fit, "fit_gpytorch_mll", lambda mll, **kw: (_ for _ in ()).throw(ModelFittingError("gave up"))
    )
    with pytest.raises(ckb.NumericsError, match="fit of f failed: ModelFittingError: gave up"):
        opt.ask()
    assert _snapshot(opt) == before
    monkeypatch.setattr(botorch.fit, "fit_gpytorch_mll", real)
    opt.strict_numerics = False
    assert opt.ask().shape == (2,)


def test_library_deprecations_are_not_numerics():
    from ckb.optimizer.models import capture_warnings

    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with capture_warnings() as caught:
            warnings.warn("old API", DeprecationWarning, stacklevel=2)
            warnings.warn("not positive definite", RuntimeWarning, stacklevel=2)
    assert caught == ["RuntimeWarning: not positive definite"]
    assert [str(w.message) for w in shown] == ["old API"]  # passed on, not swallowed


@pytest.mark.parametrize(
    "change, match",
    [
        (
            {"initial_design": [[0.2, 0.2], [0.7, 0.7]]},
            r"created with initial_design = \[\[0.1, 0.9\], \[0.5, 0.5\]\]",
        ),
        ({"exact": False}, "created with exact = True, but this Optimizer was given exact = False"),
        ({"outcome_transform": "rms"}, "created with outcome_transform = 'auto'"),
        (
            {"violation_budget": 2.0},
            r"created with violation_budget = \[1.0\], but .* given violation_budget = \[2.0\]",
        ),
    ],
)
def test_the_new_options_are_part_of_the_study_identity(tmp_path, change, match):
    path = tmp_path / "s.db"
    kw = dict(budget=6, initial_design=[[0.1, 0.9], [0.5, 0.5]], exact=True, violation_budget=1.0)
    ckb.Optimizer([0, 0], [1, 1], storage=path, study_name="p", **kw).close()
    with pytest.raises(InvalidInputError, match=match):
        ckb.Optimizer([0, 0], [1, 1], storage=path, study_name="p", **{**kw, **change})
    loaded = ckb.Optimizer.load(path, "p")
    assert loaded.exact is True and loaded.violation_budget == [1.0] and loaded.n_init == 2


# ------------------------------------------------------------------- what the violation budget charges
@pytest.mark.filterwarnings("ignore:violation_budget = .* feasible:UserWarning")  # designs without one
def test_sobol_points_past_the_design_are_charged_to_the_violation_budget():
    """The Sobol points asked while no result is in, beyond the ``n_init`` design (``n_init=0``; a design
    whose every evaluation failed; ``ask(k)`` with k > n_init before any tell), were labelled as design
    points, so their violations escaped the budget (spent 0 and 1 where 1 and 2 were due)."""
    g = [1.0]  # every evaluation violates by 1
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=6, n_init=0, violation_budget=0.5, seed=0, **FAST)
    x = opt.ask()
    opt.tell(x, 0.0, g)
    assert opt.history()[0]["source"] == "sobol"
    assert opt.metrics()["violation_spent"] == [1.0] and opt.metrics()["violation_budget_left"] == [0.0]

    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, n_init=2, violation_budget=0.5, seed=0, **FAST)
    for _ in range(2):
        opt.tell(opt.ask(), failed=True)
    for _ in range(2):
        opt.tell(opt.ask(), 0.0, g)  # trial 2 is Sobol point 2 (no result yet), trial 3 the policy's
    assert [t["source"] for t in opt.history()] == ["init", "init", "sobol", "policy"]
    assert opt.metrics()["violation_spent"] == [2.0]

    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, n_init=2, violation_budget=0.5, seed=0, **FAST)
    X = opt.ask(4)  # under a budget, no blind point past the design while its results are out
    for x in X:
        opt.tell(x, 0.0, g)
    hist = opt.history()
    assert [t["source"] for t in hist] == ["init", "init"]
    assert [t["info"]["design_index"] for t in hist] == [0, 1]
    assert opt.metrics()["violation_spent"] == [0.0]  # the design is not charged


def test_the_default_design_must_fit_the_budget():
    """With d = 3 the default design has 2d + 2 = 8 points; a budget of 5 was accepted, the whole run was
    design (horizon 1, the policy never asked, nothing charged to a violation budget)."""
    with pytest.raises(
        InvalidInputError,
        match=r"^the default initial design has 2d \+ 2 = 8 points, more than the budget of 5 evaluations; pass n_init <= 5",
    ):
        ckb.Optimizer([0, 0, 0], [1, 1, 1], m=1, budget=5)
    assert ckb.Optimizer([0, 0, 0], [1, 1, 1], m=1, budget=5, n_init=3).horizon == 2


def test_an_infinite_violation_budget_is_named_where_it_is_given():
    """inf was documented as 'no limit' by the validator but refused later by the study file as a damaged
    'study spec'; it is refused where it is given, with the alternative."""
    with pytest.raises(
        InvalidInputError, match=r"^violation_budget\[0\] is inf; each entry must be a finite"
    ):
        ckb.Optimizer([0, 0], [1, 1], m=2, violation_budget=[np.inf, 1.0])


@pytest.mark.parametrize("policy", ["cei", "ckb-ucb", "slack-cei"])
def test_a_policy_that_does_not_read_the_violation_budget_says_so(policy):
    """Only pcei spends a violation budget; the others' asks are the same with or without it, which was
    silent (cei spent 0.9 against a budget of 0)."""
    with pytest.warns(UserWarning, match=rf"policy {policy!r} does not read violation_budget"):
        ckb.Optimizer([0, 0], [1, 1], m=1, policy=policy, violation_budget=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ckb.Optimizer([0, 0], [1, 1], m=1, policy="pcei", violation_budget=0.0)
        ckb.Optimizer([0, 0], [1, 1], m=1, policy="cei")


def test_the_last_ask_is_known_to_be_the_last(monkeypatch):
    """``Decision.rounds_left = 0`` (no ask after this one) was read by the rules as 'unknown' and replaced
    by the rule's horizon minus its rounds: with points told without an ask, slack-cei's last ask weighed
    3 further asks that did not exist. Unknown is None now (Optuna without n_trials)."""
    from ckb.rules.feasible_ei import PessimisticCEIRule

    seen = []
    orig = PessimisticCEIRule._asks_left
    monkeypatch.setattr(
        PessimisticCEIRule, "_asks_left", lambda self, r: seen.append((r, orig(self, r))) or seen[-1][1]
    )

    def f(x):
        return float((x[0] - 0.7) ** 2 + (x[1] - 0.2) ** 2), [float(x[0] + x[1] - 1.0)]

    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=9, n_init=4, policy="slack-cei", minimize=True, **FAST)
    run(opt, 4, f)
    for u in (0.1, 0.5, 0.9):  # told without an ask: trials of the budget, not of the policy's horizon
        opt.tell([u, 1 - u], *f([u, 1 - u]))
    run(opt, 1, f)
    seen.clear()
    run(opt, 1, f)  # the last trial of the budget
    assert opt.metrics()["remaining"] == 0
    assert seen and all(r == 0 and asks == 1 for r, asks in seen)
    rule = opt.policy.rule
    assert rule._asks_left(None) == max(rule.horizon - rule.t + 1, 1)  # unknown: the rule's horizon


def test_constraints_told_as_violation_amounts_warn_once():
    """A constraint told as max(g, 0) is flat where it holds (docs/optimizer.md): the first model-based
    ask says so once, naming the constraint; signed values, or values >= 0 with fewer than two zeros,
    do not warn."""
    from ckb.optimizer.models import violation_amounts

    def amounts(x):
        y, g = problem(x)
        return y, [max(g[0], 0.0), -1.0]  # constraint 0 clipped, constraint 1 always feasible (signed)

    opt = ckb.Optimizer([0, 0], [1, 1], m=2, policy="cei", budget=10, seed=0, **FAST)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run(opt, 8, amounts)
    notes = [str(w.message) for w in seen if "max(g, 0)" in str(w.message)]
    n_zero = sum(t["constraints"][0] == 0.0 for t in opt.history()[:6])
    assert notes == [
        f"constraint 0 has only values >= 0 ({n_zero} of the 6 results exactly 0), as a violation amount "
        "max(g, 0) has: flat wherever the constraint holds, so the models cannot see the boundary from "
        "the feasible side. Tell the signed value g (negative inside) if the system has it."
    ]
    assert [w.filename for w in seen if "max(g, 0)" in str(w.message)] == [__file__]
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, policy="cei", budget=8, seed=0, **FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(opt, 7)  # signed values: no warning
    c = np.array([[0.0, 0.5, 0.0], [0.0, -0.1, 1.0], [0.2, 0.3, 2.0]])
    assert violation_amounts(c) == [0]  # 1 has a negative value, 2 a single zero
    assert violation_amounts(np.zeros((4, 1))) == []  # all zero: nothing violated, nothing to say


def test_a_violation_budget_without_a_feasible_result_warns_once():
    """Until a feasible point is known, pcei's search for one may violate whatever the budget (the
    documented limit of budgets on designs without a feasible point): the first model-based ask says so
    once; a feasible result in the design, or no budget, says nothing."""

    def corner(x):  # feasible on 0.5% of the box: no point of the 6-point design
        return float(x[0] + x[1]), [float(1.9 - x[0] - x[1])]

    opt = ckb.Optimizer([0, 0], [1, 1], m=1, policy="pcei", budget=10, seed=0, violation_budget=0, **FAST)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        run(opt, 8, corner)
    notes = [str(w.message) for w in seen if "none of the" in str(w.message)]
    assert notes == [
        "violation_budget = [0.0], but none of the 6 results is feasible: until one is, each ask searches "
        "for a feasible point and may violate, whatever the budget (a known-feasible point told before "
        "the first ask, or passed in initial_design=, lets the budget be kept from the start)."
    ]
    assert [w.filename for w in seen if "none of the" in str(w.message)] == [__file__]
    for budget in (0, None):  # a feasible design point (problem: x0 + x1 <= 1), or no budget
        opt = ckb.Optimizer(
            [0, 0], [1, 1], m=1, policy="pcei", budget=8, seed=0, violation_budget=budget, **FAST
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            run(opt, 7, problem if budget == 0 else corner)
