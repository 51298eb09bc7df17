"""A benchmark spec giving a baseline a parameter it does not take names the baseline, the parameter and
the ones it takes (it named the internal class ``_AskTell.__init__``)."""

from typer.testing import CliRunner

from ckb.cli import app


def _error(override, tmp_path):
    res = CliRunner().invoke(
        app, ["experiment", "constrained-bo", "--set", override, "-o", str(tmp_path)], env={"COLUMNS": "400"}
    )
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    return res.output.strip().splitlines()[-1]


def test_an_unknown_baseline_parameter_is_named_with_the_known_ones(tmp_path):
    line = _error("algorithms={qlognei={mc_sample=1}}", tmp_path)
    assert "baseline 'qlognei' has no parameter 'mc_sample'. Did you mean 'mc_samples'" in line
    assert "_AskTell" not in _error("algorithms={sobol={x=1}}", tmp_path)
