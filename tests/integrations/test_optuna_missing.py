"""Without Optuna (the state after the README's first quick-start command), ``python -m
ckb.integrations.optuna --demo`` was a traceback ending in advice that cannot work (``pip install
'ckb[optuna]'``: ckb is not on PyPI). Now it is one line with the install from the checkout."""

import subprocess
import sys

BLOCKED = (
    "import sys, runpy; sys.modules['optuna'] = None; sys.argv = ['optuna', '--demo'];"
    "runpy.run_module('ckb.integrations.optuna', run_name='__main__')"
)


def test_the_demo_without_optuna_is_one_line_with_the_install_that_works():
    res = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True, timeout=120)
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert "pip install -e '.[optuna]' in your ckb checkout (ckb is not on PyPI)" in lines[0]
