"""The worked example of docs/adding-a-rule.md runs as written: a new rule in one module plus its
registration works in the harness and in ckb.Optimizer (in a fresh process: it registers names)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-a-rule.md"

pytest.importorskip("botorch")


def test_the_worked_example_runs_in_both_worlds(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 2
    check = """
assert trial.done and trial.policy.rule.lam >= 1.0
assert opt.metrics()["evaluations"] == 12 and opt.policy.rule.lam >= 1.0
from ckb.policies import make_policy
from ckb.errors import InvalidInputError
try:
    ckb.Optimizer([0, 0], [1, 1], m=1, policy="soft-barrier", budget=12, eta=-1.0)
except InvalidInputError as exc:
    assert "eta" in str(exc)
else:
    raise AssertionError("eta = -1 was accepted")
print("OK")
"""
    code = blocks[0] + "\n" + blocks[1] + "\n" + check
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("OK")
