"""ckb.Optimizer: ask/tell, batches, failures, resume, bad input (in-process; processes: test_core_processes)."""

import re

import numpy as np
import pytest

import ckb
from ckb.errors import InvalidInputError, OutOfDomainError, UnknownNameError
from ckb.optimizer import OPTIMIZER_POLICIES, initial_design
from ckb.studies import StudyFileError, StudyNotFoundError, StudyStorage

FAST = {"num_restarts": 2, "raw_samples": 32, "maxiter": 50}


def problem(x):
    x = np.asarray(x, dtype=float)
    return float(-((x[0] - 0.3) ** 2) - (x[1] - 0.6) ** 2), [float(x[0] + x[1] - 1.0)]


def run(opt, n):
    for _ in range(n):
        x = opt.ask()
        opt.tell(x, *problem(x))


def test_ask_tell_starts_with_the_shared_sobol_design_and_records_everything():
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, policy="ckb-ucb", budget=8, seed=5, **FAST)
    run(opt, 8)
    h = opt.history()
    design = initial_design([0, 0], [1, 1], 6, seed=5)  # n_init = 2 d + 2
    np.testing.assert_array_equal(np.stack([t["x"] for t in h[:6]]), design)
    assert [t["source"] for t in h] == ["init"] * 6 + ["policy"] * 2
    assert all(t["state"] == "complete" for t in h)
    assert h[7]["info"]["round"] == 2 and "dual" in h[7]["info"] and "g_bar" in h[7]["info"]
    for t in h:
        y, g = problem(t["x"])
        assert t["objective"] == y and t["constraints"].tolist() == g and t["feasible"] == (g[0] <= 0)


def test_best_feasible_and_metrics_count_observed_violations():
    opt = ckb.Optimizer([0, 0], [1, 1], m=2, policy="ckb-ucb", budget=10, n_init=4, **FAST)
    X = opt.ask(4)
    vals = [(1.0, [0.5, -1.0]), (3.0, [-0.1, 0.0]), (5.0, [2.0, 0.25]), (2.0, [-1.0, -1.0])]
    for x, (y, g) in zip(X, vals):
        opt.tell(x, y, g)
    best = opt.best_feasible()
    assert best["objective"] == 3.0 and best["trial"] == 1 and best["x"].tolist() == X[1].tolist()
    met = opt.metrics()
    assert met["evaluations"] == 4 and met["violating_evaluations"] == 2
    assert met["positive_violation_per_constraint"] == pytest.approx([2.5, 0.25])
    assert met["positive_violation"] == pytest.approx(np.hypot(2.5, 0.25))
    assert met["violation_per_constraint"] == pytest.approx([1.4, 0.0]) and met["violation"] == pytest.approx(
        1.4
    )
    assert met["best_feasible"] == 3.0 and met["remaining"] == 6
    assert met["policy_state"] == {"dual_0": 0.0, "dual_1": 0.0}
    with pytest.warns(DeprecationWarning, match="positive_violation"):
        assert met["cumulative_violation"] == pytest.approx(2.75)  # the old L1 sum, deprecated


def test_minimize_flips_the_best_and_the_policy_sense():
    opt = ckb.Optimizer([0, 0], [1, 1], budget=5, minimize=True, n_init=3, **FAST)
    for x, y in zip(opt.ask(3), [2.0, -1.0, 0.5]):
        opt.tell(x, y, [-1.0])
    assert opt.best_feasible()["objective"] == -1.0
    assert opt.ask().shape == (2,)


