"""``ckb study list|show|export`` on a study file (typer's CliRunner)."""

import csv
import hashlib
import io
import os
import re
import sqlite3

import numpy as np
import pytest
from typer.testing import CliRunner

import ckb
from ckb.cli_study import study_app
from ckb.studies import StudyStorage

runner = CliRunner()


@pytest.fixture
def study(tmp_path):
    """A study of 6 design points: 4 complete (2 violating), 1 failed, 1 pending; plus a bare storage study."""
    path = tmp_path / "s.db"
    opt = ckb.Optimizer(
        [0, 0], [1, 1], m=2, policy="ckb-ucb", budget=10, n_init=6, storage=path, study_name="pump"
    )
    X = opt.ask(6)
    vals = [(1.0, [0.5, -1.0]), (3.0, [-0.1, 0.0]), (5.0, [2.0, 0.25]), (2.0, [-1.0, -1.0])]
    for x, (y, g) in zip(X, vals):
        opt.tell(x, y, g)
    opt.tell(X[4], failed=True, note="crashed, disk full")
    opt.close()
    with StudyStorage(path) as s:
        s.create_study("raw", {"lower": [0.0], "upper": [1.0], "m": 1, "direction": "minimize"})
        k = s.ask("raw", [0.5])
        s.tell("raw", k, 2.0, [-1.0])
    return path, X


def test_list_shows_every_study(study):
    path, _ = study
    res = runner.invoke(study_app, ["list", str(path)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    cells = lambda row: [c.strip() for c in row.split("│")[1:-1]]
    rows = {cells(r)[0]: cells(r) for r in res.output.splitlines() if r.startswith("│")}
    assert rows["pump"] == ["pump", "ckb-ucb", "2", "2", "10", "4", "1", "1", "3"]
    assert rows["raw"] == ["raw", "", "1", "1", "", "1", "0", "0", "2"]


def test_show_prints_the_trials_and_writes_the_plot(study, tmp_path):
    path, _ = study
    out = tmp_path / "plots" / "pump.png"
    res = runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(out)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    # hand-computed (ckb.violation): sums of g (1.4, -1.75) -> violation 1.4; sums of [g]+ (2.5, 0.25)
    assert (
        "4 evaluations, 2 violating, violation 1.4, positive violation 2.51247, best feasible 3" in res.output
    )
    assert "crashed, disk full" in res.output and "pending" in res.output
    assert "numerics: 0 fit warning(s), 0 acquisition warning(s), 0 failed fit(s)" in res.output
    assert "ckb-ucb constants: " in res.output and "feasibility_first=True" in " ".join(res.output.split())
    assert f"plot: {out}" in res.output and out.stat().st_size > 1000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    res = runner.invoke(study_app, ["show", str(path), "raw"])  # default plot path beside the file
    assert res.exit_code == 0 and (path.parent / "s-raw.png").exists()


def test_show_last_n_prints_the_last_trials_and_the_totals_of_all(study, tmp_path):
    """A 400-trial study printed 400 rows with no way to limit them."""
    path, _ = study
    out = tmp_path / "p.png"
    res = runner.invoke(
        study_app, ["show", str(path), "pump", "--plot", str(out), "--last", "2"], env={"COLUMNS": "200"}
    )
    assert res.exit_code == 0, res.output
    assert "the last 2 of 6 trials" in " ".join(res.output.split())
    cells = lambda row: [c.strip() for c in row.split("│")[1:-1]]
    assert [cells(r)[0] for r in res.output.splitlines() if r.startswith("│")] == ["4", "5"]  # trials 4, 5
    assert "4 evaluations, 2 violating" in res.output  # the totals still count every trial
    res = runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(out), "--last", "0"])
    assert res.exit_code == 2 and "--last must be a number of trials >= 1, got 0." in res.output


