"""A trial that raises in the sweep (a user's problem that fails only for some instance, or any error
inside a trial) ends the run with one line naming the trial, its label and the error (type, message and
where), and the finished trials stay on disk; it printed a raw traceback naming nothing."""

import numpy as np
import pytest
from typer.testing import CliRunner

from ckb.cli import app
from ckb.errors import CKBError
from ckb.experiments import ExperimentSpec, run_experiment
from ckb.kernels.stationary import SquaredExponential
from ckb.problems import PROBLEMS, FiniteDomain, GaussianNoise, Problem


def _flaky(rng):
    u = rng.uniform()  # 0.57, 0.95 and 0.27 for trials 0, 1 and 2 (seed 0)
    if u > 0.9:
        raise ValueError(f"bad instance u={u:.2f}")
    x = np.linspace(0.0, 1.0, 5)
    kernel = SquaredExponential(lengthscale=0.2)
    noise = GaussianNoise(0.1, 0.1)
    return Problem("flaky", FiniteDomain(x[:, None]), x, (x - 0.5)[:, None], noise, kernel=kernel)


@pytest.fixture
def flaky():
    PROBLEMS.add("test-flaky", _flaky)
    yield
    PROBLEMS._items.pop("test-flaky", None)


RAW = {
    "name": "fl",
    "horizon": 5,
    "trials": 3,
    "problem": {"name": "test-flaky"},
    "algorithms": {"ucb": {"policy": "igp-ucb", "B": 1.0}},
}


def test_a_failing_trial_is_named_and_the_finished_ones_are_kept(flaky, tmp_path):
    spec = ExperimentSpec.from_dict(RAW, source="fl.toml")
    with pytest.raises(CKBError) as err:
        run_experiment(spec, tmp_path, executor="serial", plots=False)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        "trial 1 of 'ucb' failed (ValueError: bad instance u=0.95, at test_failing_trial.py:"
    )
    assert "finished trials are kept" in message
    assert sorted(p.name for p in (tmp_path / "traces" / "ucb").iterdir()) == ["trial-0000.npz"]


def test_the_cli_prints_one_line(flaky, tmp_path):
    spec = tmp_path / "fl.toml"
    spec.write_text(
        'name = "fl"\nhorizon = 5\ntrials = 3\n[problem]\nname = "test-flaky"\n[algorithms.ucb]\npolicy = "igp-ucb"\n'
    )
    res = CliRunner().invoke(
        app,
        ["experiment", str(spec), "-o", str(tmp_path / "o"), "--executor", "serial"],
        env={"COLUMNS": "300"},
    )
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert res.output.splitlines()[-1].startswith("error: trial 1 of 'ucb' failed (ValueError: bad instance")