def test_ask_k_gives_distinct_points_and_accounts_for_pending_ones():
    opt = ckb.Optimizer([0, 0], [1, 1], budget=12, n_init=4, **FAST)
    X0 = opt.ask(3)
    X1 = opt.ask(3)  # the 4th design point, then (no result yet) the 5th and 6th Sobol points
    np.testing.assert_array_equal(np.vstack([X0, X1]), initial_design([0, 0], [1, 1], 6, seed=0))
    for x in np.vstack([X0, X1])[:4]:
        opt.tell(x, *problem(x))
    X2 = opt.ask(4)  # two pending points remain; four policy picks
    allx = np.vstack([X1[1:], X2])
    gaps = np.max(np.abs(allx[:, None, :] - allx[None, :, :]), axis=-1) + np.eye(len(allx))
    assert np.all(gaps > 1e-3)
    rounds = [t["info"]["round"] for t in opt.history()[-4:]]
    assert rounds == [1, 2, 3, 4]  # one policy round (and dual step) per point


def _record_separations(monkeypatch):
    """Capture the ``separation`` radii each acquisition maximization is given."""
    from ckb.optimizer.acquisition import Maximizer

    seen, call = [], Maximizer.__call__

    def spy(self, fn, exclude=None, separation=None):
        seen.append(None if separation is None else np.array(separation))
        return call(self, fn, exclude, separation)

    monkeypatch.setattr(Maximizer, "__call__", spy)
    return seen


@pytest.mark.parametrize("policy", ["ckb-ucb", "config"])
def test_a_batch_keeps_the_separation_from_pending_points(monkeypatch, policy):
    # a boundary optimum (the maximizer of x1 + x2 on the disk of radius 0.8 is on its boundary), where
    # posterior-mean fantasies alone let the later picks of a batch pile onto the first
    def disk(x):
        return float(x[0] + x[1]), [float(x[0] ** 2 + x[1] ** 2 - 0.64)]

    opt = ckb.Optimizer([0, 0], [1, 1], policy=policy, budget=30, n_init=6, seed=1, **FAST)
    for _ in range(14):
        x = opt.ask()
        opt.tell(x, *disk(x))
    seen = _record_separations(monkeypatch)
    X = opt.ask(4)
    assert seen[0] is None  # nothing pending for the first pick
    for i in range(1, 4):
        r = seen[i]
        assert r.shape == (2,) and np.all(r > 0)
        # point i keeps >= 1 radius (scaled Euclidean) from every earlier point of the batch
        assert np.all(np.linalg.norm((X[:i] - X[i]) / r, axis=1) >= 1.0)


def test_batch_separation_zero_avoids_only_exact_repeats(monkeypatch):
    opt = ckb.Optimizer([0, 0], [1, 1], budget=20, n_init=4, batch_separation=0.0, **FAST)
    run(opt, 6)
    seen = _record_separations(monkeypatch)
    X = opt.ask(3)
    assert seen == [None, None, None]
    gaps = np.max(np.abs(X[:, None, :] - X[None, :, :]), axis=-1) + np.eye(3)
    assert np.all(gaps > 1e-6)


def test_failures_are_kept_and_the_next_asks_move_away():
    opt = ckb.Optimizer([0, 0], [1, 1], budget=10, n_init=4, **FAST)
    run(opt, 4)
    x = opt.ask()
    n = opt.tell(x, failed=True, note="simulator crashed")
    h = opt.history()
    assert h[n]["state"] == "failed" and h[n]["note"] == "simulator crashed" and h[n]["objective"] is None
    x2 = opt.ask()
    assert np.max(np.abs(x2 - x)) > 1e-3
    assert opt.metrics()["failed"] == 1 and opt.metrics()["evaluations"] == 4


def test_a_note_of_none_is_no_note_and_a_bool_among_constraints_is_refused():
    """tell(..., note=None) stored the text 'None'; constraints [0.1, True] were recorded as [0.1, 1.0]
    (numpy reads the list as floats) while an objective True is refused."""
    opt = ckb.Optimizer([0, 0], [1, 1], m=2, budget=10, n_init=2, **FAST)
    n = opt.tell([0.25, 0.5], 1.0, [0.1, -0.2], note=None)
    k = opt.tell([0.75, 0.5], 1.0, [0.1, -0.2])
    assert opt.history()[n]["note"] == opt.history()[k]["note"] is None  # as a tell without a note
    for bad in ([0.1, True], [1, True], (np.bool_(False), 0.5)):
        with pytest.raises(InvalidInputError, match="constraints"):
            opt.tell([0.5, 0.5], 1.0, bad)
    assert len(opt.history()) == 2  # nothing recorded by the refused tells