def test_show_prints_the_violation_budget_and_the_numerics(tmp_path):
    path = tmp_path / "s.db"
    spec = {"kind": "ckb.Optimizer", "lower": [0.0], "upper": [1.0], "m": 2, "violation_budget": [1.0, 0.5]}
    num = {"fit_warnings": 2, "acq_warnings": 1, "fit_failed": 1, "messages": ["NumericalWarning: jitter"]}
    with StudyStorage(path) as s:
        s.create_study("tuned", spec)
        s.tell("tuned", s.ask("tuned", [0.5], {"source": "init"}), 1.0, [3.0, 3.0])  # the design: not charged
        s.tell("tuned", s.ask("tuned", [0.2], {"source": "policy", "numerics": num}), 1.0, [0.25, 1.0])
    res = runner.invoke(study_app, ["show", str(path), "tuned"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    flat = " ".join(res.output.split())
    assert "violation budget [1, 0.5]: spent [0.25, 1], left [0.75, 0]" in flat
    assert (
        "numerics: 2 fit warning(s), 1 acquisition warning(s), 1 failed fit(s); first: NumericalWarning: jitter"
        in flat
    )


def test_export_writes_exact_values(study, tmp_path):
    path, X = study
    out = tmp_path / "x.csv"
    res = runner.invoke(study_app, ["export", str(path), "pump", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [r["state"] for r in rows] == ["complete"] * 4 + ["failed", "pending"]
    assert float(rows[2]["objective"]) == 5.0 and rows[2]["g1"] == "0.25" and rows[2]["feasible"] == "False"
    assert np.array([float(rows[0]["x0"]), float(rows[0]["x1"])]).tolist() == X[0].tolist()  # bit-exact
    assert (
        rows[4]["note"] == "crashed, disk full" and rows[4]["objective"] == "" and rows[5]["source"] == "init"
    )
    res = runner.invoke(study_app, ["export", str(path), "raw"])  # to stdout
    assert res.exit_code == 0 and res.output.splitlines()[0].startswith("number,state,source,x0,objective,g0")


@pytest.mark.parametrize(
    "args, match",
    [
        (["show", "{path}", "pmup"], "no study named 'pmup'.*Did you mean 'pump'"),
        (["export", "{path}", "nope"], "no study named 'nope'"),
        (["list", "{missing}"], "no study file at"),
    ],
)
def test_errors_are_named_and_the_file_is_unchanged(study, tmp_path, args, match):
    import re

    path, _ = study
    before = path.read_bytes()
    args = [a.format(path=path, missing=tmp_path / "missing.db") for a in args]
    res = runner.invoke(study_app, args)
    assert res.exit_code == 2 and re.search(match, res.output.replace("\n", " "))
    assert not (tmp_path / "missing.db").exists()
    with StudyStorage(path) as s:
        assert len(s.trials("pump")) == 6
    assert len(before) > 0


def test_the_main_cli_has_the_study_commands(study):
    from ckb.cli import app

    path, _ = study
    res = runner.invoke(app, ["study", "list", str(path)], env={"COLUMNS": "200"})
    assert res.exit_code == 0 and "pump" in res.output


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line_error(res, *needles):
    """Exit code 2, no traceback, one line naming what is wrong."""
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit), res.output
    text = res.output.strip()
    assert text.startswith("error:") and "Traceback" not in text and "\n" not in text
    flat = " ".join(text.split())
    for needle in needles:
        assert needle in flat, (needle, flat)


@pytest.mark.parametrize("command", [["list"], ["show", "x"], ["export", "x"]])
def test_read_only_commands_leave_a_foreign_database_byte_identical(tmp_path, command):
    """``ckb study list other.db`` added three tables and a column to someone else's database and
    switched it to WAL; now the file is opened read-only and refused unchanged."""
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE trials(id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO trials(name) VALUES ('theirs')")
    conn.commit()
    conn.close()
    before, files = _digest(path), sorted(os.listdir(tmp_path))
    res = runner.invoke(study_app, [command[0], str(path), *command[1:]])
    _one_line_error(res, "other.db is not a ckb study file", "'trials'", "expected a SQLite study file")
    assert _digest(path) == before and sorted(os.listdir(tmp_path)) == files


@pytest.mark.parametrize(
    "content, needle",
    [
        (b"pump settings, not a database\n" * 40, "is not a SQLite database"),
        (b"", "is empty"),
        ("cut", "truncated or damaged"),
    ],
)
def test_a_file_that_is_not_a_readable_study_is_a_one_line_error(study, tmp_path, content, needle):
    path, _ = study
    bad = tmp_path / "bad.db"
    bad.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2] if content == "cut" else content)
    before = _digest(bad)
    for command in (["list", str(bad)], ["show", str(bad), "pump"], ["export", str(bad), "pump"]):
        _one_line_error(runner.invoke(study_app, command), "bad.db", needle)
    assert _digest(bad) == before


def test_show_a_study_whose_name_has_a_slash(tmp_path):
    """The default plot name was built from the study name, and a slash raised a ValueError traceback."""
    path = tmp_path / "s.db"
    with StudyStorage(path) as s:
        s.create_study("line 2/pump", {"lower": [0.0], "upper": [1.0], "m": 1})
        s.tell("line 2/pump", s.ask("line 2/pump", [0.5]), 1.0, [-1.0])
    res = runner.invoke(study_app, ["show", str(path), "line 2/pump"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    (png,) = [p.name for p in tmp_path.iterdir() if p.suffix == ".png"]  # one file, not a directory
    assert re.fullmatch(r"s-line_2_pump-[0-9a-f]{8}\.png", png) and (tmp_path / png).stat().st_size > 1000


@pytest.mark.parametrize("umask, mode", [(0o002, 0o664), (0o077, 0o600)])
def test_written_files_honor_the_umask(study, tmp_path, umask, mode):
    path, _ = study
    old = os.umask(umask)
    try:
        assert (
            runner.invoke(
                study_app, ["export", str(path), "pump", "--out", str(tmp_path / "x.csv")]
            ).exit_code
            == 0
        )
        res = runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(tmp_path / "p.png")])
        assert res.exit_code == 0
    finally:
        os.umask(old)
    assert {oct((tmp_path / f).stat().st_mode & 0o777) for f in ("x.csv", "p.png")} == {oct(mode)}


def _damage(path, sql, *args):
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    "command", [["export", "{s}", "pump", "--out", "{s}"], ["show", "{s}", "pump", "--plot", "{s}"]]
)
@pytest.mark.parametrize("name", ["g.db", "g.png", "g.csv"])
def test_writing_over_the_study_file_is_refused(study, tmp_path, monkeypatch, command, name):
    """``export --out g3.db`` / ``show --plot g4.png`` on the study file itself replaced the study by the
    CSV or the plot (exit 0): every stored trial lost."""
    path, _ = study
    target = tmp_path / name
    target.write_bytes(path.read_bytes())
    before, files = _digest(target), sorted(os.listdir(tmp_path))
    monkeypatch.chdir(tmp_path)
    for out in (str(target), name, f"./sub/../{name}"):  # the same file by other spellings too
        args = [a.format(s=target) for a in command[:-1]] + [out]
        res = runner.invoke(study_app, args, env={"COLUMNS": "200"})
        if command[0] == "show" and not name.endswith(".png"):  # refused earlier: not an image format
            assert res.exit_code == 2 and "error:" in res.output
        else:
            _one_line_error(res, f"{name}", "is the study file", "nothing was written")
        assert _digest(target) == before and sorted(os.listdir(tmp_path)) == files
    with StudyStorage(target, read_only=True) as s:
        assert len(s.trials("pump")) == 6


@pytest.mark.parametrize("plot", ["out.txt", "s.db", "out.xyz"])
def test_a_plot_format_matplotlib_cannot_write_is_a_one_line_error(study, tmp_path, plot):
    path, _ = study
    before, files = _digest(path), sorted(os.listdir(tmp_path))
    res = runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(tmp_path / plot)])
    ext = plot.rsplit(".", 1)[1]
    _one_line_error(res, f"'.{ext}'", "png", "svg", "nothing was written")
    assert _digest(path) == before and sorted(os.listdir(tmp_path)) == files


