"""The SQLite study store: round trips, exact JSON state, bad input, kill -9 and concurrent workers; files
ckb does not own (foreign, not SQLite, truncated, missing) are refused and left byte-identical; fair turns."""

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.studies import StudyBusyError, StudyFileError, StudyNotFoundError, StudyStorage, dumps, loads

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
    store.tell("demo", store.ask("demo", [1.0, 1.0]), 1.5, [0.0, 0.0], note="valve 3 replaced")
    t = store.trials("demo")
    assert t.pop()["note"] == "valve 3 replaced" and t[1]["note"] is None
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


def _old_study_file(path):
    """A study file as ckb wrote it before the ``info`` column and the ``turns`` table (schema version 1)."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        PRAGMA journal_mode=WAL;
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE studies(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, spec TEXT NOT NULL,
            created REAL NOT NULL);
        CREATE TABLE trials(id INTEGER PRIMARY KEY, study_id INTEGER NOT NULL, number INTEGER NOT NULL,
            state TEXT NOT NULL, x TEXT NOT NULL, objective REAL, constraints TEXT, note TEXT,
            asked_at REAL NOT NULL, told_at REAL, UNIQUE(study_id, number));
        CREATE TABLE policy_states(study_id INTEGER NOT NULL, step INTEGER NOT NULL, state TEXT NOT NULL,
            created REAL NOT NULL, PRIMARY KEY(study_id, step));
        INSERT INTO meta VALUES ('schema_version', '1');
        """
    )
    conn.execute("INSERT INTO studies VALUES (1, 'demo', ?, 0.0)", (dumps(SPEC),))
    conn.execute(
        "INSERT INTO trials VALUES (1, 1, 0, 'complete', '[1.0,2.0]', 0.5, '[-1.0,0.25]', NULL, 0.0, 1.0)"
    )
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_read_only_opens_never_migrate_an_old_file_and_a_writer_does(tmp_path):
    path = tmp_path / "old.db"
    _old_study_file(path)
    before = _digest(path)
    with StudyStorage(path, read_only=True) as s:
        t = s.trials("demo")
        assert t[0]["info"] is None and t[0]["constraints"].tolist() == [-1.0, 0.25]
        with pytest.raises(InvalidInputError, match="opened read-only; nothing was changed"):
            s.ask("demo", [1.0, 1.0])
    assert _digest(path) == before
    with StudyStorage(path) as s:  # a writer adds the info column and the turns table
        s.ask("demo", [1.0, 1.0], info={"source": "user"})
        assert [r["info"] for r in s.trials("demo")] == [None, {"source": "user"}]
    conn = sqlite3.connect(path)
    assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} >= {"turns"}
    conn.close()