def test_telling_an_unasked_point_records_a_user_trial():
    opt = ckb.Optimizer([0, 0], [1, 1], budget=10, n_init=2, **FAST)
    n = opt.tell([0.25, 0.5], *problem([0.25, 0.5]))
    t = opt.history()[n]
    assert t["source"] == "user" and t["state"] == "complete"
    assert opt.ask().tolist() == initial_design([0, 0], [1, 1], 1, seed=0)[0].tolist()
    # by trial number, too
    k = opt.history()[-1]["number"]
    opt.tell(k, 0.0, [0.5])
    assert opt.history()[k]["state"] == "complete"


def test_finite_candidates_are_the_only_proposals():
    C = np.random.default_rng(0).uniform(0, 1, (30, 2))
    opt = ckb.Optimizer([0, 0], [1, 1], budget=10, candidates=C, n_init=3, policy="ckb-ts", **FAST)
    for X in (opt.ask(3), opt.ask(3)):
        assert len({tuple(x) for x in X}) == 3
        assert all(any(np.array_equal(x, c) for c in C) for x in X)
        for x in X:
            opt.tell(x, *problem(x))


@pytest.mark.parametrize("name", sorted(OPTIMIZER_POLICIES.names()))
def test_every_policy_runs_batches_with_failures(name):
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, n_init=3, policy=name, refit_every=10, **FAST)
    run(opt, 3)
    X = opt.ask(2)
    assert X.shape == (2, 2) and np.max(np.abs(X[0] - X[1])) > 1e-6
    opt.tell(X[0], *problem(X[0]))
    opt.tell(X[1], failed=True)
    x = opt.ask()
    opt.tell(x, *problem(x))
    h = opt.history()
    assert [t["source"] for t in h] == ["init"] * 3 + ["policy"] * 3
    assert [t["state"] for t in h[3:]] == ["complete", "failed", "complete"]


def test_same_seed_same_points_and_resume_continues_identically(tmp_path):
    kw = dict(budget=12, n_init=3, seed=2, policy="rpol-ucb", refit_every=2, **FAST)
    full = ckb.Optimizer([0, 0], [1, 1], **kw)
    run(full, 6)
    path = tmp_path / "s.db"
    part = ckb.Optimizer([0, 0], [1, 1], storage=path, study_name="r", **kw)
    run(part, 4)
    state = part.metrics()["policy_state"]
    part.close()
    resumed = ckb.Optimizer([0, 0], [1, 1], storage=path, study_name="r", **kw)
    assert len(resumed.history()) == 4 and resumed.metrics()["policy_state"] == state
    run(resumed, 2)
    a = np.stack([t["x"] for t in full.history()])
    b = np.stack([t["x"] for t in resumed.history()])
    np.testing.assert_array_equal(a, b)
    loaded = ckb.Optimizer.load(path, "r", **FAST)  # the stored options
    assert (
        loaded.policy_name == "rpol-ucb"
        and loaded.metrics()["policy_state"] == resumed.metrics()["policy_state"]
    )


def _snapshot(opt):
    return [(t["number"], t["state"], t["objective"]) for t in opt.history()]


