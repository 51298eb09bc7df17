"""A corrupt or foreign trace file is redone, but never silently: it is kept aside as ``*.corrupt`` and
named in one warning line (tester's report, CLI item 14)."""

import pytest
from typer.testing import CliRunner

from ckb.cli import app
from ckb.runner import Trace, run_sweep, sweep
from ckb.runner.sweep import trace_path
from tests.runner.test_sweep import configs

runner = CliRunner()


def test_a_corrupt_trace_is_kept_aside_and_named(tmp_path):
    cfg = configs(1, horizon=5)[:1]
    path = trace_path(tmp_path, cfg[0])
    path.parent.mkdir(parents=True)
    path.write_bytes(b"hello")
    with pytest.warns(sweep.SweepWarning, match=r"trial-0000\.npz.*trial-0000\.npz\.corrupt"):
        run_sweep(cfg, tmp_path, workers=1, executor="serial")
    assert Trace.load(path).t == 5
    assert path.with_name("trial-0000.npz.corrupt").read_bytes() == b"hello"
    # a second bad file does not replace the first one kept aside
    path.write_bytes(b"again")
    with pytest.warns(sweep.SweepWarning, match=r"trial-0000\.npz\.corrupt-1"):
        run_sweep(cfg, tmp_path, workers=1, executor="serial")
    assert path.with_name("trial-0000.npz.corrupt").read_bytes() == b"hello"
    assert path.with_name("trial-0000.npz.corrupt-1").read_bytes() == b"again"


def test_the_cli_prints_one_warning_line_for_a_corrupt_trace(tmp_path):
    out = tmp_path / "run"
    args = ["experiment", "gpucb-synthetic", "-n", "1", "-T", "5", "--no-plots", "--executor", "serial"]
    args += ["-o", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    bad = out / "traces" / "igp-ucb" / "trial-0000.npz"
    bad.write_text("hello")
    res = runner.invoke(app, args, env={"COLUMNS": "300"})
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and str(bad) in warnings[0] and "corrupt" in warnings[0], res.output
    assert "Warning" not in res.output  # no raw Python warning with a source line
    assert "1 trial(s) run, 0 reused" in res.output
    assert (out / "traces" / "igp-ucb" / "trial-0000.npz.corrupt").read_text() == "hello"
