"""CKBSampler (ckb.integrations.optuna) against real Optuna: parity with ckb.Optimizer, an end-to-end
constrained study, int/log/categorical parameters, RDB resume, n_jobs=2 and two processes on one SQLite
file (each decision and each result counted once)."""

from __future__ import annotations

import itertools
import math
import os
import time

import numpy as np
import pytest

optuna = pytest.importorskip("optuna")
pytest.importorskip("botorch")

import ckb  # noqa: E402
from ckb.errors import InvalidInputError  # noqa: E402
from ckb.integrations.optuna import CLAIM_KEY, CKBSampler, DecisionTimeoutError  # noqa: E402
from ckb.optimizer import initial_design  # noqa: E402
from ckb.optimizer.policies import GOAL_POLICIES, OPTIMIZER_POLICIES  # noqa: E402
from ckb.problems.constrained_benchmarks import GARDNER1_F_STAR, gardner1_f, gardner1_g  # noqa: E402
from tests.processes import preloaded_context  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.WARNING)

#: small maximizer settings: the tests check bookkeeping and parity, not the last digit of an optimum
FAST = {"num_restarts": 3, "raw_samples": 64, "maxiter": 50}


def _constraints(trial):
    return trial.user_attrs["g"]


def _active(x):
    """Maximize -(x0 - 0.3)^2 - (x1 - 0.6)^2 s.t. x0 + x1 - 0.6 <= 0 (active at the optimum (0.15, 0.45)):
    the duals, Q and multipliers move."""
    return float(-((x[0] - 0.3) ** 2) - (x[1] - 0.6) ** 2), [float(x[0] + x[1] - 0.6)]


def _active_objective(trial, sleep=0.0):
    x = [trial.suggest_float("x0", 0.0, 1.0), trial.suggest_float("x1", 0.0, 1.0)]
    f, g = _active(x)
    trial.set_user_attr("g", g)
    if sleep:
        time.sleep(sleep)
    return f


def _gardner1(trial):
    x = np.array([[trial.suggest_float("x0", 0.0, 6.0), trial.suggest_float("x1", 0.0, 6.0)]])
    trial.set_user_attr("g", gardner1_g(x)[0].tolist())
    return float(gardner1_f(x)[0])


def _check_chain(sampler, study, policy="ckb-ucb", horizon=None):
    """Each decision counted once: the chain is linear, rounds are 1..n, every complete result of a
    decision is folded exactly once, and (primal-dual) each dual step is applied exactly once, in order
    (none in the search for a first feasible point, phase 0)."""
    dec = sampler.decisions(study)
    assert [d["prev"] for d in dec] == [None] + [d["number"] for d in dec[:-1]]
    assert [d["info"]["round"] for d in dec] == list(range(1, len(dec) + 1))
    folded = [k for d in dec for k in d["folded"]]
    assert len(folded) == len(set(folded))
    mine = {d["number"] for d in dec}
    complete = {t.number for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE}
    assert set(folded) <= mine & complete
    state = sampler.policy_state(study)
    assert state["decisions"] == len(dec) and state["state"]["t"] == len(dec)
    assert state["observed"] == len(mine & complete)
    if policy == "ckb-ucb":
        pd = OPTIMIZER_POLICIES.get("ckb-ucb")(1, horizon)
        for a, b in itertools.pairwise(dec):
            if a["info"].get("phase") == 0.0:
                assert b["info"]["dual"] == a["info"]["dual"]
                continue
            step = np.clip(a["info"]["dual"] + (a["info"]["g_bar"] + pd.slack) / pd.V, 0.0, pd.rho)
            assert b["info"]["dual"] == pytest.approx(step, abs=1e-12)
        assert any("g_bar" in d["info"] for d in dec)  # some dual steps were checked
    return dec


