"""TrialConfig's fields are checked when it is made: one-line errors naming the field, not a raw TypeError
from deep inside Trial."""

import pytest

from ckb.errors import CKBError, InvalidInputError
from ckb.runner.trial import Trial, TrialConfig

BASE = dict(
    algorithm="a", policy="igp-ucb", problem="rkhs-synthetic", horizon=5, problem_params={"n_grid": 10}
)


def _config(**changes):
    return TrialConfig(**{**BASE, **changes})


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"policy_params": None}, "policy_params must be a table .*got None"),
        ({"problem_params": []}, r"problem_params must be a table .*got \[\]"),
        ({"environment_params": "x"}, "environment_params must be a table"),
        ({"inputs": None}, "inputs must be a table"),
        ({"policy_params": {1: 2}}, "policy_params.*keys must be strings.*1"),
        ({"policy_params": {"kernel": "x"}}, r"policy_params\['kernel'\] must be a table.*'x'"),
        ({"environment_params": {"x": 1}}, "environment 'basic' has no parameter 'x'"),
        ({"policy": 5}, "policy must be a string"),
        ({"algorithm": None}, "algorithm must be a string"),
    ],
)
def test_bad_fields_are_named(changes, match):
    with pytest.raises(InvalidInputError, match=match) as err:
        Trial(_config(**changes))
    assert "\n" not in str(err.value)


def test_good_configs_are_unchanged():
    cfg = _config(policy_params={"kernel": {"type": "se", "lengthscale": 0.2}})
    assert Trial(cfg).run().t == 5
    assert _config().config_hash() == _config().config_hash()
    with pytest.raises(CKBError, match="Unknown environment 'nope'"):
        Trial(_config(environment="nope"))


def test_a_spec_with_a_bad_kernel_table_is_a_spec_error():
    from ckb.errors import SpecError
    from ckb.experiments import ExperimentSpec

    raw = {
        "name": "tiny",
        "horizon": 5,
        "trials": 1,
        "problem": {"name": "rkhs-synthetic", "n_grid": 10},
        "algorithms": {"ucb": {"policy": "igp-ucb", "kernel": "x"}},
    }
    with pytest.raises(SpecError, match=r"test.toml.*kernel.*'x'"):
        ExperimentSpec.from_dict(raw, source="test.toml").validate()
