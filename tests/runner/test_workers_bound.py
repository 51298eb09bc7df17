"""More process workers than CPUs only slows a run (each worker is a process importing numpy and SciPy):
it is said once, and no more processes than tasks are ever started (``-w 1000`` started one per task)."""

import os

import pytest
from typer.testing import CliRunner

from ckb.cli import app
from ckb.runner import executors
from ckb.runner.executors import ExecutorWarning, ProcessExecutor


def test_more_workers_than_cpus_are_said_once():
    with pytest.warns(ExecutorWarning, match=rf"{os.cpu_count() + 5} workers on this machine's"):
        ProcessExecutor(os.cpu_count() + 5)


def test_no_more_processes_than_tasks(monkeypatch):
    started = []

    class Pool(executors.ProcessPoolExecutor):
        def __init__(self, max_workers, **kw):
            started.append(max_workers)
            super().__init__(max_workers, **kw)

    monkeypatch.setattr(executors, "ProcessPoolExecutor", Pool)
    with pytest.warns(ExecutorWarning):
        ex = ProcessExecutor(64)
    assert sorted(r for _, r in ex.map_unordered(abs, [-1, -2, -3])) == [1, 2, 3]
    assert started == [3]


def test_the_cli_prints_the_warning_as_one_line(tmp_path):
    res = CliRunner().invoke(
        app,
        [
            "experiment",
            "gpucb-synthetic",
            "-n",
            "2",
            "-T",
            "5",
            "-w",
            "1000",
            "--no-plots",
            "-o",
            str(tmp_path),
        ],
        env={"COLUMNS": "300"},
    )
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if "1000 workers" in line]
    assert len(lines) == 1 and lines[0].startswith("warning: 1000 workers on this machine's")