def test_a_plot_without_an_extension_is_a_png_and_its_real_path_is_printed(study, tmp_path):
    path, _ = study
    res = runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(tmp_path / "adir")])
    assert res.exit_code == 0, res.output
    written = tmp_path / "adir.png"
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and not (tmp_path / "adir").exists()
    assert f"plot: {written}" in " ".join(res.output.split())


@pytest.mark.parametrize(
    "sql, needle",
    [
        (
            "UPDATE trials SET objective = NULL WHERE number = 1",
            "trial 1 of study 'pump': its objective None",
        ),
        ("UPDATE trials SET constraints = NULL WHERE number = 1", "trial 1 of study 'pump': its constraints"),
        (
            "UPDATE trials SET constraints = '[1.0]' WHERE number = 1",
            "trial 1 of study 'pump': its constraints",
        ),
        ("UPDATE trials SET x = '[0.1]' WHERE number = 1", "trial 1 of study 'pump': its x [0.1]"),
        ("UPDATE trials SET info = '[1]' WHERE number = 1", "trial 1 of study 'pump': its info [1]"),
        ("UPDATE studies SET spec = json_set(spec, '$.m', 'x') WHERE name = 'pump'", "spec of study 'pump'"),
        (
            "UPDATE studies SET spec = json_set(spec, '$.violation_budget', json('[\"a\", 1]')) "
            "WHERE name = 'pump'",
            "spec of study 'pump' (violation_budget ['a', 1]",
        ),
        (
            "UPDATE studies SET spec = json_set(spec, '$.violation_budget', json('[1, 2, 3]')) "
            "WHERE name = 'pump'",
            "spec of study 'pump' (violation_budget [1, 2, 3]",
        ),
        (
            "UPDATE studies SET spec = json_set(spec, '$.violation_budget', json('[-1, 2]')) "
            "WHERE name = 'pump'",
            "spec of study 'pump' (violation_budget [-1, 2]",
        ),
        (
            "UPDATE trials SET info = json_set(info, '$.numerics', json('{\"fit_warnings\": \"x\"}')) "
            "WHERE number = 1",
            "trial 1 of study 'pump': its info['numerics'] {'fit_warnings': 'x'}",
        ),
        (
            "UPDATE trials SET info = json_set(info, '$.numerics', json('[1]')) WHERE number = 1",
            "trial 1 of study 'pump': its info['numerics'] [1]",
        ),
        (
            "UPDATE trials SET info = json_set(info, '$.numerics', json('{\"messages\": 3}')) "
            "WHERE number = 1",
            "trial 1 of study 'pump': its info['numerics'] {'messages': 3}",
        ),
    ],
)
def test_damaged_rows_are_one_line_errors_in_every_command(study, sql, needle):
    path, _ = study
    _damage(path, sql)
    before = _digest(path)
    for command in (["list", str(path)], ["show", str(path), "pump"], ["export", str(path), "pump"]):
        res = runner.invoke(study_app, command, env={"COLUMNS": "200"})
        _one_line_error(res, "s.db holds a damaged", needle)
    assert _digest(path) == before


