"""ckb.Optimizer across processes: kill -9 in the middle of a run, and workers sharing one study file."""

import os
import signal
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ckb
from ckb.optimizer import initial_design
from tests.processes import preloaded_context

_WORKER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import ckb

    path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    budget = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    opt = ckb.Optimizer([0, 0], [1, 1], m=1, policy="penalty-noisy", budget=budget, n_init=3, S=2,
                        storage=path, study_name=name, refit_every=4, num_restarts=2, raw_samples=32, maxiter=50)
    for i in range(n):
        x = opt.ask()
        opt.tell(x, float(-((x[0] - 0.3) ** 2) - (x[1] - 0.6) ** 2), [float(x[0] + x[1] - 1.0)])
        print(i, flush=True)
    """
)


def _problem(x):
    return float(-((x[0] - 0.3) ** 2) - (x[1] - 0.6) ** 2), [float(x[0] + x[1] - 1.0)]


def _check_consistent(path, name):
    """Every told value intact, numbers dense, one design point per index, the policy state in step
    with the trials (one round per policy ask, one epoch step per policy result)."""
    opt = ckb.Optimizer.load(path, name)
    h = opt.history()
    assert [t["number"] for t in h] == list(range(len(h)))
    for t in h:
        if t["state"] == "complete":
            y, g = _problem(t["x"])
            assert t["objective"] == y and t["constraints"].tolist() == g
    design = [t for t in h if t["source"] == "init"]
    assert [t["info"]["design_index"] for t in design] == list(range(len(design)))
    np.testing.assert_array_equal(
        np.stack([t["x"] for t in design]), initial_design([0, 0], [1, 1], len(design), 0)
    )
    policy = [t for t in h if t["source"] == "policy"]
    assert sorted(t["info"]["round"] for t in policy) == list(range(1, len(policy) + 1))
    _, state = opt.store.latest_policy_state(name)
    p = state["policy"]
    assert p["t"] == len(policy)
    done = sum(t["state"] == "complete" for t in policy)
    assert (p["epoch"] - 1) * 2 + p["in_epoch"] == done
    return opt


def test_kill_9_mid_run_then_resume_with_every_result_and_the_pending_ask(tmp_path):
    path = tmp_path / "crash.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(path), "crash", "1000"], stdout=subprocess.PIPE, text=True
    )
    told = 0
    while told < 6:  # three design points and three policy rounds, then kill -9 wherever it is
        if proc.stdout.readline() == "":
            break
        told += 1
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert told == 6 and proc.returncode == -signal.SIGKILL
    opt = _check_consistent(path, "crash")
    h = opt.history()
    assert sum(t["state"] == "complete" for t in h) >= 6
    pending = [t for t in h if t["state"] == "pending"]
    assert len(pending) <= 1
    assert [p["trial"] for p in opt.pending()] == [t["number"] for t in pending]
    x = opt.ask()  # a pending point conditions the next ask away from it
    for t in pending:
        assert np.max(np.abs(x - t["x"])) > 1e-6
        opt.tell(t["x"], *_problem(t["x"]))  # the pending ask is still answerable after the crash
    opt.tell(x, *_problem(x))
    assert opt.history()[-1]["number"] == len(h)
    _check_consistent(path, "crash")


@pytest.mark.parametrize("workers", [2])
def test_concurrent_workers_share_one_study(tmp_path, workers):
    path = tmp_path / "shared.db"
    procs = [
        subprocess.Popen([sys.executable, "-c", _WORKER, str(path), "shared", "3"], stdout=subprocess.DEVNULL)
        for _ in range(workers)
    ]
    for p in procs:
        p.wait(timeout=300)
        assert p.returncode == 0
    opt = _check_consistent(path, "shared")
    h = opt.history()
    assert len(h) == 3 * workers and all(t["state"] == "complete" for t in h)
    assert sum(t["source"] == "init" for t in h) == 3


def _budget_worker(path, name, barrier, results, wid):
    """A worker of the loop the budget is made for: ask until BudgetExhaustedError, tell each result."""
    import ckb

    opt = ckb.Optimizer.load(path, name)
    barrier.wait(timeout=600)
    got = []
    while True:
        try:
            x = opt.ask()
        except ckb.BudgetExhaustedError:
            break
        got.append(opt.tell(x, *_problem(x)))
    opt.close()
    results.put((wid, got))


def test_six_workers_use_the_budget_exactly_and_share_it_fairly(tmp_path):
    """Six processes on one study with instant evaluations (where SQLite's unfair lock starved all but one
    or two workers, and the budget check outside the lock let them overshoot): exactly ``budget`` trials,
    no trial asked twice, and no worker gets more than twice its share."""
    path, workers, budget = str(tmp_path / "budget.db"), 6, 36
    ckb.Optimizer(
        [0, 0],
        [1, 1],
        m=1,
        policy="penalty-noisy",
        budget=budget,
        n_init=3,
        S=2,
        storage=path,
        study_name="shared",
        refit_every=4,
        num_restarts=2,
        raw_samples=32,
        maxiter=50,
    ).close()
    ctx = preloaded_context(__name__)
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    procs = [
        ctx.Process(target=_budget_worker, args=(path, "shared", barrier, results, w)) for w in range(workers)
    ]
    for p in procs:
        p.start()
    got = dict(results.get(timeout=900) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    numbers = sorted(n for g in got.values() for n in g)
    assert numbers == list(range(budget))  # every trial told once, by the worker that asked it
    opt = _check_consistent(path, "shared")
    h = opt.history()
    assert len(h) == budget and all(t["state"] == "complete" for t in h)
    assert len({tuple(t["x"]) for t in h}) == budget  # no point asked twice
    assert opt.metrics()["remaining"] == 0
    share = budget / workers
    assert max(len(g) for g in got.values()) <= 2 * share, {w: len(g) for w, g in got.items()}


def test_a_worker_killed_mid_run_does_not_hold_up_the_others(tmp_path):
    """kill -9 one of three workers (maybe while it waits for its turn, or during it): its ticket is
    skipped, the others finish, and the study keeps every told result and at most its one pending ask."""
    path = tmp_path / "killed.db"
    victim = subprocess.Popen(
        # a budget the victim cannot use up alone while the others start (imports take seconds on a loaded
        # machine: with 40, a CI run saw the victim spend it all and the others end in BudgetExhaustedError)
        [sys.executable, "-c", _WORKER, str(path), "k", "1000", "400"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert victim.stdout.readline() != ""  # it has created the study and told one result
    others = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), "k", "4", "400"], stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    for p in others:  # all three are asking now
        assert p.stdout.readline() != ""
    victim.stdout.readline()
    os.kill(victim.pid, signal.SIGKILL)  # right after a tell: during (or waiting for) its next turn
    victim.wait()
    for p in others:
        p.stdout.read()
        p.wait(timeout=300)
        assert p.returncode == 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        opt = _check_consistent(path, "k")
    h = opt.history()
    assert sum(t["state"] == "pending" for t in h) <= 1
    assert sum(t["state"] == "complete" for t in h) >= 2 + 2 * 4
    # the victim's pending ask, if it left one, is its own and marked as of an ended process, with a warning
    assert [p["gone"] for p in opt.pending()] in ([], [True])
    warned = [w for w in seen if "of a process on this host that has ended" in str(w.message)]
    assert len(warned) == len(opt.pending())
