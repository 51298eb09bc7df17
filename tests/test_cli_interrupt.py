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