@pytest.mark.parametrize(
    "command, name", [(["export", "--out"], "other.db"), (["show", "--plot"], "other.png")]
)
def test_writing_over_another_study_file_is_refused(study, tmp_path, command, name):
    """``export --out other.db`` (or ``show --plot`` on a study file named like a plot) replaced another
    study file by the CSV or the plot (exit 0): every trial of that study lost."""
    path, _ = study
    other = tmp_path / name
    other.write_bytes(path.read_bytes())
    before = _digest(other)
    res = runner.invoke(study_app, [command[0], str(path), "pump", command[1], str(other)])
    _one_line_error(res, name, "exists and is a SQLite database", "nothing was written")
    assert _digest(other) == before


def test_export_replaces_an_export_but_not_a_foreign_file(study, tmp_path):
    path, _ = study
    out = tmp_path / "x.csv"
    for _ in range(2):  # an export written before is replaced, as asked
        assert runner.invoke(study_app, ["export", str(path), "pump", "--out", str(out)]).exit_code == 0
    assert out.read_text().startswith("number,state,source,x0,x1,objective,g0,g1,")
    (tmp_path / "notes.txt").write_text("my measurements\n1,2,3\n")
    res = runner.invoke(study_app, ["export", str(path), "pump", "--out", str(tmp_path / "notes.txt")])
    _one_line_error(
        res, "notes.txt", "not a CSV export of a study", "b'my measurements", "nothing was written"
    )
    assert (tmp_path / "notes.txt").read_text() == "my measurements\n1,2,3\n"
    (tmp_path / "empty.csv").write_text("")  # an empty file holds nothing to lose
    res = runner.invoke(study_app, ["export", str(path), "pump", "--out", str(tmp_path / "empty.csv")])
    assert res.exit_code == 0 and (tmp_path / "empty.csv").read_text().startswith("number,")


