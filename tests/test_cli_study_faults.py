"""``ckb study`` on faults found by a probe of the CLI and the study storage: the default plot path,
damaged trial fields, names that are not UTF-8, deeply nested JSON, permissions, long names, many studies
and a closed stdout. Every report is one ``error:`` line, and nothing stored or owned by the user is lost."""

import hashlib
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ckb
from ckb.cli_study import study_app
from ckb.errors import InvalidInputError
from ckb.studies import StudyFileError, StudyNotFoundError, StudyStorage

runner = CliRunner()
WIDE = {"COLUMNS": "200"}
CKB = Path(sys.executable).with_name("ckb")  # the console script of this environment
PIPE_CLOSED = 141  # the exit code of a command whose stdout was closed (that of one killed by SIGPIPE)
PLOT_NAME_MAX = 160  # the longest default plot file name


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line_error(res, *needles):
    """Exit code 2, no traceback, one line naming what is wrong."""
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    text = res.output.strip()
    assert text.startswith("error:") and "Traceback" not in text and "\n" not in text, text
    flat = " ".join(text.split())
    for needle in needles:
        assert needle in flat, (needle, flat)


def _store(path, *names):
    """Studies ``names`` in ``path``, one complete trial each."""
    with StudyStorage(path) as s:
        for name in names:
            s.create_study(name, {"lower": [0.0], "upper": [1.0], "m": 1, "minimize": True})
            s.tell(name, s.ask(name, [0.5]), 1.0, [-1.0])
    return path


def _optimizer_study(path):
    """A ckb.Optimizer study 's' of two complete design points (no model fit)."""
    opt = ckb.Optimizer(
        [0, 0], [1, 1], m=1, policy="ckb-ucb", budget=10, n_init=6, storage=path, study_name="s"
    )
    for i, x in enumerate(opt.ask(2)):
        opt.tell(x, float(i), [-1.0])
    opt.close()
    return path


def _execute(path, sql, *args):
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def _cli(*args, user=False, **popen):
    """``ckb study ARGS`` in a process of its own; ``user``: without root's powers over file modes."""
    if not CKB.exists():
        pytest.skip(f"no console script {CKB}")
    cmd = [str(CKB), "study", *map(str, args)]
    if user and os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: file modes cannot be tested")
        cmd = ["setpriv", "--inh-caps=-all", "--bounding-set=-all", *cmd]
    return subprocess.Popen(cmd, env={**os.environ, **WIDE}, **popen)


def _run(*args, user=False):
    p = _cli(*args, user=user, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=300)
    return p.returncode, out, err


# ------------------------------------------------------------------- 5: the default plot path
def test_the_default_plot_path_never_replaces_a_file_ckb_did_not_write_there(tmp_path):
    """``show`` without ``--plot`` replaced any file at ``FILE-NAME.png`` that was not SQLite (a user's
    notes, an older plot), although the user named no file."""
    path = _store(tmp_path / "base.db", "pump")
    notes = tmp_path / "base-pump.png"
    notes.write_text("my notes, not a plot\n")
    res = runner.invoke(study_app, ["show", str(path), "pump"], env=WIDE)
    _one_line_error(
        res, "base-pump.png", "not a plot ckb wrote for study 'pump'", "--plot PATH", "nothing was written"
    )
    assert notes.read_text() == "my notes, not a plot\n"
    res = runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(notes)], env=WIDE)
    assert res.exit_code == 0, res.output  # named: replaced, as asked
    for _ in range(2):  # the plot ckb wrote for this study is replaced by the next show
        res = runner.invoke(study_app, ["show", str(path), "pump"], env=WIDE)
        assert res.exit_code == 0 and f"plot: {notes}" in " ".join(res.output.split()), res.output
    assert notes.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_default_plot_paths_of_different_studies_differ_or_are_refused(tmp_path):
    """Studies 'a b', 'a/b' and 'a_b' all wrote FILE-a_b.png; x.db/'y-z' and x-y.db/'z' both x-y-z.png:
    showing one overwrote the other's plot."""
    path = _store(tmp_path / "s.db", "a b", "a/b", "a_b")
    for name in ("a b", "a/b", "a_b"):
        assert runner.invoke(study_app, ["show", str(path), name], env=WIDE).exit_code == 0
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert len(pngs) == 3 and "s-a_b.png" in pngs, pngs
    first = _store(tmp_path / "x.db", "y-z")
    second = _store(tmp_path / "x-y.db", "z")
    assert runner.invoke(study_app, ["show", str(first), "y-z"], env=WIDE).exit_code == 0
    plot = tmp_path / "x-y-z.png"
    before = _digest(plot)
    res = runner.invoke(study_app, ["show", str(second), "z"], env=WIDE)
    _one_line_error(res, "x-y-z.png", "the plot of another study", "--plot PATH")
    assert _digest(plot) == before