@pytest.mark.parametrize(
    "call, err, match",
    [
        (
            lambda o: o.tell([0.5, 1.5], 1.0, [0.0]),
            OutOfDomainError,
            r"coordinate 1 = 1.5 is not in \[0.0, 1.0\]",
        ),
        (
            lambda o: o.tell(o.history()[0]["x"], 1.0, [0.0, 1.0]),
            InvalidInputError,
            "expected m = 1 constraint value",
        ),
        (
            lambda o: o.tell(o.history()[0]["x"], float("nan"), [0.0]),
            InvalidInputError,
            "objective is nan.*failed=True",
        ),
        (
            lambda o: o.tell(o.history()[0]["x"], 1.0, [np.inf]),
            InvalidInputError,
            "constraint 0 is inf.*failed=True",
        ),
        (lambda o: o.tell(o.history()[0]["x"], None, [0.0]), InvalidInputError, "needs the objective"),
        (lambda o: o.tell(o.history()[0]["x"], 1.0), InvalidInputError, "needs m = 1 constraint"),
        (
            lambda o: o.tell(o.history()[0]["x"], "high", [0.0]),
            InvalidInputError,
            "objective must be a real number",
        ),
        (lambda o: o.tell(17, 1.0, [0.0]), InvalidInputError, "no trial number 17"),
        (lambda o: o.tell(1, 1.0, [0.0]), InvalidInputError, "trial 1 .* is already complete"),
        (lambda o: o.ask(0), InvalidInputError, r"k \(number of points\) must be >= 1"),
    ],
)
def test_bad_input_is_named_and_nothing_stored_is_lost(call, err, match):
    opt = ckb.Optimizer([0, 0], [1, 1], budget=6, n_init=3, **FAST)
    x0, x1 = opt.ask(2)
    opt.tell(x1, *problem(x1))
    before = _snapshot(opt)
    with pytest.raises(err, match=match):
        call(opt)
    assert _snapshot(opt) == before
    opt.tell(x0, *problem(x0))  # the pending trial is still answerable


@pytest.mark.parametrize(
    "kwargs, err, match",
    [
        ({"policy": "ckb-ubc"}, UnknownNameError, "Did you mean 'ckb-ucb'"),
        (
            {"policy": "ckb-ucb", "detla": 0.5},
            InvalidInputError,
            "'detla' is neither a parameter of ckb.Optimizer nor a constant of policy .*Did you mean 'delta'",
        ),
        ({"m": 0}, InvalidInputError, r"m \(number of constraints\) must be >= 1"),
        ({"budget": 0}, InvalidInputError, "budget must be >= 1"),
        ({"refit_every": 0.5}, InvalidInputError, "refit_every must be an integer"),
        ({"batch_separation": -0.1}, InvalidInputError, "batch_separation must be >= 0"),
        ({"max_line_search": 0}, InvalidInputError, "max_line_search must be >= 1"),
        ({"minimize": "yes"}, InvalidInputError, "minimize must be true or false"),
        (
            {"policy": "ckb-ucb", "beta": {"type": "thoery"}},
            InvalidInputError,
            "unknown beta schedule 'thoery'",
        ),
    ],
)
def test_bad_options_fail_before_anything_is_stored(tmp_path, kwargs, err, match):
    path = tmp_path / "s.db"
    with pytest.raises(err, match=match):
        ckb.Optimizer([0, 0], [1, 1], storage=path, study_name="x", **kwargs)
    with StudyStorage(path) as s:
        assert s.study_names() == []


def test_resuming_with_other_options_or_a_missing_study_is_a_clear_error(tmp_path):
    path = tmp_path / "s.db"
    opt = ckb.Optimizer(
        [0, 0], [1, 1], policy="ckb-ucb", budget=6, n_init=2, storage=path, study_name="pump", **FAST
    )
    run(opt, 2)
    before = _snapshot(opt)
    with pytest.raises(
        InvalidInputError, match=r"created with budget = 6, but this Optimizer was given budget = 9"
    ):
        ckb.Optimizer([0, 0], [1, 1], policy="ckb-ucb", budget=9, n_init=2, storage=path, study_name="pump")
    with pytest.raises(InvalidInputError, match="created with policy = 'ckb-ucb'.*'cei'"):
        ckb.Optimizer([0, 0], [1, 1], budget=6, n_init=2, policy="cei", storage=path, study_name="pump")
    with pytest.raises(StudyNotFoundError, match="no study named 'pmup'.*Did you mean 'pump'"):
        ckb.Optimizer.load(path, "pmup")
    with pytest.raises(InvalidInputError, match="run-time settings only"):
        ckb.Optimizer.load(path, "pump", budget=10)
    assert _snapshot(ckb.Optimizer.load(path, "pump")) == before