# ------------------------------------------------------------------------------------------ parity
@pytest.mark.parametrize(("policy", "params"), [("ckb-ucb", {}), ("penalty-noisy", {"S": 2}), ("pcei", {})])
def test_a_sequential_study_makes_ckb_optimizers_decisions_bit_for_bit(policy, params):
    budget, seed = 12, 4
    opt = ckb.Optimizer([0, 0], [1, 1], 1, policy=policy, budget=budget, seed=seed, **FAST, **params)
    X = []
    for _ in range(budget):
        x = opt.ask()
        opt.tell(x, *_active(x))
        X.append(x)
    sampler = CKBSampler(
        policy=policy, constraints_func=_constraints, seed=seed, n_trials=budget, **FAST, **params
    )
    study = optuna.create_study(sampler=sampler, direction="maximize")
    for p in initial_design([0, 0], [1, 1], 6, seed):  # the optimizer's design
        study.enqueue_trial({"x0": p[0], "x1": p[1]})
    study.optimize(_active_objective, n_trials=budget)
    Y = [[t.params["x0"], t.params["x1"]] for t in study.trials]
    np.testing.assert_array_equal(np.array(X), np.array(Y))
    state = sampler.policy_state(study)
    assert state["internals"] == opt.metrics()["policy_state"]
    if policy == "ckb-ucb":
        assert state["internals"]["dual"] > 0  # the duals moved: the comparison is not of zeros
    if policy == "penalty-noisy":
        assert state["internals"]["epoch"] >= 2
    opt.close()


def _heavy(x):
    """The same objective, the constraint exp(12 (x0 + x1 - 0.6)) - 1: its values span -1 to 2e7, so
    ``outcome_transform="auto"`` gives it the log map (beyond 30 robust scales of the design's values)."""
    return _active(x)[0], [float(np.expm1(12.0 * (x[0] + x[1] - 0.6)))]


def _same_trials(policy, fn, seed, minimize=False, budget=12, **params):
    """``ckb.Optimizer`` and a ``CKBSampler`` study (the optimizer's design enqueued) on ``fn``: asserts
    the same trials bit for bit and the same units at the last decision; returns those units."""
    opt = ckb.Optimizer(
        [0, 0], [1, 1], 1, policy=policy, budget=budget, seed=seed, minimize=minimize, **FAST, **params
    )
    X = []
    for _ in range(budget):
        x = opt.ask()
        opt.tell(x, *fn(x))
        X.append(x)
    units = opt.units().describe()
    opt.close()
    sampler = CKBSampler(
        policy=policy, constraints_func=_constraints, seed=seed, n_trials=budget, **FAST, **params
    )
    study = optuna.create_study(sampler=sampler, direction="minimize" if minimize else "maximize")
    for p in initial_design([0, 0], [1, 1], 6, seed):
        study.enqueue_trial({"x0": p[0], "x1": p[1]})

    def objective(trial):
        x = [trial.suggest_float("x0", 0.0, 1.0), trial.suggest_float("x1", 0.0, 1.0)]
        f, g = fn(x)
        trial.set_user_attr("g", g)
        return f

    study.optimize(objective, n_trials=budget)
    np.testing.assert_array_equal(
        np.array(X), np.array([[t.params["x0"], t.params["x1"]] for t in study.trials])
    )
    assert sampler.decisions(study)[-1]["info"]["units"] == units
    return units


@pytest.mark.parametrize("params", [{}, {"exact": True}, {"outcome_transform": "rms"}])
def test_the_sampler_models_in_the_optimizers_units_on_a_heavy_tailed_constraint(params):
    """The optimizer's outcome units (the log map of a heavy constraint, chosen by ``"auto"``), and its
    ``exact`` declaration: the same trials bit for bit (the sampler used plain RMS units before)."""
    units = _same_trials("pcei", _heavy, 2, **params)
    assert units["constraints"] == (["rms"] if params.get("outcome_transform") == "rms" else ["bilog"])


