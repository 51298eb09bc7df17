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