def test_import_ckb_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, ckb, ckb.optimizer; ckb.optimizer.initial_design([0], [1], 2, 0); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_botorch_is_a_clear_error(monkeypatch):
    import importlib.util

    from ckb.optimizer.core import BotorchNotInstalledError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "botorch" else real(name, *a)
    )
    with pytest.raises(
        BotorchNotInstalledError, match=r"botorch is not installed.*pip install -e '\.\[botorch\]'"
    ):
        ckb.Optimizer([0.0], [1.0])


@pytest.mark.parametrize("policy", ["cei", "ckb-ucb"])
def test_asked_points_are_recorded_ones(tmp_path, policy):
    """Same seed, same evaluations: the same points as recorded before the study/optimizer split
    (default maximizer settings; single asks, a batch of two, a failure, through a study file), bit for
    bit on a platform with a recording (tests/optimizer/_recorded_points.py)."""
    from tests.optimizer._recorded_points import check, core_points

    points, history = core_points(tmp_path / "r.db", policy)
    check(f"core/{policy}", points[6:])
    assert [t["info"].get("round") for t in history[6:]] == [1, 2, 3, 4]


def test_asking_past_the_budget_raises_and_records_nothing():
    opt = ckb.Optimizer([0, 0], [1, 1], budget=5, n_init=3, **FAST)
    assert opt.ask(4).shape == (4, 2)
    assert opt.ask(3).shape == (1, 2)  # the one trial left
    assert opt.metrics()["remaining"] == 0
    before = _snapshot(opt)
    with pytest.raises(ckb.BudgetExhaustedError, match="budget of 5 evaluations is used"):
        opt.ask()
    with pytest.raises(ckb.BudgetExhaustedError):
        opt.ask(2)
    assert _snapshot(opt) == before
    for t in opt.history():  # the pending trials are still answerable, and an unasked result is kept
        opt.tell(t["x"], *problem(t["x"]))
    n = opt.tell([0.5, 0.5], *problem([0.5, 0.5]))
    assert n == 5 and opt.history()[5]["source"] == "user" and opt.metrics()["evaluations"] == 6