def _spanning(x):
    """A positive cost spanning five decades, minimized, s.t. x0 + x1 <= 1.5: slack-cei models it by its
    log under ``"auto"`` (``objective_log``)."""
    return float(1e-3 * 10.0 ** (5.0 * x[0] * x[1])), [float(x[0] + x[1] - 1.5)]


def test_the_sampler_models_a_spanning_objective_by_its_log_for_slack_cei_as_the_optimizer_does():
    assert _same_trials("slack-cei", _spanning, 1, minimize=True)["objective"] == "log"


def test_a_study_resumed_with_other_units_is_refused_and_a_study_from_before_units_means_rms(tmp_path):
    _run(tmp_path / "u.db", 8, {"policy": "pcei", **FAST})
    with pytest.raises(
        InvalidInputError, match="outcome_transform='auto'; this sampler has outcome_transform='rms'"
    ):
        _run(tmp_path / "u.db", 9, {"policy": "pcei", "outcome_transform": "rms", **FAST})
    with pytest.raises(InvalidInputError, match="outcome_transform must be one of"):
        CKBSampler(outcome_transform="log")
    with pytest.raises(InvalidInputError, match="exact must be true or false"):
        CKBSampler(exact="yes")

    # a study whose sampler settings predate the option was run in RMS units: it resumes with those
    def before_units(spec):
        del spec["outcome_transform"], spec["exact"]

    _edit_sampler_spec(tmp_path / "u.db", before_units)
    _run(tmp_path / "u.db", 3, {"policy": "pcei", "outcome_transform": "rms", **FAST})
    with pytest.raises(
        InvalidInputError, match="outcome_transform='rms'; this sampler has outcome_transform='auto'"
    ):
        _run(tmp_path / "u.db", 10, {"policy": "pcei", **FAST})


def test_a_study_stored_with_auto_before_the_bound_map_resumes_with_its_units(tmp_path):
    """A sampler spec stored with "auto" and no units version was decided without the bound map:
    it resumes with "auto-no-bounds" and refuses the "auto" of today."""
    _run(tmp_path / "b.db", 8, {"policy": "pcei", **FAST})

    def before_bound_map(spec):
        assert spec["outcome_transform"] == "auto" and spec["units"] == 2
        del spec["units"]

    _edit_sampler_spec(tmp_path / "b.db", before_bound_map)
    with pytest.raises(
        InvalidInputError,
        match="outcome_transform='auto-no-bounds'; this sampler has outcome_transform='auto'",
    ):
        _run(tmp_path / "b.db", 9, {"policy": "pcei", **FAST})
    _, study = _run(tmp_path / "b.db", 3, {"policy": "pcei", "outcome_transform": "auto-no-bounds", **FAST})
    assert sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials) == 8 + 3
    # a rule that sees the former units under today's "auto" (bound_map = False) resumes with "auto"
    _run(tmp_path / "c.db", 8, {"policy": "ckb-ucb", "n_trials": 10, **FAST})
    _edit_sampler_spec(tmp_path / "c.db", before_bound_map)
    _, study = _run(tmp_path / "c.db", 2, {"policy": "ckb-ucb", "n_trials": 10, **FAST})
    assert sum(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials) == 8 + 2


# -------------------------------------------------------------------------------------- end to end
def test_gardner1_end_to_end_finds_a_feasible_point_near_the_optimum():
    sampler = CKBSampler(constraints_func=_constraints, seed=0, **FAST)  # the best-feasible goal's policy
    study = optuna.create_study(sampler=sampler, direction="minimize")
    study.optimize(_gardner1, n_trials=25)
    feasible = [t for t in study.trials if t.user_attrs["g"][0] <= 0]
    best = min(t.value for t in feasible)
    gap = (best - GARDNER1_F_STAR) / abs(GARDNER1_F_STAR)
    assert gap < 0.02  # the benchmark's "solved"
    # trials 1..5 are the optimizer's Sobol design (trial 0 has no search space yet: drawn uniformly)
    design = initial_design([0, 0], [6, 6], 6, 0)
    for t in study.trials[1:6]:
        assert [t.params["x0"], t.params["x1"]] == pytest.approx(design[t.number].tolist(), abs=1e-12)
    assert sampler.policy_name == GOAL_POLICIES["best-feasible"]
    _check_chain(sampler, study, sampler.policy_name)


