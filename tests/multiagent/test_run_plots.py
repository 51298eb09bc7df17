"""A multi-agent run plots the average utility only for a problem that has one (power allocation), as
its summary reports ``average_utility`` only then. Before, ``utility_over_t.png`` (minus the average
objective, labelled a utility) was written for every problem, the GP-sample ones included."""

import pytest

from ckb.experiments import run_experiment
from ckb.multiagent.spec import MultiAgentSpec


def _spec(problem):
    return MultiAgentSpec.from_dict(
        {
            "kind": "multiagent",
            "name": "tiny",
            "horizon": 5,
            "trials": 1,
            "problem": problem,
            "algorithms": {"dmabo": {"method": "dmabo", "beta": 2.0}},
        }
    )


@pytest.mark.parametrize(
    "problem, utility",
    [
        ({"name": "power-allocation", "n_agents": 2, "grid_size": 11}, True),
        ({"name": "gp-samples", "n_agents": 2, "m": 1, "grid_size": 20}, False),
    ],
)
def test_the_utility_is_plotted_only_for_a_utility_problem(tmp_path, problem, utility):
    summary = run_experiment(_spec(problem), tmp_path, workers=1, executor="serial")
    assert ("average_utility" in summary["algorithms"]["dmabo"]) is utility
    assert (tmp_path / "utility_over_t.png").exists() is utility
    assert (tmp_path / "regret.png").exists()