def _digest(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_load_of_a_missing_file_is_an_error_and_creates_nothing(tmp_path):
    with pytest.raises(StudyFileError, match=r"no study file at '.*typo.db'.*nothing was created"):
        ckb.Optimizer.load(tmp_path / "typo.db", "pump")
    assert list(tmp_path.iterdir()) == []


def test_files_that_are_not_ckb_studies_are_refused_unchanged(tmp_path):
    import sqlite3

    foreign = tmp_path / "other.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE trials(id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    text = tmp_path / "notes.db"
    text.write_text("not a database\n" * 100)
    before = {p: _digest(p) for p in (foreign, text)}
    with pytest.raises(StudyFileError, match="other.db is not a ckb study file"):
        ckb.Optimizer([0, 0], [1, 1], storage=foreign, study_name="pump")
    with pytest.raises(StudyFileError, match="other.db is not a ckb study file"):
        ckb.Optimizer.load(foreign, "pump")
    with pytest.raises(StudyFileError, match="notes.db is not a SQLite database"):
        ckb.Optimizer([0, 0], [1, 1], storage=text)
    with pytest.raises(StudyFileError, match="notes.db is not a SQLite database"):
        ckb.Optimizer.load(text, "pump")
    assert {p: _digest(p) for p in before} == before


def test_a_truncated_or_stateless_study_file_is_a_clear_error(tmp_path):
    """A file cut short gave a raw sqlite3.DatabaseError (or a JSONDecodeError), and a study without its
    state rows a TypeError from core.py."""
    import sqlite3

    path = tmp_path / "s.db"
    opt = ckb.Optimizer([0, 0], [1, 1], budget=6, n_init=2, storage=path, study_name="pump", **FAST)
    run(opt, 3)
    full = _snapshot(opt)
    opt.close()
    data = path.read_bytes()
    errors = 0
    for keep in (0.3, 0.5, 0.7, 0.8, 0.9, 0.95):
        cut = tmp_path / f"cut{keep}.db"
        cut.write_bytes(data[: int(len(data) * keep)])
        try:
            loaded = ckb.Optimizer.load(cut, "pump")
        except StudyFileError as exc:
            assert re.search(f"cut{keep}.db .*(truncated or damaged|not a SQLite)", str(exc)), exc
            errors += 1
        else:  # only free pages were cut: every value is intact
            assert _snapshot(loaded) == full
            loaded.close()
    assert errors >= 3
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM policy_states")
    with pytest.raises(StudyFileError, match="study 'pump' in .* has no stored optimizer state"):
        ckb.Optimizer.load(path, "pump")


def _record_refits(monkeypatch) -> list[bool]:
    """Whether each ask's model build refitted the hyperparameters."""
    import ckb.optimizer.models as models

    fits: list[bool] = []
    original = models.Models

    class Recording(original):
        def __init__(self, *args, fit=True, **kwargs):
            fits.append(bool(fit))
            super().__init__(*args, fit=fit, **kwargs)

    monkeypatch.setattr(models, "Models", Recording)
    return fits


@pytest.mark.parametrize(
    "policy, refit_every, expected",
    [
        ("pcei", None, [True, False, True, False]),  # the policy's interval: every second result
        ("slack-cei", None, [True, False, True, False]),
        ("cei", None, [True, True, True, True]),
        ("pcei", 1, [True, True, True, True]),  # the user's interval wins
        ("cei", 3, [True, False, False, True]),
    ],
)
def test_refit_every_defaults_to_the_policys_interval(monkeypatch, policy, refit_every, expected):
    fits = _record_refits(monkeypatch)
    opt = ckb.Optimizer(
        [0, 0], [1, 1], m=1, budget=8, n_init=3, policy=policy, refit_every=refit_every, **FAST
    )
    run(opt, 7)
    assert fits == expected


@pytest.mark.parametrize(
    "policy, max_line_search, expected",
    [
        ("pcei", None, 10),  # the policy's own: its score jumps at the admissible set's edge
        ("slack-cei", None, None),  # SciPy's 20, as its runs were measured
        ("cei", None, None),
        ("pcei", 20, 20),  # the user's value wins
        ("cei", 7, 7),
    ],
)
def test_max_line_search_defaults_to_the_policys_and_reaches_the_maximizer(
    monkeypatch, tmp_path, policy, max_line_search, expected
):
    from ckb.optimizer import acquisition

    seen = []
    init = acquisition.Maximizer.__init__

    def recording(self, *args, **kwargs):
        seen.append(kwargs.get("max_line_search"))
        init(self, *args, **kwargs)

    monkeypatch.setattr(acquisition.Maximizer, "__init__", recording)
    path = tmp_path / "s.db"
    kw = {"budget": 8, "n_init": 3, "policy": policy, "storage": path, **FAST}
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, max_line_search=max_line_search, **kw)
    run(opt, 5)
    assert seen and set(seen) == {expected}
    opt.close()
    # stored with the study's run-time settings; a resume keeps it, and may override it
    for options, value in (({}, max_line_search), ({"max_line_search": 3}, 3)):
        resumed = ckb.Optimizer.load(path, "study", **options)
        assert resumed.max_line_search == value
        resumed.close()