def test_constraints_set_on_the_trial_work_without_constraints_func():
    def objective(trial):
        x = [trial.suggest_float("x0", 0.0, 1.0), trial.suggest_float("x1", 0.0, 1.0)]
        f, g = _active(x)
        trial.set_constraint("sum", g[0])
        return f

    sampler = CKBSampler(policy="config", seed=1, **FAST)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(objective, n_trials=9)
    assert len(sampler.decisions(study)) == 3


def test_no_constraints_is_a_clear_error():
    sampler = CKBSampler(policy="config", seed=1, **FAST)
    study = optuna.create_study(sampler=sampler)
    with pytest.raises(InvalidInputError, match="completed without constraint values.*constraints_func"):
        study.optimize(lambda t: t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1), n_trials=8)


# ------------------------------------------------------------------------------------- parameters
def test_int_step_and_log_parameters_are_rounded_and_modelled_in_log_space():
    def objective(trial):
        lr = trial.suggest_float("lr", 1e-4, 1.0, log=True)
        n = trial.suggest_int("n", 1, 64, log=True)
        k = trial.suggest_int("k", 0, 10, step=2)
        w = trial.suggest_float("w", 0.0, 1.0, step=0.25)
        trial.set_user_attr("g", [k - 6.0])  # feasible: k <= 6
        return -((math.log10(lr) + 2) ** 2) - (math.log2(n) - 3) ** 2 - (k - 8) ** 2 - (w - 0.5) ** 2

    seed = 2
    sampler = CKBSampler(policy="config", constraints_func=_constraints, seed=seed, **FAST)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(objective, n_trials=16)
    for t in study.trials:
        assert isinstance(t.params["n"], int) and isinstance(t.params["k"], int)
        assert 1 <= t.params["n"] <= 64 and t.params["k"] in range(0, 11, 2)
        assert t.params["w"] in (0.0, 0.25, 0.5, 0.75, 1.0) and 1e-4 <= t.params["lr"] <= 1.0
    # the design lives in the log-scaled unit cube (names sorted: k, lr, n, w), rounded on the grids
    U = initial_design(np.zeros(4), np.ones(4), 10, seed)
    for t in study.trials[1:10]:
        u = U[t.number]
        assert t.params["lr"] == pytest.approx(math.exp(math.log(1e-4) * (1 - u[1])), rel=1e-12)
        assert t.params["n"] == round(math.exp(u[2] * math.log(64)))
        assert t.params["k"] == 2 * round(5 * u[0])
    dec = sampler.decisions(study)
    assert len(dec) == 6
    for d in dec:  # the recorded point is the rounded one, in the log-scaled cube
        p = d["params"]
        assert p == study.trials[d["number"]].params
        lr_unit = (math.log(p["lr"]) - math.log(1e-4)) / -math.log(1e-4)
        assert d["x"] == pytest.approx(
            [p["k"] / 10, lr_unit, math.log(p["n"]) / math.log(64), p["w"]], abs=1e-12
        )
    best = max((t for t in study.trials if t.params["k"] <= 6), key=lambda t: t.value)
    assert best.params["k"] == 6  # the constrained optimum of k (the objective wants 8)


