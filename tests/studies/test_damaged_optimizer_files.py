"""ckb.Optimizer on a study file whose trial rows or spec were damaged after it was written: every report
is a StudyFileError naming the file, the study, the trial and the field (raw numpy/Python errors before,
or a silently wrong best value)."""

import json
import sqlite3

import pytest

import ckb
from ckb.studies import StudyFileError, dumps


def _study(path, n=4):
    """A study of n complete design points (no model fit needed)."""
    opt = ckb.Optimizer(
        [0, 0], [1, 1], m=2, policy="ckb-ucb", budget=10, n_init=6, storage=path, study_name="s"
    )
    for i, x in enumerate(opt.ask(n)):
        opt.tell(x, float(i), [-1.0, -0.5])
    opt.close()


def _execute(path, sql, *args):
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "change, field",
    [
        ("constraints = '[1, 2, 3]'", "constraints"),
        ("constraints = NULL", "constraints"),
        ("x = '[0.1]'", "x"),
        ("x = '[0.5, 1.5]'", "x"),
        ("objective = NULL", "objective"),
        ("objective = 'abc'", "objective"),
        ("info = '[1]'", "info"),
    ],
)
def test_reports_on_a_damaged_trial_row_name_the_trial_and_field(tmp_path, change, field):
    path = tmp_path / "s.db"
    _study(path)
    _execute(path, f"UPDATE trials SET {change} WHERE number = 2")
    # said at load: every trial is read and checked there (it was said at the first report or ask)
    with pytest.raises(StudyFileError, match=rf"s.db holds a damaged trial 2 of study 's': its {field} "):
        ckb.Optimizer.load(path, "s")


def test_a_single_trial_without_its_objective_is_an_error_not_a_best_value_of_none(tmp_path):
    path = tmp_path / "s.db"
    _study(path, n=1)
    _execute(path, "UPDATE trials SET objective = NULL")
    with pytest.raises(StudyFileError, match="damaged trial 0 of study 's': its objective None"):
        ckb.Optimizer.load(path, "s")


def test_load_of_a_spec_with_bounds_that_are_not_numbers_is_a_study_file_error(tmp_path):
    path = tmp_path / "s.db"
    _study(path, n=1)
    conn = sqlite3.connect(path)
    spec = json.loads(conn.execute("SELECT spec FROM studies").fetchone()[0])
    conn.close()
    _execute(path, "UPDATE studies SET spec = ?", dumps({**spec, "lower": "abc"}))
    with pytest.raises(StudyFileError, match="damaged spec of study 's' .*lower must be .*got 'abc'"):
        ckb.Optimizer.load(path, "s")