def _foreign(path):
    """Someone else's SQLite database, with a table named like one of ckb's (rollback journal, not WAL)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE trials(id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO trials(name) VALUES ('theirs')")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("options", [{}, {"read_only": True}, {"create": False}])
def test_a_foreign_database_is_refused_and_stays_byte_identical(tmp_path, options):
    path = tmp_path / "other.db"
    _foreign(path)
    before, files = _digest(path), sorted(os.listdir(tmp_path))
    with pytest.raises(
        StudyFileError, match=r"other.db is not a ckb study file: it holds the table\(s\) 'trials'"
    ):
        StudyStorage(path, **options)
    assert _digest(path) == before and sorted(os.listdir(tmp_path)) == files
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert [r[1] for r in conn.execute("PRAGMA table_info(trials)")] == ["id", "name"]
    conn.close()


@pytest.mark.parametrize("options", [{}, {"read_only": True}, {"create": False}])
def test_a_foreign_database_with_a_ckb_like_meta_table_is_refused_unchanged(tmp_path, options):
    """Someone else's database with a ``meta`` table holding ``schema_version`` was taken for a study
    file: switched to WAL, then refused with "no such table: trials" (or opened read-only)."""
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta(key, value)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.commit()
    conn.close()
    before, files = _digest(path), sorted(os.listdir(tmp_path))
    with pytest.raises(
        StudyFileError,
        match=r"app.db is not a ckb study file: .*schema_version but not the table\(s\) 'policy_states', "
        r"'studies', 'trials'.*not changed",
    ):
        StudyStorage(path, **options)
    assert _digest(path) == before and sorted(os.listdir(tmp_path)) == files
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


@pytest.mark.parametrize("options", [{"read_only": True}, {"create": False}])
def test_a_missing_file_is_an_error_and_nothing_is_created(tmp_path, options):
    with pytest.raises(StudyFileError, match=r"no study file at '.*typo.db'.*nothing was created"):
        StudyStorage(tmp_path / "typo.db", **options)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("options", [{}, {"read_only": True}])
def test_a_file_that_is_not_sqlite_is_a_clear_error_and_stays_unchanged(tmp_path, options):
    path = tmp_path / "notes.db"
    path.write_text("pump settings, not a database\n" * 50)
    before = _digest(path)
    with pytest.raises(
        StudyFileError, match=r"notes.db is not a SQLite database .*expected a SQLite study file"
    ):
        StudyStorage(path, **options)
    assert _digest(path) == before


def test_an_empty_file_is_a_new_study_file_to_a_writer_only(tmp_path):
    path = tmp_path / "new.db"
    path.touch()
    with pytest.raises(StudyFileError, match="new.db is empty"):
        StudyStorage(path, read_only=True)
    with StudyStorage(path) as s:
        s.create_study("demo", SPEC)
    with StudyStorage(path, read_only=True) as s:
        assert s.study_names() == ["demo"]


def _study_file(path, n=30):
    with StudyStorage(path) as s:
        s.create_study("demo", SPEC)
        for i in range(n):
            k = s.ask("demo", [i / n, 1.0], info={"source": "init", "i": i})
            s.tell("demo", k, float(i), [-1.0, float(i)])
            s.save_policy_state("demo", k, {"k": k, "x": np.arange(50.0)})
        s._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _read_everything(path):
    with StudyStorage(path, read_only=True) as s:
        for name in s.study_names():
            s.spec(name), s.trials(name), s.latest_policy_state(name)


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.99])
def test_a_truncated_study_file_is_a_clear_error(tmp_path, keep):
    full = tmp_path / "full.db"
    _study_file(full)
    data = full.read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(StudyFileError, match=r"cut.db .*(truncated or damaged|not a SQLite database)"):
        _read_everything(cut)
    assert cut.read_bytes() == data[: int(len(data) * keep)]


def test_a_damaged_value_is_a_clear_error_naming_the_trial(tmp_path):
    path = tmp_path / "s.db"
    _study_file(path, n=3)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE trials SET x = '[0.5, 1.0' WHERE number = 1")  # a value cut short
    conn.commit()
    conn.close()
    with pytest.raises(
        StudyFileError, match=r"s.db holds a damaged trial 1 of study 'demo' \(JSONDecodeError"
    ):
        _read_everything(path)


def _damaged(path, *sql):
    """A study file of 3 complete trials (numbers 0-2), a pending (3) and a failed one (4), then ``sql``."""
    _study_file(path, n=3)
    with StudyStorage(path) as s:
        s.ask("demo", [0.5, 0.5])
        s.fail("demo", s.ask("demo", [0.5, 0.5]), "crashed")
        s._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    for stmt in sql:
        conn.execute(stmt)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "sql, match",
    [
        ("UPDATE trials SET constraints = '[1.0]' WHERE number = 1", r"its constraints \[1.0\] \(expected 2"),
        ("UPDATE trials SET constraints = NULL WHERE number = 1", r"its constraints None \(expected 2"),
        ("UPDATE trials SET constraints = '[1.0, \"a\"]' WHERE number = 1", r"its constraints \[1.0, 'a'\]"),
        (
            "UPDATE trials SET constraints = '[-1.0, 0.0]' WHERE number = 3",
            r"its constraints \[-1.0, 0.0\] \(expected 2",
        ),
        ("UPDATE trials SET x = '[0.1]' WHERE number = 1", r"its x \[0.1\] \(expected 2 coordinates"),
        ("UPDATE trials SET x = '[0.5, 7.0]' WHERE number = 1", r"its x \[0.5, 7.0\] .*in the box"),
        ("UPDATE trials SET x = '[\"0.5\", 1.0]' WHERE number = 1", r"its x \['0.5', 1.0\]"),
        ("UPDATE trials SET x = '{\"a\": 1}' WHERE number = 1", r"its x \{'a': 1\}"),
        ("UPDATE trials SET objective = NULL WHERE number = 1", r"its objective None \(expected a finite"),
        ("UPDATE trials SET objective = 'abc' WHERE number = 1", r"its objective 'abc' \(expected a finite"),
        (
            "UPDATE trials SET objective = 2.0 WHERE number = 4",
            r"its objective 2.0 \(expected a finite number for a complete trial, None",
        ),
        ("UPDATE trials SET info = '[1]' WHERE number = 1", r"its info \[1\] \(expected a dict"),
        ("UPDATE trials SET state = 'done' WHERE number = 1", r"its state 'done' \(expected pending"),
    ],
)
def test_a_damaged_trial_row_is_a_clear_error_naming_the_trial_and_field(tmp_path, sql, match):
    """Rows that decode but do not fit the spec (wrong length, None, text, outside the box) gave raw numpy
    and Python errors later, or a silently wrong result; now reading them names the file and the field."""
    path = tmp_path / "s.db"
    _damaged(path, sql)
    before = _digest(path)
    n = sql.rsplit(" ", 1)[1]
    for options in ({"read_only": True}, {}):
        with StudyStorage(path, **options) as s:
            with pytest.raises(
                StudyFileError, match=rf"s.db holds a damaged trial {n} of study 'demo': {match}"
            ):
                s.trials("demo")
            if options:
                assert _digest(path) == before
    with StudyStorage(path) as s:  # what was stored is still there
        assert len(s._conn.execute("SELECT * FROM trials").fetchall()) == 5


def test_undamaged_rows_of_every_state_read_back(tmp_path):
    path = tmp_path / "s.db"
    _damaged(path)
    with StudyStorage(path, read_only=True) as s:
        t = s.trials("demo")
    assert [r["state"] for r in t] == ["complete"] * 3 + ["pending", "failed"]
    assert t[3]["objective"] is None and t[4]["constraints"] is None and t[4]["note"] == "crashed"


@pytest.mark.parametrize(
    "change, match",
    [
        ({"lower": "abc"}, "lower must be a non-empty list of finite numbers, got 'abc'"),
        ({"lower": [0.0, "a"]}, r"lower must be .*got \[0.0, 'a'\]"),
        ({"upper": [0.0, 6.0]}, "upper > lower"),
        ({"upper": [6.0]}, "upper > lower"),
        ({"m": "x"}, r"m \(the number of constraints\) must be a whole number >= 0, got 'x'"),
        ({"m": -1}, "whole number >= 0, got -1"),
        ({"m": True}, "whole number >= 0, got True"),
    ],
)
def test_a_damaged_spec_is_a_clear_error_naming_the_study(tmp_path, change, match):
    path = tmp_path / "s.db"
    _study_file(path, n=2)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE studies SET spec = ?", (dumps({**SPEC, **change}),))
    conn.commit()
    conn.close()
    with StudyStorage(path, read_only=True) as s:
        for call in (s.spec, s.trials):
            with pytest.raises(StudyFileError, match=f"s.db holds a damaged spec of study 'demo' .*{match}"):
                call("demo")


def test_a_spec_with_bounds_that_are_not_numbers_is_refused_at_creation(store):
    with pytest.raises(InvalidInputError, match=r"study spec: lower must be .*got \['a', 0.0\]"):
        store.create_study("other", {"lower": ["a", 0.0], "upper": [1.0, 1.0], "m": 1})
    assert store.study_names() == ["demo"]


def _modes(path):
    return {
        p.name: oct(p.stat().st_mode & 0o777) for p in path.parent.iterdir() if p.name.startswith(path.name)
    }


@pytest.mark.parametrize("umask, mode", [(0o002, "0o664"), (0o022, "0o644"), (0o077, "0o600")])
def test_new_study_files_honor_the_umask(tmp_path, umask, mode):
    path = tmp_path / "s.db"
    old = os.umask(umask)
    try:
        with StudyStorage(path) as s:
            s.create_study("demo", SPEC)
            modes = _modes(path)
    finally:
        os.umask(old)
    assert modes == {"s.db": mode, "s.db-wal": mode, "s.db-shm": mode}


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _ticket(store, pid, host=None, token=None):
    from ckb.studies.turns import _HOST, _start_token

    with store.atomic():
        return store._conn.execute(
            "INSERT INTO turns(study_id, pid, host, token, since) VALUES (1, ?, ?, ?, 0.0)",
            (pid, host or _HOST, _start_token(pid) if token is None else token),
        ).lastrowid


def test_a_turn_skips_the_tickets_of_dead_processes(store):
    """A process killed while waiting (or in its turn) leaves its ticket; the next one removes it."""
    _ticket(store, _dead_pid())
    _ticket(store, os.getppid(), token="0")  # a live pid that is now another process (started at tick 0)
    zombie = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    _ticket(store, zombie.pid)
    os.kill(zombie.pid, signal.SIGKILL)  # killed, not yet reaped: a zombie
    time.sleep(0.2)
    try:
        with store.turn("demo"):
            rows = store._conn.execute("SELECT pid FROM turns").fetchall()
            assert [r["pid"] for r in rows] == [os.getpid()]
    finally:
        zombie.wait()
    assert store._conn.execute("SELECT COUNT(*) FROM turns").fetchone()[0] == 0


def test_a_turn_that_does_not_come_is_a_clear_error_and_changes_nothing(tmp_path):
    with StudyStorage(tmp_path / "s.db", timeout=0.3) as s:
        s.create_study("demo", SPEC)
        _ticket(s, 4242, host="elsewhere", token="1")  # cannot be checked: waited for
        with pytest.raises(
            StudyBusyError, match="waited 0.3 s for process 4242 on 'elsewhere'.*nothing was changed"
        ):
            with s.turn("demo"):
                pytest.fail("the turn must not come")
        assert [r["pid"] for r in s._conn.execute("SELECT pid FROM turns")] == [4242]


def test_turns_are_served_in_the_order_they_were_taken(tmp_path):
    """Workers that each hold their turn briefly, many times: the queue hands turns round-robin, so the
    order of turns has no worker twice in a row while others wait (SQLite's lock alone starves them)."""
    path = tmp_path / "s.db"
    with StudyStorage(path) as s:
        s.create_study("demo", SPEC)
    code = textwrap.dedent(
        """
        import pathlib, sys, time
        from ckb.studies import StudyStorage
        with StudyStorage(sys.argv[1]) as s:
            s.trials("demo")
            ready = pathlib.Path(sys.argv[3])  # start together, however long each took to import ckb
            (ready / sys.argv[2]).touch()
            while len(list(ready.iterdir())) < 3:
                time.sleep(0.01)
            for _ in range(10):
                with s.turn("demo"):
                    s.save_policy_state("demo", 0, {"who": sys.argv[2]})
                    with s.atomic():
                        s._conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)",
                                        (f"turn-{time.time_ns()}", sys.argv[2]))
                    time.sleep(0.01)
        """
    )
    ready = tmp_path / "ready"
    ready.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(w), str(ready)]) for w in range(3)]
    for p in procs:
        p.wait(timeout=120)
        assert p.returncode == 0
    conn = sqlite3.connect(path)
    order = [r[0] for r in conn.execute("SELECT value FROM meta WHERE key LIKE 'turn-%' ORDER BY key")]
    conn.close()
    assert sorted(order) == sorted("012" * 10)
    # while all three run, no worker gets ahead of another by more than a turn or two
    spread = [
        max(order[:i].count(w) for w in "012") - min(order[:i].count(w) for w in "012") for i in range(3, 28)
    ]
    assert max(spread) <= 2, order


@pytest.mark.parametrize("suffix", ["-wal", "-shm", "-journal"])
def test_a_study_under_a_sqlite_companion_name_is_refused(tmp_path, suffix):
    """A study created as pump.db-wal (a mistyped or tab-completed name) was deleted, with every result
    told to it, the next time pump.db was opened: SQLite owns that name."""
    main = tmp_path / "pump.db"
    with StudyStorage(main) as s:
        s.create_study("pump", {"lower": [0.0], "upper": [1.0], "m": 0})
    with pytest.raises(
        InvalidInputError, match=rf"is a name SQLite keeps for the {suffix} file of a study file"
    ):
        StudyStorage(tmp_path / f"pump.db{suffix}")
    with StudyStorage(main) as s:  # the study beside it is untouched
        assert s.spec("pump")["m"] == 0
    with StudyStorage(tmp_path / "my-wal-study.db") as s:  # only the companion suffix is refused
        s.create_study("x", {"lower": [0.0], "upper": [1.0], "m": 0})
