"""Two processes creating one study file at the same moment (the README's "several processes can share
the study file"). SQLite answers the switch to WAL mode with "database is locked" at once, without its
busy timeout, while another connection holds a write lock: the second process failed within a second
with a StudyBusyError claiming a 60 s wait. It now waits for the lock, as for any other statement."""

import sqlite3
import threading
import time

import ckb


def test_a_new_study_file_locked_for_a_moment_is_opened_once_free(tmp_path):
    path = tmp_path / "shared.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # the other process, in the middle of creating the file
    release = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    release.start()
    start = time.monotonic()
    try:
        opt = ckb.Optimizer([0.0], [1.0], m=1, budget=5, storage=str(path), study_name="s")
    finally:
        release.join()
        other.close()
    assert time.monotonic() - start >= 0.4
    x = opt.ask()
    opt.tell(x, 0.0, [0.0])
    assert opt.metrics()["evaluations"] == 1
