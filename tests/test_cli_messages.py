"""Messages a docs probe found unclear, and the catalog generator's command line. Before:
- a mistyped paper listed the internal numeric aliases (000-004) among the known papers;
- --beta-scale abc repeated the value ("got 'abc': 'abc'");
- python -m ckb.catalog --help wrote a file named --help, a second argument was ignored without a
  word and a missing folder was a traceback."""

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from ckb.cli import app


def test_an_unknown_paper_lists_the_papers_short_names_only():
    res = CliRunner().invoke(app, ["reproduce", "zhou-ji-202", "--report-only"])
    assert res.exit_code != 0
    known = res.output.split("Known:")[1]
    assert "zhou-ji-2022" in known and "000" not in known and "002" not in known


def test_a_beta_scale_that_is_not_a_number_is_said_once():
    res = CliRunner().invoke(app, ["experiment", "gpucb-synthetic", "--beta-scale", "abc"])
    assert res.exit_code == 2
    assert res.output.count("'abc'") == 1, res.output
    res = CliRunner().invoke(app, ["experiment", "gpucb-synthetic", "--beta-scale", "0.1,abc"])
    assert "got '0.1,abc' ('abc' is not a number)." in res.output


def _catalog(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "ckb.catalog", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_catalog_command_line(tmp_path):
    res = _catalog("--help", cwd=tmp_path)
    assert res.returncode == 0 and "usage: python -m ckb.catalog" in res.stdout
    assert list(tmp_path.iterdir()) == []
    res = _catalog("a.md", "b.md", cwd=tmp_path)
    assert res.returncode == 2 and "unrecognized arguments: b.md" in res.stderr
    res = _catalog(str(tmp_path / "missing" / "x.md"), cwd=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "does not exist" in res.stderr
    res = _catalog("catalog.md", cwd=tmp_path)
    assert res.returncode == 0 and (tmp_path / "catalog.md").read_text().startswith("# Catalog")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.md"]


def test_a_missing_study_reads_as_its_message_and_a_storage_path_gets_the_url_hint(tmp_path):
    """str() of StudyNotFoundError (a KeyError) was the message in quotes; --storage x.db did not say
    that Optuna expects a URL."""
    from ckb.studies import StudyNotFoundError, StudyStorage

    spec = {"lower": [0.0], "upper": [1.0], "m": 1, "direction": "maximize", "policy": "rpol-ucb"}
    with StudyStorage(tmp_path / "s.db") as storage:
        storage.create_study("demo", spec)
        with pytest.raises(StudyNotFoundError) as exc:
            storage.tell("dmeo", 0, 1.0, [0.0])
    assert str(exc.value).startswith("no study named 'dmeo'"), str(exc.value)
    res = subprocess.run(
        [sys.executable, "-m", "ckb.integrations.optuna", "--demo", "--storage", "x.db"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode != 0 and "a database URL is expected, e.g. sqlite:///x.db" in res.stderr