def test_a_categorical_parameter_is_an_error_naming_it_or_drawn_independently():
    def objective(trial):
        x = trial.suggest_float("x", 0.0, 1.0)
        kind = trial.suggest_categorical("kind", ["a", "b"])
        trial.set_user_attr("g", [x - 0.7])
        return x + (0.1 if kind == "a" else 0.0)

    study = optuna.create_study(
        sampler=CKBSampler(policy="config", constraints_func=_constraints), direction="maximize"
    )
    with pytest.raises(InvalidInputError, match=r"'kind' is categorical \['a', 'b'\]"):
        study.optimize(objective, n_trials=3)
    sampler = CKBSampler(policy="config", constraints_func=_constraints, categorical="independent", **FAST)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(objective, n_trials=7)
    assert {t.params["kind"] for t in study.trials} <= {"a", "b"}
    assert [d["number"] for d in sampler.decisions(study)] == [4, 5, 6]  # x from the policy (2d + 2 = 4)
    assert all(set(d["params"]) == {"x"} for d in sampler.decisions(study))


# ------------------------------------------------------------------------------------- bad input
def test_bad_settings_are_one_line_errors():
    with pytest.raises(Exception, match="Did you mean 'config'"):
        CKBSampler(policy="confi")
    with pytest.raises(
        InvalidInputError,
        match="'kapa' is neither a parameter of CKBSampler nor a constant of policy 'pcei'. Did you mean 'kappa'",
    ):
        CKBSampler(policy="pcei", kapa=1.0)
    with pytest.raises(InvalidInputError, match="pass n_trials="):
        CKBSampler(policy="ckb-ucb")
    CKBSampler(policy="ckb-ucb", V=2.0)  # V given: the horizon no longer matters
    with pytest.raises(InvalidInputError, match="rounds left; pass n_trials="):
        CKBSampler(goal="cumulative")  # slack-cei spreads the running sum's slack over the asks left
    CKBSampler(goal="cumulative", n_trials=30)
    with pytest.raises(InvalidInputError, match="categorical must be"):
        CKBSampler(categorical="one-hot")
    with pytest.raises(InvalidInputError, match="violation_budget"):
        CKBSampler(violation_budget=-1)
    with pytest.raises(InvalidInputError, match="goal"):
        CKBSampler(goal="best")
    with pytest.raises(InvalidInputError, match="num_restarts must be >= 1, got 0"):
        CKBSampler(num_restarts=0)


def test_search_options_are_the_optimizers_and_never_reach_the_policy():
    s = CKBSampler(policy="pcei", num_restarts=3, torch_threads=2, kappa=1.5)
    assert (s.num_restarts, s.torch_threads, s.raw_samples, s.refit_every) == (3, 2, 256, None)
    assert s.policy_params == {"kappa": 1.5}
    study = optuna.create_study(sampler=CKBSampler(), directions=["minimize", "minimize"])
    with pytest.raises(InvalidInputError, match="one objective"):
        study.optimize(lambda t: (t.suggest_float("x", 0, 1), 0.0), n_trials=3)


def test_the_violation_budget_left_is_the_budget_minus_what_the_trials_after_the_design_spent():
    budget = 0.3
    sampler = CKBSampler(
        policy="pcei", constraints_func=_constraints, violation_budget=budget, n_trials=12, **FAST
    )
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(_active_objective, n_trials=12)
    g = [t.user_attrs["g"][0] for t in study.trials]
    for d in sampler.decisions(study):  # sequential: every earlier trial is complete at the decision
        spent = sum(max(v, 0.0) for v in g[6 : d["number"]])
        # pcei's pace: each decision may spend half of what is left
        assert d["info"]["allowance"] == pytest.approx(0.5 * max(budget - spent, 0.0), abs=1e-12)


# ----------------------------------------------------------------------------------- storage, state
def _edit_sampler_spec(path, edit):
    """Rewrite the CKBSampler settings stored with study "s" in ``path`` by ``edit(spec)`` (in place): the
    study as an older sampler stored it."""
    from ckb.integrations.optuna import SPEC_KEY
    from ckb.studies.storage import dumps, loads

    storage = optuna.storages.RDBStorage(f"sqlite:///{path}")
    sid = storage.get_study_id_from_name("s")
    spec = loads(storage.get_study_system_attrs(sid)[SPEC_KEY])
    edit(spec)
    storage.set_study_system_attr(sid, SPEC_KEY, dumps(spec))


