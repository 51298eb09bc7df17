"""ckb.Optimizer on study files it cannot resume faithfully: trials without the ``info`` record of where
their points came from (findings 1), a spec written by a newer ckb (2), and a new study whose name is
the name of an existing one but for case (5)."""

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import warnings

import pytest

import ckb
from ckb.studies import StudyFileError

BOX = ([0, 0], [1, 1])
OPTIONS = {"m": 1, "policy": "ckb-ucb", "budget": 10, "n_init": 6, "seed": 0}


def _study(path, name="pump"):
    """A study of 4 design points, the third told failed (no model fit needed)."""
    opt = ckb.Optimizer(*BOX, **OPTIONS, storage=path, study_name=name)
    for i, x in enumerate(opt.ask(4)):
        if i == 2:
            opt.tell(x, failed=True, note="boom")
        else:
            opt.tell(x, float(i), [-1.0])
    opt.close()
    return path


def _execute(path, sql):
    conn = sqlite3.connect(path)
    conn.execute(sql)
    conn.commit()
    conn.close()


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(path, *needles, name="pump"):
    """Optimizer.load and the constructor both refuse ``path`` with one line naming ``needles``; the file
    and its folder stay as they were."""
    before, listing = _digest(path), sorted(os.listdir(path.parent))
    for attempt in (
        lambda: ckb.Optimizer.load(path, name),
        lambda: ckb.Optimizer(*BOX, **OPTIONS, storage=path, study_name=name),
    ):
        with pytest.raises(StudyFileError) as err:
            attempt()
        msg = str(err.value)
        assert "\n" not in msg and "nothing was changed" in msg, msg
        for needle in needles:
            assert needle in msg, (needle, msg)
    assert _digest(path) == before and sorted(os.listdir(path.parent)) == listing


# ------------------------------------------------------------- 1: trials without their info record
def test_a_file_without_the_info_column_is_refused_not_resumed_by_repeating_the_design(tmp_path):
    """The info column exists since ckb.Optimizer's first release (git log -S "ADD COLUMN info": the
    commit that added ckb.Optimizer added it, and that optimizer already judged the design by
    ``info.source``), so no ckb wrote an optimizer study without it: the design's progress cannot be
    read back, and resuming asked trials 0-3's points again as design points."""
    path = _study(tmp_path / "w.db")
    _execute(path, "ALTER TABLE trials DROP COLUMN info")
    _refused(path, "study 'pump'", "trial(s) 0, 1, 2, 3", "no info column", "ask the initial design again")


def test_trials_whose_info_is_empty_are_refused_too(tmp_path):
    path = _study(tmp_path / "n.db")
    _execute(path, "UPDATE trials SET info = NULL WHERE number IN (1, 3)")
    _refused(path, "trial(s) 1, 3", "their info is empty")


def test_another_study_in_a_file_without_the_info_column_still_works_and_migrates_it(tmp_path):
    path = _study(tmp_path / "w.db")
    _execute(path, "ALTER TABLE trials DROP COLUMN info")
    opt = ckb.Optimizer(*BOX, **OPTIONS, storage=path, study_name="other")  # a new study: nothing to judge
    x = opt.ask()
    assert opt.history()[0]["source"] == "init" and x.shape == (2,)
    opt.close()
    _refused(path, "trial(s) 0, 1, 2, 3", "their info is empty")  # the old trials still have none


# --------------------------------------------------------------- 2: a spec written by a newer ckb
def _edit_spec(path, change):
    conn = sqlite3.connect(path)
    spec = json.loads(conn.execute("SELECT spec FROM studies WHERE name = 'pump'").fetchone()[0])
    change(spec)
    conn.execute("UPDATE studies SET spec = ? WHERE name = 'pump'", (json.dumps(spec),))
    conn.commit()
    conn.close()


EDITS = {
    "version 3": (
        lambda s: s.update(version=3, future_option="x"),
        ["spec version 3", "reads versions 1 and 2"],
    ),
    "no version": (lambda s: s.pop("version"), ["spec version None"]),
    "unknown key": (lambda s: s.update(future_option="x"), ["spec key(s) 'future_option'", "version 2"]),
    "unknown option": (lambda s: s["options"].update(turbo=1), ["'options.turbo'"]),
    "units 99": (lambda s: s.update(units=99), ["outcome units version 99", "versions 1 to 2"]),
    "units text": (lambda s: s.update(units="2"), ["outcome units version '2'"]),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_study_a_newer_ckb_wrote_is_refused_in_one_line_and_not_written(tmp_path, edit):
    change, needles = EDITS[edit]
    path = _study(tmp_path / "sp.db")
    _edit_spec(path, change)
    _refused(path, "study 'pump'", *needles, "resume it with the ckb that wrote it")


def test_versions_1_and_2_still_resume(tmp_path):
    path = _study(tmp_path / "v.db")
    with ckb.Optimizer.load(path, "pump") as opt:
        assert opt.metrics()["remaining"] == 6


def _cli(*args):
    code = "import sys; from ckb.cli import app; sys.argv = ['ckb', *sys.argv[1:]]; app()"
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, env=env
    )


def test_the_study_commands_show_a_newer_study_with_a_one_line_warning_and_change_nothing(tmp_path):
    path = _study(tmp_path / "sp.db")
    _edit_spec(path, EDITS["version 3"][0])
    before = _digest(path)
    for args in (
        ["list", path],
        ["show", path, "pump", "--plot", tmp_path / "p.png"],
        ["export", path, "pump"],
    ):
        res = _cli("study", *args)
        assert res.returncode == 0, res.stderr
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("warning: study 'pump'"), res.stderr
        assert "spec version 3" in lines[0] and "will not resume it" in lines[0], lines
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.png", "sp.db"]


# ------------------------------------------------------------------ 5: a name that differs in case
def test_a_new_study_named_like_an_existing_one_but_for_case_warns_naming_it(tmp_path):
    path = _study(tmp_path / "c.db")
    with pytest.warns(UserWarning, match=r"new study 'Pump' .* holds 'pump'.*study_name='pump'"):
        ckb.Optimizer(*BOX, **OPTIONS, storage=path, study_name="Pump").close()
    with pytest.warns(UserWarning, match=r"new study 'my_pump' .* holds 'my-pump'"):
        _study(path, "my-pump")
        ckb.Optimizer(*BOX, **OPTIONS, storage=path, study_name="my_pump").close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a different name, or the same one resumed: no warning
        ckb.Optimizer(*BOX, **OPTIONS, storage=path, study_name="pump2").close()
        ckb.Optimizer.load(path, "pump").close()
