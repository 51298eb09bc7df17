"""The SQLite study store: round trips, exact JSON state, bad input, kill -9 and concurrent workers."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.studies import StudyNotFoundError, StudyStorage, dumps, loads

SPEC = {"lower": [0.0, 0.0], "upper": [6.0, 6.0], "m": 2, "direction": "maximize", "policy": "rpol-ucb"}


@pytest.fixture
def store(tmp_path):
    with StudyStorage(tmp_path / "s.db") as s:
        s.create_study("demo", SPEC)
        yield s


def test_ask_tell_fail_round_trip(store):
    a, b, c = store.ask("demo", [1.0, 2.0]), store.ask("demo", [3.0, 4.0]), store.ask("demo", [5.0, 6.0])
    assert (a, b, c) == (0, 1, 2)
    store.tell("demo", 1, 0.5, [-1.0, 0.25])
    store.fail("demo", 2, "simulator crashed")
    t = store.trials("demo")
    assert [r["state"] for r in t] == ["pending", "complete", "failed"]
    np.testing.assert_array_equal(t[1]["x"], [3.0, 4.0])
    assert t[1]["objective"] == 0.5 and t[1]["constraints"].tolist() == [-1.0, 0.25]
    assert t[2]["note"] == "simulator crashed" and t[2]["objective"] is None
    assert [r["number"] for r in store.trials("demo", state="pending")] == [0]
    assert store.spec("demo") == SPEC


def test_policy_state_is_stored_exactly_without_pickle(store):
    rng = np.random.default_rng(7)
    state = {
        "t": 3,
        "rng": rng.bit_generator.state,
        "mean": rng.normal(size=5),
        "L": rng.normal(size=(3, 3)).astype(np.float32),
        "arms": np.array([1, 4, 2], dtype=np.intp),
        "beta": float("nan"),
        "nested": [{"a": np.arange(3)}, (1.5, "x")],
    }
    store.save_policy_state("demo", 1, state)
    store.save_policy_state("demo", 2, {**state, "t": 4})
    step, back = store.latest_policy_state("demo")
    assert step == 2 and back["t"] == 4
    np.testing.assert_array_equal(back["mean"], state["mean"])
    assert back["L"].dtype == np.float32 and np.array_equal(back["L"], state["L"])
    assert back["arms"].dtype == np.intp and np.isnan(back["beta"])
    assert back["rng"] == state["rng"]
    assert "pickle" not in dumps(state) and loads(dumps([1, 2])) == [1, 2]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda s: s.ask("demo", [1.0, 7.0]), "outside the box: coordinate 1"),
        (lambda s: s.ask("demo", [1.0]), "2 coordinate"),
        (lambda s: s.ask("demo", [np.nan, 1.0]), "finite"),
        (lambda s: s.tell("demo", 0, 1.0, [0.0]), "expected 2 constraint value"),
        (lambda s: s.tell("demo", 0, float("nan"), [0.0, 0.0]), "must be finite.*fail"),
        (lambda s: s.tell("demo", 9, 1.0, [0.0, 0.0]), "no trial number 9"),
        (lambda s: s.create_study("demo", SPEC), "already exists"),
        (lambda s: s.create_study("other", {"lower": [0.0], "upper": [0.0], "m": 1}), "upper > lower"),
    ],
)
def test_bad_input_is_named_and_changes_nothing(store, call, match):
    store.ask("demo", [1.0, 1.0])
    before = store.trials("demo")
    with pytest.raises(InvalidInputError, match=match):
        call(store)
    after = store.trials("demo")
    assert [(r["number"], r["state"]) for r in after] == [(r["number"], r["state"]) for r in before]


def test_unknown_study_and_double_tell(store):
    with pytest.raises(StudyNotFoundError, match="no study named 'dmeo'.*Did you mean 'demo'"):
        store.tell("dmeo", 0, 1.0, [0.0, 0.0])
    store.ask("demo", [1.0, 1.0])
    store.tell("demo", 0, 1.0, [0.0, 0.0])
    with pytest.raises(InvalidInputError, match="already complete"):
        store.fail("demo", 0)
    assert store.create_study("demo", SPEC, load_if_exists=True) == 1


_WORKER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from ckb.studies import StudyStorage
    path, name, n, delay = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    rng = np.random.default_rng(int(sys.argv[5]))
    with StudyStorage(path) as s:
        s.create_study(name, {"lower": [0.0, 0.0], "upper": [1.0, 1.0], "m": 1}, load_if_exists=True)
        for i in range(n):
            x = rng.uniform(0, 1, 2)
            k = s.ask(name, x)
            time.sleep(delay)
            s.tell(name, k, float(x.sum()), [float(x[0] - 0.5)])
            s.save_policy_state(name, k, {"x": x, "k": k})
            print(k, flush=True)
    """
)