def _run(path, n, sampler_kw, name="s"):
    sampler = CKBSampler(constraints_func=_constraints, **sampler_kw)
    study = optuna.create_study(
        sampler=sampler,
        storage=f"sqlite:///{path}",
        study_name=name,
        load_if_exists=True,
        direction="maximize",
    )
    study.optimize(_active_objective, n_trials=n)
    return sampler, study


def test_a_resumed_rdb_study_continues_the_stored_state_exactly(tmp_path):
    kw = {"policy": "penalty-noisy", "S": 2, "n_trials": 13, "seed": 5, **FAST}
    s_full, full = _run(tmp_path / "full.db", 13, kw)
    _run(tmp_path / "split.db", 8, kw)
    s_rest, rest = _run(tmp_path / "split.db", 5, kw)  # a new sampler and process state: only the file
    assert [t.params for t in rest.trials] == [t.params for t in full.trials]
    a, b = s_full.policy_state(full), s_rest.policy_state(rest)
    assert a == b and a["internals"]["epoch"] >= 3  # kappa and the epoch sums continued, not reset
    _check_chain(s_rest, rest, "penalty-noisy")
    with pytest.raises(InvalidInputError, match="was run by CKBSampler with seed=5; this sampler has seed=6"):
        _run(tmp_path / "split.db", 1, {**kw, "seed": 6})


def test_a_resumed_study_keeps_the_policy_constants_it_was_started_with(monkeypatch, tmp_path):
    """A study started when pcei's default exploration width was 1 resumes at width 1 after it became 0
    (this version's default), as an uninterrupted run at width 1 (whose last four asks differ from the
    default's), with one warning naming the constant."""
    from ckb.rules.feasible_ei import PessimisticCEIRule

    kw = {"policy": "pcei", "seed": 3, **FAST}
    full_sampler, full = _run(tmp_path / "full.db", 12, {**kw, "explore_kappa": 1.0})
    with monkeypatch.context() as patch:
        patch.setitem(PessimisticCEIRule.defaults, "explore_kappa", 1.0)
        _run(tmp_path / "split.db", 8, kw)
    with pytest.warns(
        UserWarning, match=r"resumes with the pcei constants .*: explore_kappa=1.0 \(now 0.0\)\.$"
    ) as seen:
        sampler, rest = _run(tmp_path / "split.db", 4, kw)
    assert len([w for w in seen if "resumes with" in str(w.message)]) == 1
    assert [t.params for t in rest.trials] == [t.params for t in full.trials]
    # each study inspected by its own sampler: another one's settings (explore_kappa given) are refused
    assert sampler.policy_state(rest)["state"] == full_sampler.policy_state(full)["state"]


@pytest.mark.parametrize(
    "edit, match",
    [
        ({"retired": 3}, r"constant 'retired' = 3, which this version of ckb does not have"),
        ({"budget_certify": "sometimes"}, r"constants this version of ckb does not accept \(.*sometimes"),
    ],
)
def test_a_stored_policy_constant_this_version_cannot_take_is_named(tmp_path, edit, match):
    _run(tmp_path / "k.db", 7, {"policy": "pcei", **FAST})
    _edit_sampler_spec(tmp_path / "k.db", lambda spec: spec["policy_constants"].update(edit))
    with pytest.raises(InvalidInputError, match=match):
        _run(tmp_path / "k.db", 1, {"policy": "pcei", **FAST})


def test_n_jobs_2_decides_one_at_a_time_with_the_other_trial_pending():
    sampler = CKBSampler(policy="ckb-ucb", constraints_func=_constraints, n_trials=16, seed=3, **FAST)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(lambda t: _active_objective(t, sleep=0.3), n_trials=16, n_jobs=2)
    assert len(study.trials) == 16
    dec = _check_chain(sampler, study, "ckb-ucb", horizon=10)
    assert max(d["info"]["pending"] for d in dec) >= 1  # decided while the other job evaluated
    points = {tuple(t.params.values()) for t in study.trials}
    assert len(points) == 16


