"""A user's problem that fails to build is reported against [problem], as one line, before any trial runs
(docs/your-own-problem.md); a problem whose true functions go bad mid-run is a clear error, never a NaN in
the results."""

import numpy as np
import pytest
from typer.testing import CliRunner

from ckb.cli import app
from ckb.errors import InvalidInputError, SpecError
from ckb.experiments import ExperimentSpec
from ckb.kernels.stationary import SquaredExponential
from ckb.problems import PROBLEMS, BoxDomain, FiniteDomain, GaussianNoise, Problem
from ckb.runner.trial import Trial, TrialConfig


def _bumpy_line(rng, *, n_grid=40):
    if n_grid < 2:
        raise ValueError(f"n_grid must be >= 2, got {n_grid}.")
    x = np.linspace(0.0, 1.0, n_grid)
    f = np.exp(-((x - 0.5) ** 2) / 0.02)
    return Problem(
        "bumpy",
        FiniteDomain(x[:, None]),
        f,
        (0.2 - f)[:, None],
        GaussianNoise(0.05, 0.05),
        kernel=SquaredExponential(lengthscale=0.1),
        hints={"B": 1.0},
    )


def _broken_g(rng):
    def g(Z):
        raise RuntimeError("user g broke")

    x = np.linspace(0, 1, 5)[:, None]
    return Problem("broken", FiniteDomain(x), x[:, 0], g, GaussianNoise(0.1, 0.1))


def _box_g_nan(rng):
    return Problem(
        "box-g-nan",
        BoxDomain([0.0], [1.0]),
        lambda Z: Z[:, 0],
        lambda Z: np.where(Z > 0.2, np.nan, Z),
        GaussianNoise(0.05, 0.05),
        kernel=SquaredExponential(lengthscale=0.2),
        optimum=([0.0], 0.0),
    )


FACTORIES = {
    "uperr-bumpy": _bumpy_line,
    "uperr-broken-g": _broken_g,
    "uperr-none": lambda rng: None,
    "uperr-box-g-nan": _box_g_nan,
}


@pytest.fixture(autouse=True)
def registered():
    for name, factory in FACTORIES.items():
        PROBLEMS.add(name, factory)
    yield
    for name in FACTORIES:
        PROBLEMS._items.pop(name, None)


def _spec(problem):
    raw = {
        "name": "tiny",
        "horizon": 5,
        "trials": 1,
        "problem": problem,
        "algorithms": {"ucb": {"policy": "igp-ucb", "B": 1.0}},
    }
    return ExperimentSpec.from_dict(raw, source="my.toml")


@pytest.mark.parametrize(
    "problem, match",
    [
        ({"name": "uperr-bumpy", "n_grid": 1}, "n_grid must be >= 2, got 1"),
        ({"name": "uperr-bumpy", "n_grid": "abc"}, "TypeError"),
        ({"name": "uperr-broken-g"}, "RuntimeError: user g broke"),
        ({"name": "uperr-none"}, "returned None"),
    ],
)
def test_a_bad_user_problem_is_reported_against_the_problem_table(problem, match):
    with pytest.raises(SpecError, match=rf"field 'problem' in my.toml: .*{match}") as err:
        _spec(problem).validate()
    assert "\n" not in str(err.value)


def test_a_nan_constraint_on_a_box_stops_the_trial_naming_the_problem():
    trial = Trial(TrialConfig(algorithm="a", policy="igp-ucb", problem="uperr-box-g-nan", horizon=8))
    with pytest.raises(InvalidInputError, match=r"problem 'box-g-nan': constraints\(x\) is \[nan\]"):
        trial.run()


def test_the_cli_reports_a_bad_user_problem_in_one_line(tmp_path):
    spec = tmp_path / "my.toml"
    spec.write_text(
        'name = "my"\nhorizon = 5\ntrials = 1\n[problem]\nname = "uperr-bumpy"\nn_grid = 1\n'
        '[algorithms.ucb]\npolicy = "igp-ucb"\n'
    )
    res = CliRunner().invoke(app, ["experiment", str(spec), "--out", str(tmp_path / "out")])
    assert res.exit_code != 0
    assert "Traceback" not in res.output and "n_grid must be >= 2, got 1" in res.output


def test_a_problem_without_a_feasible_candidate_is_blamed_on_the_problem_table():
    """It was reported against [algorithms.ucb], the first place that asked for the optimum."""

    def infeasible(rng):
        x = np.linspace(0.0, 1.0, 10)
        return Problem(
            "infeasible", FiniteDomain(x[:, None]), x, (1.0 + x)[:, None], GaussianNoise(0.05, 0.05),
            kernel=SquaredExponential(lengthscale=0.1), hints={"B": 1.0},
        )  # fmt: skip

    PROBLEMS.add("uperr-infeasible", infeasible)
    try:
        with pytest.raises(
            SpecError, match=r"field 'problem' in my.toml: problem 'infeasible' has no feasible candidate"
        ):
            _spec({"name": "uperr-infeasible"}).validate()
    finally:
        PROBLEMS._items.pop("uperr-infeasible", None)
