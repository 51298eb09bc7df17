"""The study file's folder and its older formats: a refused or damaged file leaves no ``-wal``/``-shm``
beside it (finding 4), a read-only file or folder is one line saying so (3), and an older file gains the
info column and the turns table only with a write, so that a refused open leaves it as it was."""

import errno
import hashlib
import os
import sqlite3

import pytest

from ckb.studies import StudyStorage
from ckb.studies import storage as storage_module
from ckb.studies.storage import StudyFileError
from tests.studies.test_storage import _old_study_file

SPEC = {"lower": [0.0, 0.0], "upper": [10.0, 10.0], "m": 2}


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _study_file(path, trials=40):
    with StudyStorage(path) as s:
        s.create_study("demo", SPEC)
        for i in range(trials):
            s.tell(
                "demo", s.ask("demo", [i / 10, 1.0], info={"source": "user", "pad": "x" * 200}), 1.0, [0, 0]
            )
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # a writer's close removes them
    return path


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


# ------------------------------------------------------------------ 4: no -wal/-shm left behind
@pytest.mark.parametrize("options", [{"read_only": True}, {}, {"create": False}])
def test_a_truncated_study_file_is_refused_and_its_folder_left_as_it_was(tmp_path, options):
    path = _study_file(tmp_path / "t.db")
    path.write_bytes(path.read_bytes()[: 3 * 4096])  # cut short: SQLite opens it, quick_check fails
    before, listing = _digest(path), _listing(tmp_path)
    with pytest.raises(StudyFileError, match="t.db"):
        StudyStorage(path, **options)
    assert _listing(tmp_path) == listing and _digest(path) == before


def test_a_damaged_trial_read_only_leaves_the_folder_as_it_was(tmp_path):
    path = _study_file(tmp_path / "d.db")
    conn = sqlite3.connect(path)
    conn.execute("UPDATE trials SET x = '[1.0]' WHERE number = 3")
    conn.commit()
    conn.close()
    before, listing = _digest(path), _listing(tmp_path)
    with StudyStorage(path, read_only=True) as s, pytest.raises(StudyFileError, match="trial 3"):
        s.trials("demo")
    assert _listing(tmp_path) == listing and _digest(path) == before


def test_a_read_only_open_leaves_no_files_but_keeps_a_writers(tmp_path):
    path = _study_file(tmp_path / "g.db")
    with StudyStorage(path, read_only=True) as s:
        assert len(s.trials("demo")) == 40
    assert _listing(tmp_path) == ["g.db"]
    with StudyStorage(path) as writer:  # a writer has the file open: its -wal and -shm stay
        with StudyStorage(path, read_only=True) as s:
            assert len(s.trials("demo")) == 40
        assert {"g.db-wal", "g.db-shm"} <= set(_listing(tmp_path))
        writer.ask("demo", [1.0, 1.0])
    with StudyStorage(path, read_only=True) as s:
        assert len(s.trials("demo")) == 41


# ------------------------------------------------------------------ 3: a read-only file or folder
# Tests may run as root, for whom chmod does not forbid writing, and a read-only bind mount needs
# privileges: both are simulated here by what the storage asks the system (os.access / os.open).
def _deny_writes(monkeypatch, denied):
    real = os.access

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and os.fspath(path) in denied:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(storage_module.os, "access", access)


@pytest.mark.parametrize("which", ["file", "folder"])
def test_a_study_that_may_not_be_written_is_one_line_saying_so(tmp_path, monkeypatch, which):
    path = _study_file(tmp_path / "r.db")
    before = _digest(path)
    _deny_writes(monkeypatch, {os.fspath(path) if which == "file" else os.fspath(tmp_path)})
    with pytest.raises(StudyFileError) as err:
        StudyStorage(path, create=False)
    msg = str(err.value)
    assert "\n" not in msg and "cannot write the study file" in msg and "expected a SQLite" not in msg, msg
    assert ("the file is read-only" if which == "file" else "is not writable") in msg, msg
    assert "`ckb study show` and `ckb study export` can read it" in msg and "nothing was changed" in msg
    assert _digest(path) == before and _listing(tmp_path) == ["r.db"]
    with StudyStorage(path, read_only=True) as s:  # reading still works
        assert len(s.trials("demo")) == 40


def test_a_new_study_file_in_a_read_only_folder_is_one_line(tmp_path, monkeypatch):
    real = os.open

    def read_only_fs(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(storage_module.os, "open", read_only_fs)
    with pytest.raises(StudyFileError) as err:
        StudyStorage(tmp_path / "new.db")
    msg = str(err.value)
    assert "\n" not in msg and "cannot create the study file" in msg and "is not writable" in msg, msg
    assert "Read-only file system" in msg and "nothing was created" in msg, msg
    assert _listing(tmp_path) == []


# ---------------------------------------------------------- older files: migrated by a write only
def _schema(path):
    conn = sqlite3.connect(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    cols = {r[1] for r in conn.execute("PRAGMA table_info(trials)")}
    conn.close()
    return tables, cols


def test_an_older_file_opened_to_write_changes_only_with_a_write(tmp_path):
    path = tmp_path / "old.db"
    _old_study_file(path)
    before = _digest(path)
    with StudyStorage(path) as s:  # opened, read, and a write refused: the file as it was
        assert s.study_names() == ["demo"] and not s.has_trial_info
        with pytest.raises(RuntimeError, match="gives up"), s.atomic():
            s.ask("demo", [1.0, 1.0], info={"source": "user"})
            raise RuntimeError("the caller gives up: rolled back")
    assert _digest(path) == before and "turns" not in _schema(path)[0]
    with StudyStorage(path) as s:
        s.ask("demo", [1.0, 1.0], info={"source": "user"})
        assert s.has_trial_info and s.trials("demo")[-1]["info"] == {"source": "user"}
    tables, cols = _schema(path)
    assert "turns" in tables and "info" in cols