def test_a_long_study_name_gets_a_short_default_plot_path(tmp_path):
    """A name of 240+ characters made every ``show`` without ``--plot`` fail: File name too long."""
    long = "L" * 300
    path = _store(tmp_path / ("f" * 200 + ".db"), long, long[:-1])
    for name in (long, long[:-1]):
        res = runner.invoke(study_app, ["show", str(path), name], env=WIDE)
        assert res.exit_code == 0, res.output
    pngs = [p.name for p in tmp_path.glob("*.png")]
    assert len(pngs) == 2 and all(len(p) <= PLOT_NAME_MAX for p in pngs), pngs


# ---------------------------------------------------------------- 6: wrongly typed trial fields
@pytest.mark.parametrize(
    "change, needle",
    [
        ("number = 'zz'", "trial 'zz' of study 's': its number 'zz' (expected a whole number >= 0)"),
        ("number = 1.5", "its number 1.5 (expected a whole number >= 0)"),
        ("number = -7", "its number -7 (expected a whole number >= 0)"),
        ("note = X'00FF'", "trial 0 of study 's': its note b'\\x00\\xff' (expected text or nothing)"),
        ("asked_at = 'yesterday'", "trial 0 of study 's': its asked_at 'yesterday' (expected a time"),
        ("told_at = 'later'", "trial 0 of study 's': its told_at 'later' (expected a time"),
    ],
)
def test_a_wrongly_typed_trial_field_is_refused_naming_it(tmp_path, change, needle):
    """A trial number stored as text was exported as is (exit 0), and ckb.Optimizer.load then failed
    with int()'s ValueError; a BLOB note was printed as b'...'."""
    path = _optimizer_study(tmp_path / "d.db")
    _execute(path, f"UPDATE trials SET {change} WHERE number = 0")
    before = _digest(path)
    for command in (["list", str(path)], ["show", str(path), "s"], ["export", str(path), "s"]):
        _one_line_error(runner.invoke(study_app, command, env=WIDE), "d.db holds a damaged", needle)
    with pytest.raises(StudyFileError, match=re.escape(needle)):
        ckb.Optimizer.load(
            path, "s"
        )  # said at load (it was said at the first ask, as int()'s ValueError before)
    assert _digest(path) == before


# -------------------------------------------------------------- 8, 9: bad names, deep JSON
def test_a_study_name_that_is_not_utf8_is_one_line(tmp_path):
    """``ckb study show base.db $'\\xff'`` ended in a 49-line UnicodeEncodeError traceback."""
    path = _store(tmp_path / "s.db", "pump")
    before = _digest(path)
    for command in (["show", str(path), "\udcff"], ["export", str(path), "\udcff"]):
        _one_line_error(
            runner.invoke(study_app, command, env=WIDE), "no study named '\\udcff'", "not valid UTF-8"
        )
    assert _digest(path) == before and not list(tmp_path.glob("*.png"))
    with pytest.raises(
        InvalidInputError, match=r"study name '\\ud800x' cannot be stored: it is not valid UTF-8"
    ):
        ckb.Optimizer([0], [1], storage=tmp_path / "n.db", study_name="\ud800x")
    with StudyStorage(path, read_only=True) as s, pytest.raises(StudyNotFoundError, match="not valid UTF-8"):
        s.trials("\ud800x")


def test_a_name_that_is_not_utf8_from_a_real_command_line(tmp_path):
    """The byte 0xff as the name (a Latin-1 terminal), through the console script."""
    if not CKB.exists():
        pytest.skip(f"no console script {CKB}")
    path = _store(tmp_path / "s.db", "pump")
    cmd = [str(CKB).encode(), b"study", b"show", os.fsencode(path), b"\xff"]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **WIDE}, timeout=300)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not valid UTF-8" in r.stderr, r.stderr


@pytest.mark.parametrize(
    "sql, what",
    [
        (
            "UPDATE trials SET x = ? WHERE number = 0",
            "damaged trial 0 of study 's' (its JSON is nested too deeply",
        ),
        ("UPDATE studies SET spec = ?", "damaged spec of study 's' (its JSON is nested too deeply"),
        (
            "UPDATE trials SET info = ? WHERE number = 1",
            "damaged trial 1 of study 's' (its JSON is nested too",
        ),
    ],
)
def test_deeply_nested_json_is_a_damaged_trial_not_a_traceback(tmp_path, sql, what):
    """x or spec replaced by '[[[[...]]]]' 100000 deep: a 64-line RecursionError traceback."""
    path = _optimizer_study(tmp_path / "d.db")
    _execute(path, sql, "[" * 100_000 + "]" * 100_000)
    before = _digest(path)
    for command in (["list", str(path)], ["show", str(path), "s"], ["export", str(path), "s"]):
        _one_line_error(runner.invoke(study_app, command, env=WIDE), "d.db holds a", what)
    with pytest.raises(StudyFileError, match=re.escape(what)):
        with ckb.Optimizer.load(path, "s") as opt:  # the spec is read here, the trials below
            opt.history()
    assert _digest(path) == before


# ---------------------------------------------------------------------- 10, 11: permissions
@pytest.fixture
def read_only_dir(tmp_path):
    """A directory mode 0o555 holding a closed study s.db (no -wal, -shm); its mode is restored after."""
    d = tmp_path / "ro"
    d.mkdir()
    _optimizer_study(d / "s.db")
    assert sorted(os.listdir(d)) == ["s.db"]
    d.chmod(0o555)
    yield d
    d.chmod(0o755)


