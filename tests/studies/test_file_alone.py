"""A study file copied (or backed up) without its ``-wal``, or whose ``-wal`` was deleted after a crash,
must still hold the study. In WAL mode SQLite copies committed pages into the file itself only every
1000 pages, so a study file stayed a 4 KB header while a run went on: its copy had no tables, and
``ckb.Optimizer(storage=copy)`` silently started the study over (resume probe). Every commit is now
checkpointed into the file."""

import shutil

import numpy as np

import ckb
from ckb.studies.storage import StudyStorage


def _run(path, n):
    opt = ckb.Optimizer(
        [0, 0], [1, 1], m=1, policy="ckb-ucb", budget=12, seed=3, storage=path, study_name="s"
    )
    for _ in range(n):
        x = opt.ask()
        opt.tell(x, float(np.sum(x)), [float(x[0] - 0.5)])
    return opt


def test_a_copy_of_the_file_alone_during_a_run_holds_every_told_result(tmp_path):
    path, copy = tmp_path / "live.db", tmp_path / "copy.db"
    opt = _run(path, 5)  # still open: the run goes on
    shutil.copyfile(path, copy)  # the file alone, as a backup or a copy to another machine
    assert not (tmp_path / "copy.db-wal").exists()
    resumed = ckb.Optimizer.load(copy, "s")
    assert len(resumed.history()) == 5
    assert np.array_equal([t["x"] for t in resumed.history()], [t["x"] for t in opt.history()])
    resumed.close()
    opt.close()


def test_the_file_alone_holds_every_committed_result_while_open(tmp_path):
    path = tmp_path / "b.db"
    opt = _run(path, 4)  # open, as when the process dies: its -wal and -shm are beside it
    shutil.copyfile(path, tmp_path / "c.db")  # the file without them (a -wal deleted after a crash)
    with StudyStorage(tmp_path / "c.db", create=False) as s:
        assert len([t for t in s.trials("s") if t["state"] == "complete"]) == 4
    opt.close()


def _header_only_copy(tmp_path):
    """A study file in WAL mode whose tables are only in its -wal (what a copy of a running study made
    by ckb before the checkpointing above looked like), copied without the -wal."""
    import sqlite3

    live = tmp_path / "old.db"
    conn = sqlite3.connect(live)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # SQLite's 1000 pages, never reached here
    conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.commit()
    copy = tmp_path / "copy.db"
    shutil.copyfile(live, copy)
    conn.close()
    return copy


def test_a_header_only_copy_is_refused_naming_the_missing_wal_not_started_over(tmp_path):
    import pytest

    from ckb.studies.storage import StudyFileError

    copy = _header_only_copy(tmp_path)
    before = copy.read_bytes()
    for kwargs in ({}, {"read_only": True}, {"create": False}):
        with pytest.raises(StudyFileError, match=r"copy\.db-wal is not beside it") as info:
            StudyStorage(copy, **kwargs)
        assert "\n" not in str(info.value)
    with pytest.raises(StudyFileError, match="put copy.db-wal back"):
        ckb.Optimizer([0, 0], [1, 1], m=1, budget=8, storage=copy, study_name="s")
    assert copy.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.db", "old.db"]


def test_new_and_empty_files_are_still_taken_as_new_studies(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()  # 0 bytes: what ckb itself creates before its writer sets WAL mode
    with StudyStorage(empty) as s:
        s.create_study("s", {"lower": [0.0], "upper": [1.0], "m": 0})
    with StudyStorage(empty, read_only=True) as s:  # checkpointed: the file alone holds it
        assert s.study_names() == ["s"]
