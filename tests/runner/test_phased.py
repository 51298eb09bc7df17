import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.problems import make_problem
from ckb.runner import Trial, TrialConfig
from ckb.runner.environments.phased import PhasedEnvironment

PROB = {"grid": 30}


def test_phases_switch_at_the_given_rounds_and_regret_is_dynamic():
    P = make_problem("gardner-phases", np.random.default_rng(0), **PROB)
    env = PhasedEnvironment(P, np.random.default_rng(1))
    C = P.domain.candidates
    x = C[123]
    truth = [
        (-np.sin(x[0]) - x[1], np.sin(x[0]) * np.sin(x[1]) + 0.95),
        (-np.sin(x[0] - 5) - x[1], np.sin(x[0]) * np.sin(x[1] + 5) + 0.5),
        (-np.sin(x[0] + 4) - x[1], np.sin(x[0] + 5) * np.sin(x[1]) + 0.95),
    ]
    for t in range(1, 501):
        out = env.step(123)
        k = 0 if t <= 100 else (1 if t <= 300 else 2)
        assert out.f == pytest.approx(truth[k][0]) and out.g[0] == pytest.approx(truth[k][1])
        assert out.u_star == P.phase_utility_star[k]
    # each phase's optimum is its best feasible grid point
    for k, (f, g) in enumerate(
        [
            (
                lambda X, a=a, b=b, h=h, c=c: (
                    -np.sin(X[:, 0] + a) - X[:, 1],
                    np.sin(X[:, 0] + c) * np.sin(X[:, 1] + b) + h,
                )
            )(C)
            for a, b, h, c in ((0, 0, 0.95, 0), (-5, 5, 0.5, 0), (4, 0, 0.95, 5))
        ]
    ):
        assert P.phase_utility_star[k] == pytest.approx(np.max(f[g <= 0]))


def test_trial_records_per_round_optima_and_the_metrics_use_them(tmp_path):
    cfg = TrialConfig("p", "rpol-ucb", "gardner-phases", 120, 0, 0, {}, PROB, environment="phased")
    tr = Trial(cfg).run()
    P = make_problem("gardner-phases", np.random.default_rng(0), **PROB)
    ref = tr.regret_reference
    assert np.all(ref[:100] == P.phase_utility_star[0]) and np.all(ref[100:] == P.phase_utility_star[1])
    from ckb.runner.metrics import final_metrics

    assert final_metrics(tr)["regret"] == pytest.approx(np.sum(ref - tr.f))
    part = Trial(cfg)
    part.run(until=90)
    part.save_checkpoint(tmp_path / "c.npz")
    rest = Trial.resume(tmp_path / "c.npz").run()
    np.testing.assert_array_equal(rest.regret_reference, ref)


@pytest.mark.parametrize("environment", ["basic", "delayed"])
def test_a_phased_problem_is_refused_by_every_other_environment(environment):
    """Before, it ran and played phase 1 for the whole horizon, with regret against phase 1's optimum."""
    cfg = TrialConfig("p", "rpol-ucb", "gardner-phases", 150, 0, 0, {}, PROB, environment=environment)
    want = rf"^problem 'gardner-phases' needs environment 'phased', got '{environment}': .*first phase"
    with pytest.raises(InvalidInputError, match=want) as err:
        Trial(cfg)
    assert "\n" not in str(err.value)
    from ckb.errors import SpecError
    from ckb.experiments import ExperimentSpec

    raw = {
        "name": "x",
        "horizon": 10,
        "trials": 1,
        "problem": {"name": "gardner-phases", **PROB},
        "environment": {"name": environment},
        "algorithms": {"r": {"policy": "rpol-ucb"}},
    }
    with pytest.raises(SpecError, match=r"^field 'environment' in x.toml: problem 'gardner-phases' needs"):
        ExperimentSpec.from_dict(raw, source="x.toml").validate()


def test_phased_environment_needs_a_phased_problem():
    with pytest.raises(InvalidInputError, match="phased problem"):
        PhasedEnvironment(
            make_problem("gardner", np.random.default_rng(0), grid=10), np.random.default_rng(0)
        )
    with pytest.raises(InvalidInputError, match="starts"):
        make_problem("gardner-phases", np.random.default_rng(0), grid=10, starts=[1, 300, 101])
