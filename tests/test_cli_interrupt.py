"""A second and third Ctrl-C while ckb experiment shuts its process pool down printed a traceback from the
pool's exit hook (or the 'interrupted' note twice). After the first, the CLI now ignores Ctrl-C until the
process ends, having said the note once."""

import subprocess
import sys

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
    folder written."""
    res = subprocess.run(
        [sys.executable, "-c", PROGRESS.format(done=0)], capture_output=True, text=True, timeout=120
    )
    assert res.stdout.split()[-1] == "130", res.stderr
    msg = " ".join(res.stderr.split())
    assert "no trial had finished, nothing new is under runs/x; re-run the same command to run them." in msg
    assert "are saved" not in msg
    res = subprocess.run(
        [sys.executable, "-c", PROGRESS.format(done=2)], capture_output=True, text=True, timeout=120
    )
    msg = " ".join(res.stderr.split())
    assert "finished trials are saved under runs/x; re-run the same command to resume." in msg
