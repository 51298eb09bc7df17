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


def test_a_kernel_object_in_the_policy_params_is_checkpointed_as_its_table(tmp_path):
    from ckb.kernels import SquaredExponential

    params = {"R": 0.1, "kernel": SquaredExponential(lengthscale=0.2)}
    cfg = TrialConfig(**{**CFG.to_dict(), "policy_params": params})
    table = TrialConfig(
        **{
            **CFG.to_dict(),
            "policy_params": {"R": 0.1, "kernel": {"type": "se", "lengthscale": 0.2, "variance": 1.0}},
        }
    )
    assert cfg.config_hash() == table.config_hash()  # the same kernel, the same configuration
    trial = Trial(cfg)
    trial.run(until=5)
    trial.save_checkpoint(tmp_path / "k.npz")
    np.testing.assert_array_equal(Trial.resume(tmp_path / "k.npz").run().x, Trial(cfg).run().x)


def test_a_kernel_without_a_table_cannot_be_checkpointed_and_says_so(tmp_path, monkeypatch):
    """A kernel its table does not rebuild (a precomputed matrix) stays an object: saving it was a
    TypeError traceback 11 frames deep."""
    from ckb.kernels import SquaredExponential
    from ckb.runner import trial as trial_module

    monkeypatch.setattr(trial_module, "_as_table", lambda kernel: None)  # as for a PrecomputedKernel
    cfg = TrialConfig(**{**CFG.to_dict(), "policy_params": {"R": 0.1, "kernel": SquaredExponential(0.2)}})
    trial = Trial(cfg)
    trial.run(until=3)
    with pytest.raises(
        InvalidInputError, match=r"cannot checkpoint trial 0 of 'a': .*give kernels as tables"
    ):
        trial.save_checkpoint(tmp_path / "p.npz")
    assert not (tmp_path / "p.npz").exists()


def test_only_a_kernel_its_table_rebuilds_becomes_a_table():
    from ckb.kernels import Matern, PrecomputedKernel
    from ckb.runner.trial import _as_table

    assert _as_table(Matern(0.3, nu=1.5)) == {
        "type": "matern",
        "lengthscale": 0.3,
        "variance": 1.0,
        "nu": 1.5,
    }
    assert _as_table(PrecomputedKernel(np.eye(3))) is None
