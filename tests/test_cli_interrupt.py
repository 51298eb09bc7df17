"""A second and third Ctrl-C while ckb experiment shuts its process pool down printed a traceback from the
pool's exit hook (or the 'interrupted' note twice). After the first, the CLI now ignores Ctrl-C until the
process ends, having said the note once."""

import subprocess
import sys

import pytest

SCRIPT = """
import signal, typer
from ckb.cli import _interrupted
try:
    _interrupted("finished trials are kept.")
except typer.Exit as exc:
    print(exc.exit_code, signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
"""


def test_after_the_first_ctrl_c_further_ones_are_ignored():
    res = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["130", "True"]
    assert res.stderr.count("interrupted") == 1 and "finished trials are kept." in res.stderr


PROGRESS = """
import typer
from pathlib import Path
from ckb.cli import _progress
try:
    with _progress("trials", 4, Path("runs/x")) as (bar, task):
        for _ in range({done}):
            bar.update(task, advance=1)
        raise KeyboardInterrupt
except typer.Exit as exc:
    print(exc.exit_code)
"""


def test_a_ctrl_c_before_any_trial_finished_does_not_say_trials_were_saved():
    """Before, an early Ctrl-C said "finished trials are saved under runs/x" with none finished and no
    folder written; then "nothing new is under runs/x", while a worker, which writes its trial before the
    command counts it, may have written one."""
    res = subprocess.run(
        [sys.executable, "-c", PROGRESS.format(done=0)], capture_output=True, text=True, timeout=120
    )
    assert res.stdout.split()[-1] == "130", res.stderr
    msg = " ".join(res.stderr.split())
    assert "no trial was counted as finished; re-run the same command to run them (a trial a worker" in msg
    assert "finished meanwhile is kept under runs/x)." in msg
    assert "are saved" not in msg
    res = subprocess.run(
        [sys.executable, "-c", PROGRESS.format(done=2)], capture_output=True, text=True, timeout=120
    )
    msg = " ".join(res.stderr.split())
    assert "finished trials are saved under runs/x; re-run the same command to resume." in msg


def _default_sigint():
    """In the child before exec: Ctrl-C's default action, as a command typed in a terminal has it. A test
    run started as a background job (`pytest ... &` in a script) ignores SIGINT, and a child inherits an
    ignored signal: the command would never see the Ctrl-C the test sends."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args, tmp_path):
    return subprocess.Popen(
        [sys.executable, "-m", "ckb.cli", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's job or `timeout`'s command
        preexec_fn=_default_sigint,
    )


def _once_a_trace_is_written(proc, folder, timeout=120):
    import time

    end = time.monotonic() + timeout
    while not any(folder.rglob("trial-*.npz")):
        assert proc.poll() is None and time.monotonic() < end, proc.communicate()
        time.sleep(0.05)


def test_ctrl_c_to_the_process_group_of_a_reproduction_is_one_note(tmp_path):
    """Before, `ckb reproduce` had no Ctrl-C note: a terminal's Ctrl-C (to the whole group, so the command
    saw it twice with `timeout`) ended in a traceback from the process pool's exit hook."""
    import os
    import signal
    import time

    proc = _start(["reproduce", "zhou-ji-2022", "--quick", "--out", "q", "--workers", "2"], tmp_path)
    _once_a_trace_is_written(proc, tmp_path / "q")
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stderr.count("interrupted: finished runs are kept; re-run the same command to resume.") == 1, (
        stderr
    )
    assert "Traceback" not in stderr, stderr


def _default_stop_signals():
    """Before exec: SIGINT's and SIGTERM's default actions, as a command started by a shell has them."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.mark.parametrize("to_group", [True, False], ids=["to-the-group-twice", "to-the-command"])
def test_sigterm_stops_a_sweep_with_one_note_and_keeps_its_trials(tmp_path, to_group):
    """SIGTERM (``kill``, ``timeout``, a batch scheduler) ended ``ckb experiment -w 2`` at once, with no
    note and Python's "leaked semaphore objects" warning. It now stops the run as Ctrl-C does: one
    "terminated" note, exit code 143, the finished trials kept and readable. ``timeout`` signals the
    command and then its whole group: the second signal, which reached the pool's shutdown, is ignored."""
    import os
    import signal

    import numpy as np

    args = ["experiment", "ckb-synthetic-half", "--trials", "40", "-w", "2", "--out", "x"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ckb.cli", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_default_stop_signals,
    )
    _once_a_trace_is_written(proc, tmp_path / "x")
    if to_group:
        os.kill(proc.pid, signal.SIGTERM)
        os.killpg(proc.pid, signal.SIGTERM)
    else:
        os.kill(proc.pid, signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 143, stderr
    # "finished trials are saved", or, before this process counted the trial on disk, "no trial was counted"
    assert stderr.count("terminated: ") == 1 and "re-run the same command" in stderr, stderr
    assert "Traceback" not in stderr and "leaked" not in stderr, stderr
    traces = sorted((tmp_path / "x").rglob("trial-*.npz"))
    assert traces
    for path in traces:
        with np.load(path) as data:
            assert data.files
