"""A checkpoint continues the run it came from, or is refused: an interrupted round (trace, environment
and policy at different rounds) is not saved; a checkpoint whose parts disagree (a trace of another
configuration, other settings, non-finite values, counters apart) is not resumed. And configurations
that differ only inside a numpy array hash differently (two different problems had one hash)."""

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.io import load_state, save_state
from ckb.runner.trial import Trial, TrialConfig

CFG = TrialConfig(
    algorithm="a",
    policy="ckb-ucb",
    horizon=30,
    problem="rkhs-synthetic",
    policy_params={"R": 0.1},
    problem_params={"n_grid": 30, "constraint": "neg-f-plus-h"},
)


def test_an_interrupted_round_is_not_checkpointed(tmp_path):
    trial = Trial(CFG)
    tell = trial.policy.tell

    def interrupted(obs):
        if obs.t == 12:
            raise KeyboardInterrupt
        return tell(obs)

    trial.policy.tell = interrupted
    with pytest.raises(KeyboardInterrupt):
        trial.run()
    with pytest.raises(
        InvalidInputError, match=r"a round was interrupted \(the trace at round 11, the environment"
    ):
        trial.save_checkpoint(tmp_path / "c.npz")
    assert not (tmp_path / "c.npz").exists()


@pytest.fixture
def checkpoint(tmp_path):
    trial = Trial(CFG)
    trial.run(until=10)
    path = tmp_path / "c.npz"
    trial.save_checkpoint(path)
    return path


def _edited(path, edit):
    state = load_state(path)
    edit(state)
    save_state(path, state)
    return path


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda s: s["config"].update(seed=1), "trace records configuration"),
        (lambda s: s["config"]["policy_params"].update(R=0.5), "trace records configuration"),
        (lambda s: s["trace"].update(sign=-1.0), "trace has sign = -1.0"),
        (lambda s: s["trace"].update(utility_star=7.0), "trace has utility_star = 7.0"),
        (lambda s: s["trace"]["f"].__setitem__(3, np.nan), "trace's f holds non-finite values"),
        (lambda s: s["env"].update(t=3), "the environment at round 3"),
    ],
)
def test_a_checkpoint_whose_parts_disagree_is_refused(checkpoint, edit, match):
    with pytest.raises(InvalidInputError, match=match):
        Trial.resume(_edited(checkpoint, edit))


def test_a_consistent_checkpoint_resumes_bit_for_bit(checkpoint):
    full = Trial(CFG).run()
    resumed = Trial.resume(checkpoint).run()
    np.testing.assert_array_equal(resumed.x, full.x)
    np.testing.assert_array_equal(resumed.y, full.y)


def test_configs_differing_inside_an_array_hash_differently():
    a = np.linspace(0, 1, 2000)
    b = a.copy()
    b[3:-3] = 0.9 - a[3:-3]
    small = [np.array([0.5]), np.array([0.5 + 1e-10])]
    for u, v in ((a, b), small):
        cu = TrialConfig(algorithm="a", policy="igp-ucb", problem="p", horizon=5, problem_params={"w": u})
        cv = TrialConfig(algorithm="a", policy="igp-ucb", problem="p", horizon=5, problem_params={"w": v})
        assert cu.config_hash() != cv.config_hash()


def test_a_numpy_integer_hashes_as_the_python_integer():
    a = TrialConfig(algorithm="a", policy="igp-ucb", problem="p", horizon=5, seed=3)
    b = TrialConfig(algorithm="a", policy="igp-ucb", problem="p", horizon=5, seed=np.int64(3))
    assert a.config_hash() == b.config_hash()