def test_a_process_killed_mid_run_leaves_every_told_result_and_its_pending_ask(tmp_path):
    path = tmp_path / "crash.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(path), "crash", "100000", "0.002", "1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    told = 0
    while told < 40:  # wait until it has told 40 results, then kill -9 at an arbitrary moment
        if proc.stdout.readline() == "":
            break
        told += 1
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    with StudyStorage(path) as s:
        trials = s.trials("crash")
        complete = [t for t in trials if t["state"] == "complete"]
        pending = [t for t in trials if t["state"] == "pending"]
        assert len(complete) >= 40 and len(pending) <= 1
        assert [t["number"] for t in trials] == list(range(len(trials)))
        for t in complete:  # every told value is intact and consistent with its point
            assert t["objective"] == pytest.approx(t["x"].sum())
            assert t["constraints"][0] == pytest.approx(t["x"][0] - 0.5)
        step, state = s.latest_policy_state("crash")
        assert step >= 39 and state["k"] == step
        # the study continues where it stopped
        k = s.ask("crash", [0.5, 0.5])
        assert k == len(trials)


def test_concurrent_workers_share_one_file(tmp_path):
    path = tmp_path / "shared.db"
    StudyStorage(path).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(path), "shared", "40", "0.0", str(seed)],
            stdout=subprocess.DEVNULL,
        )
        for seed in range(4)
    ]
    for p in procs:
        p.wait(timeout=120)
        assert p.returncode == 0
    with StudyStorage(path) as s:
        trials = s.trials("shared")
    assert len(trials) == 160 and [t["number"] for t in trials] == list(range(160))
    assert all(t["state"] == "complete" for t in trials)


def test_atomic_block_is_one_transaction_and_rolls_back_on_error(store):
    with store.atomic():
        store.ask("demo", [1.0, 1.0], info={"source": "init", "round": 0})
        store.save_policy_state("demo", 1, {"t": 1})
    with pytest.raises(InvalidInputError), store.atomic():
        store.ask("demo", [2.0, 2.0])
        store.save_policy_state("demo", 2, {"t": 2})
        store.tell("demo", 0, float("nan"), [0.0, 0.0])  # rejected: the whole block is undone
    t = store.trials("demo")
    assert len(t) == 1 and t[0]["info"] == {"source": "init", "round": 0}
    assert store.latest_policy_state("demo") == (1, {"t": 1})


def test_files_without_the_info_column_gain_it(tmp_path):
    import sqlite3

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    old = (
        "CREATE TABLE trials(id INTEGER PRIMARY KEY, study_id INTEGER NOT NULL, number INTEGER NOT NULL, "
        "state TEXT NOT NULL, x TEXT NOT NULL, objective REAL, constraints TEXT, note TEXT, "
        "asked_at REAL NOT NULL, told_at REAL, UNIQUE(study_id, number))"
    )
    conn.execute(old)
    conn.commit()
    conn.close()
    with StudyStorage(path) as s:
        s.create_study("demo", SPEC)
        s.ask("demo", [1.0, 1.0])
        assert s.trials("demo")[0]["info"] is None