def _process(path, n, log):
    """One of the two processes sharing the study file (a spawned process: imports what it needs)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = CKBSampler(policy="ckb-ucb", constraints_func=_constraints, n_trials=20, seed=7, **FAST)
    study = optuna.load_study(study_name="two", storage=f"sqlite:///{path}", sampler=sampler)

    def objective(trial):
        with open(log, "a") as fh:
            fh.write(f"{trial.number} {os.getpid()}\n")
        return _active_objective(trial, sleep=0.2)

    study.optimize(objective, n_trials=n)


@pytest.mark.slow
def test_two_processes_on_one_sqlite_file_count_each_decision_once(tmp_path):
    path, log = tmp_path / "two.db", tmp_path / "evaluations.txt"
    optuna.create_study(storage=f"sqlite:///{path}", study_name="two", direction="maximize")
    ctx = preloaded_context("optuna", __name__)
    procs = [ctx.Process(target=_process, args=(path, 10, log)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0]
    sampler = CKBSampler(policy="ckb-ucb", constraints_func=_constraints, n_trials=20, seed=7)
    study = optuna.load_study(study_name="two", storage=f"sqlite:///{path}", sampler=sampler)
    assert len(study.trials) == 20
    assert all(t.state == optuna.trial.TrialState.COMPLETE for t in study.trials)
    evaluated = [int(line.split()[0]) for line in log.read_text().splitlines()]
    assert sorted(evaluated) == list(range(20))  # no trial evaluated twice
    dec = _check_chain(sampler, study, "ckb-ucb", horizon=14)
    assert len(dec) == 14 and len({d["pid"] for d in dec}) == 2  # both processes decided
    assert len({tuple(t.params.values()) for t in study.trials}) == 20


def test_a_dead_claim_is_skipped_and_a_live_foreign_one_times_out():
    sampler = CKBSampler(policy="config", constraints_func=_constraints, decision_timeout=0.3, **FAST)
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(_active_objective, n_trials=6)
    # a running trial whose claim belongs to a process of this host that no longer exists
    stale = study.ask()
    dead = {"pid": 2**22 + 12345, "host": __import__("socket").gethostname(), "token": "x"}
    study._storage.set_trial_system_attr(stale._trial_id, CLAIM_KEY, {**dead, "choosing": False, "ticket": 1})
    study.optimize(_active_objective, n_trials=1)
    assert sampler.decisions(study)[-1]["number"] == 7
    # a claim of another host, never released: the decision waits decision_timeout, then says so
    other = study.ask()
    alien = {"pid": 1, "host": "another-host", "token": "", "choosing": False, "ticket": 0}
    study._storage.set_trial_system_attr(other._trial_id, CLAIM_KEY, alien)
    with pytest.raises(DecisionTimeoutError, match=f"waited 0.3 s for trial {other.number}'s decision"):
        study.optimize(_active_objective, n_trials=1)


def test_the_policy_sees_the_whole_violation_budget_per_constraint(monkeypatch):
    """pcei certifies the constraints whose budget is zero (ckb.rules.feasible_ei), so the sampler hands
    the user's whole budget, broadcast per constraint, to each decision, as ckb.Optimizer does."""
    from ckb.optimizer.policies.pcei import PessimisticCEI

    seen, decide = [], PessimisticCEI.decide

    def spy(self, ctx):
        seen.append(ctx.violation_budget)
        return decide(self, ctx)

    monkeypatch.setattr(PessimisticCEI, "decide", spy)
    sampler = CKBSampler(
        policy="pcei", constraints_func=_constraints, violation_budget=0.0, n_trials=8, **FAST
    )
    study = optuna.create_study(sampler=sampler, direction="maximize")
    study.optimize(_active_objective, n_trials=8)
    assert len(seen) == 2 and all(np.array_equal(b, [0.0]) for b in seen)