def test_a_failed_plot_write_keeps_the_old_plot(study, tmp_path, monkeypatch):
    """The plot was written in place: a write that failed halfway (disk full) left a truncated file where
    the previous plot was."""
    from matplotlib.figure import Figure

    path, _ = study
    out = tmp_path / "p.png"
    assert runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(out)]).exit_code == 0
    before = _digest(out)

    def half_written(self, fname, **kwargs):
        if isinstance(fname, (str, os.PathLike)):
            with open(fname, "wb") as fh:
                fh.write(b"\x89PNG half")
        else:
            fname.write(b"\x89PNG half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", half_written)
    res = runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output  # the plot is written before the table
    last = " ".join(res.output.strip().splitlines()[-1].split())
    assert last.startswith("error: could not write the plot") and "No space left on device" in last
    assert _digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left


def test_a_device_or_fifo_is_never_replaced(study, tmp_path):
    """``export --out`` / ``show --plot`` replaced a FIFO (as root, /dev/null itself) by a regular file."""
    path, _ = study
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    for command in (
        ["export", str(path), "pump", "--out", str(fifo)],
        ["show", str(path), "pump", "--plot", str(fifo)],
    ):
        _one_line_error(
            runner.invoke(study_app, command), "pipe.png", "is not a regular file", "nothing was written"
        )
        assert fifo.is_fifo()


def test_a_plot_writer_that_fails_is_one_line(study, tmp_path, monkeypatch):
    """``--plot x.pgf`` without xelatex ended in a 116-line traceback (only OSError was caught)."""
    from matplotlib.figure import Figure

    def no_tex(self, *args, **kwargs):
        raise RuntimeError("'xelatex' not found; install it\nor change rcParams")

    monkeypatch.setattr(Figure, "savefig", no_tex)
    path, _ = study
    res = runner.invoke(study_app, ["show", str(path), "pump", "--plot", str(tmp_path / "x.pgf")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    last = " ".join(res.output.strip().splitlines()[-1].split())
    assert (
        last.startswith("error: could not write the plot")
        and "'xelatex' not found; install it or change" in last
    )
    assert not (tmp_path / "x.pgf").exists()


def test_show_never_cuts_a_value_on_a_narrow_terminal(study, tmp_path):
    """At 80 columns (or piped) rich cut numbers to '0…' and squeezed g0 and note to nothing: the table
    was measured on a console capped at the terminal's width."""
    path, X = study
    res = runner.invoke(
        study_app, ["show", str(path), "pump", "--plot", str(tmp_path / "p.png")], env={"COLUMNS": "40"}
    )
    assert res.exit_code == 0, res.output
    assert "…" not in res.output
    assert "crashed, disk full" in res.output and f"{X[0][0]:.4g}" in res.output


def test_a_damaged_minimize_flag_is_refused(study):
    """A spec whose minimize was the string 'false' was read as True: the best feasible value shown was
    the minimum of a maximized study."""
    path, _ = study
    conn = sqlite3.connect(path)
    spec = conn.execute("SELECT spec FROM studies WHERE name = 'pump'").fetchone()[0]
    assert '"minimize":false' in spec
    conn.execute(
        "UPDATE studies SET spec = ? WHERE name = 'pump'",
        (spec.replace('"minimize":false', '"minimize":"false"'),),
    )
    conn.commit()
    conn.close()
    _one_line_error(
        runner.invoke(study_app, ["show", str(path), "pump"]),
        "damaged spec",
        "minimize must be true or false",
    )


def test_the_study_plot_marks_every_evaluation_and_counts_from_zero(tmp_path, monkeypatch):
    """The steps ended at the last evaluation with a tick, hiding its value, and the axis of violating
    evaluations started at 1, so its bottom read as 0."""
    import matplotlib.pyplot as plt

    from ckb import cli_study

    shown, close = [], plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: shown.append(fig))
    curves = {
        "best": np.array([np.nan, 2.0, 1.5]),
        "violation": np.array([0.3, 0.3, 0.5]),
        "positive_violation": np.array([0.3, 0.3, 0.5]),
        "violating": np.array([1.0, 1.0, 2.0]),
    }
    cli_study._plot(curves, "s", {"minimize": True}, tmp_path / "s.png")
    fig = shown[-1]
    a, b, b2 = fig.axes
    assert all(line.get_marker() == "." for ax in (a, b, b2) for line in ax.lines)
    assert b.get_ylim()[0] == 0.0 and b2.get_ylim()[0] == 0.0
    close(fig)