def test_a_study_in_a_read_only_directory_can_be_read(read_only_dir, tmp_path):
    """``ckb study list ro/s.db`` failed: "cannot write ro/s.db (attempt to write a readonly database)"."""
    study = read_only_dir / "s.db"
    before = _digest(study)
    rc, out, err = _run("list", study, user=True)
    assert rc == 0 and err == "" and "ckb-ucb" in out, (rc, err)
    rc, out, err = _run("export", study, "s", user=True)
    assert rc == 0 and len(out.splitlines()) == 3, (rc, err)
    rc, out, err = _run("show", study, "s", "--plot", tmp_path / "p.png", user=True)
    assert rc == 0 and (tmp_path / "p.png").exists(), (rc, err)
    assert sorted(os.listdir(read_only_dir)) == ["s.db"] and _digest(study) == before


def test_a_read_only_directory_with_changes_in_a_wal_is_one_line(tmp_path):
    """A study whose -wal holds changes cannot be read without creating its -shm: say so and what to do."""
    src = _optimizer_study(tmp_path / "s.db")
    d = tmp_path / "ro"
    d.mkdir()
    conn = sqlite3.connect(src)  # a writer that has not checkpointed: the change is only in s.db-wal
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("UPDATE trials SET note = 'late' WHERE number = 0")
    conn.commit()
    shutil.copy(src, d / "s.db")
    shutil.copy(f"{src}-wal", d / "s.db-wal")
    conn.close()
    assert (d / "s.db-wal").stat().st_size > 0
    d.chmod(0o555)
    try:
        rc, out, err = _run("list", d / "s.db", user=True)
        assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
        assert "ro/s.db: its directory is not writable" in err and "s.db-wal" in err, err
        assert "copy both files to a writable directory" in " ".join(err.split()), err
        assert sorted(os.listdir(d)) == ["s.db", "s.db-wal"]
    finally:
        d.chmod(0o755)


def test_an_unreadable_study_file_is_one_line_naming_the_permission(tmp_path):
    """chmod 000 (non-root): click's five-line usage box "Invalid value for 'file': ... is not readable"."""
    study = _optimizer_study(tmp_path / "u.db")
    study.chmod(0)
    try:
        for command in (
            ["list", study],
            ["show", study, "s", "--plot", tmp_path / "p.png"],
            ["export", study, "s"],
        ):
            rc, out, err = _run(*command, user=True)
            assert rc == 2 and out == "" and err.count("\n") == 1, (command, err)
            assert err.startswith("error: cannot read") and "u.db: permission denied" in err, err
    finally:
        study.chmod(0o644)


# ------------------------------------------------------------------------ 13: many studies
def test_the_unknown_study_error_lists_each_name_once_and_briefly(tmp_path):
    """Every name appeared twice (the list, then 'Known: ...'), with no limit on the length."""
    names = [f"study-{i:02d}-" + "x" * 300 for i in range(30)] + ["pump"]
    path = _store(tmp_path / "s.db", *names)
    res = runner.invoke(study_app, ["show", str(path), "pmup"], env=WIDE)
    _one_line_error(
        res, "no study named 'pmup'", "Did you mean 'pump'?", "Its 31 studies:", "... and 21 more."
    )
    flat = " ".join(res.output.split())
    assert flat.count("study-00-") == 1 and "study-10-" not in flat and len(flat) < 1200, flat


# ------------------------------------------------------------------------ 14: a closed stdout
@pytest.mark.parametrize("command", ["show", "list", "export"])
def test_a_closed_stdout_ends_quietly_and_the_plot_is_written(tmp_path, command):
    """``ckb study show base.db pump | head`` exited 1 with nothing on stderr and wrote no plot."""
    path = _optimizer_study(tmp_path / "s.db")
    plot = tmp_path / "p.png"
    args = {
        "show": ["show", path, "s", "--plot", plot],
        "list": ["list", path],
        "export": ["export", path, "s"],
    }
    p = _cli(*args[command], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line is written
    err = p.stderr.read()
    assert p.wait(timeout=300) == PIPE_CLOSED and err == b"", err
    assert plot.exists() == (command == "show")


def test_an_export_onto_a_folder_is_named_as_a_folder(tmp_path):
    """Before: ``could not write 'adir': [Errno 21] Is a directory: '.adir.uppcod75.tmp' -> 'adir'``, the
    temporary file's name in the message. (``--plot adir`` writes ``adir.png``, matplotlib's rule.)"""
    path = _store(tmp_path / "s.db", "pump")
    (tmp_path / "adir").mkdir()
    res = runner.invoke(study_app, ["export", str(path), "pump", "--out", str(tmp_path / "adir")], env=WIDE)
    _one_line_error(res, "adir' is a folder; expected a file path; nothing was written.")
    assert ".tmp" not in res.output and list((tmp_path / "adir").iterdir()) == []
