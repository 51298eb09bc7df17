"""Problem parameters of the wrong kind are named in a one-line error before anything is built.

Yes/no parameters must be real booleans (``"false"`` is truthy), ``data_dir`` must be a path, and noise
levels must be finite, non-negative and small enough for float arithmetic (``1e308`` used to end in
numpy's ``high <= 0`` deep inside a policy).
"""

import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.multiagent.problems import make_multiagent_problem
from ckb.problems import GaussianNoise, GaussianRewardNoise, ResampledReadings, UniformNoise, make_problem
from ckb.problems.data import FINANCE_FILE, LIGHT_SENSOR_FILE, find_data_file, problem_inputs
from tests.checks import one_line as _one_line


# ------------------------------------------------------------------------------------------- booleans
def test_check_bool_accepts_booleans_only():
    from ckb._validation import check_bool

    assert check_bool(True, "flag") is True and check_bool(np.bool_(False), "flag") is False
    for bad in ("false", "true", "flase", 1, 0, 1.0, None, "", [True]):
        with pytest.raises(InvalidInputError, match=r"^flag must be true or false, got ") as err:
            check_bool(bad, "flag")
        assert repr(bad) in _one_line(err)


@pytest.mark.parametrize("param", ["normalize", "positive_max"])
@pytest.mark.parametrize("value", ["false", "flase", 1, 0, "true"])
def test_rkhs_synthetic_bool_params_must_be_booleans(param, value):
    with pytest.raises(InvalidInputError, match=f"{param} must be true or false, got {value!r}"):
        make_problem("rkhs-synthetic", np.random.default_rng(0), **{param: value})


def test_rkhs_synthetic_false_is_not_read_as_true():
    rng = np.random.default_rng
    off = make_problem("rkhs-synthetic", rng(0), normalize=False, positive_max=np.bool_(False))
    on = make_problem("rkhs-synthetic", rng(0))
    assert not np.allclose(off.f_values, on.f_values)


def test_multiagent_require_active_must_be_boolean():
    with pytest.raises(InvalidInputError, match="require_active must be true or false, got 'false'"):
        make_multiagent_problem("gp-samples", np.random.default_rng(0), require_active="false")


def test_problem_minimize_must_be_boolean():
    from ckb.contract.domain import FiniteDomain
    from ckb.problems import Problem

    domain = FiniteDomain(np.arange(3.0)[:, None])
    with pytest.raises(InvalidInputError, match="minimize must be true or false, got 'no'"):
        Problem("p", domain, np.zeros(3), None, GaussianNoise(0.0, 0.0), minimize="no")


# ------------------------------------------------------------------------------------------- data_dir
@pytest.mark.parametrize("value", [3, 2.5, True, ["d"], {"d": 1}, b"bytes", "", "  "])
@pytest.mark.parametrize("problem", ["finance", "light-sensor"])
def test_data_dir_of_the_wrong_type_is_named(problem, value):
    with pytest.raises(InvalidInputError, match=r"data_dir must be a path") as err:
        make_problem(problem, np.random.default_rng(0), data_dir=value)
    assert repr(value) in _one_line(err)
    # the digest of the inputs (computed when a sweep is planned, before the problem is built) too
    with pytest.raises(InvalidInputError, match=r"data_dir must be a path"):
        problem_inputs(problem, {"data_dir": value})


def test_find_data_file_names_a_bad_data_dir():
    for name in (FINANCE_FILE, LIGHT_SENSOR_FILE):
        with pytest.raises(InvalidInputError, match=r"data_dir must be a path .*got 3 \(int\)"):
            find_data_file(name, 3)


# ---------------------------------------------------------------------------------------- noise levels
NOISE_PARAMS = [
    ("rkhs-synthetic", "reward_std"),
    ("rkhs-synthetic", "constraint_std"),
    ("gardner", "reward_std"),
    ("gardner", "constraint_std"),  # checked even when constraint_noise = "none" leaves it unused
    ("gardner-phases", "reward_std"),
    ("gardner-phases", "constraint_std"),
    ("fixed-penalty-counterexample", "reward_std"),
    ("gpu-queue", "reward_std"),
    ("rate-allocation", "utility_noise_std"),
    ("rate-allocation", "constraint_half_width"),
    ("branin-disk", "noise_std"),
    ("gardner-1", "noise_std"),
    ("gramacy", "noise_std"),
    ("hartmann6-ball", "noise_std"),
    ("welded-beam", "relative_noise"),
    ("tension-spring", "relative_noise"),
    ("speed-reducer", "relative_noise"),
]


@pytest.mark.parametrize(("problem", "param"), NOISE_PARAMS)
@pytest.mark.parametrize("value", [1e308, 1e101, -0.1, float("inf"), float("nan"), "0.1", True])
def test_noise_levels_out_of_range_are_named(problem, param, value):
    with pytest.raises(InvalidInputError, match=rf"^{param} must ") as err:
        make_problem(problem, np.random.default_rng(0), **{param: value})
    _one_line(err)


@pytest.mark.parametrize(("problem", "param"), NOISE_PARAMS)
def test_large_but_representable_noise_levels_are_accepted(problem, param):
    p = make_problem(problem, np.random.default_rng(0), **{param: 1e6})
    assert p.noise is not None


def test_the_bound_is_stated():
    with pytest.raises(
        InvalidInputError, match=r"^reward_std must be a noise level in \[0, 1e\+100\] .*got 1e\+308"
    ):
        make_problem("rkhs-synthetic", np.random.default_rng(0), reward_std=1e308)


@pytest.mark.parametrize("problem", ["finance", "light-sensor"])
def test_real_data_constraint_std_is_bounded(problem, tmp_path):
    # checked before the data are looked for
    with pytest.raises(InvalidInputError, match="constraint_std must be "):
        make_problem(
            problem,
            np.random.default_rng(0),
            data_dir=tmp_path,
            constraint_noise="independent",
            constraint_std=1e308,
        )


def test_noise_models_bound_their_scales():
    for build, name in [
        (lambda v: GaussianNoise(v, 0.1), "reward_std"),
        (lambda v: GaussianNoise(0.1, v), "constraint_std"),
        (lambda v: GaussianNoise(0.1, [0.1, v]), "constraint_std"),
        (lambda v: UniformNoise(v, 0.1), "reward_half_width"),
        (lambda v: UniformNoise(0.1, v), "constraint_half_width"),
        (lambda v: GaussianRewardNoise(v), "reward_std"),
        (lambda v: GaussianRewardNoise(0.1, "gaussian", v), "constraint_scale"),
        (lambda v: ResampledReadings(np.ones((2, 2)), constraint_std=v), "constraint_std"),
    ]:
        with pytest.raises(InvalidInputError, match=f"^{name} must be "):
            build(1e308)
        build(1e100)  # the largest level accepted


@pytest.mark.parametrize("param", ["noise_std", "constraint_noise_std"])
def test_multiagent_noise_levels_are_bounded(param):
    from ckb.multiagent.problems import MultiAgentProblem

    grid = np.linspace(0, 1, 3)[:, None]
    with pytest.raises(InvalidInputError, match=f"^{param} must be "):
        MultiAgentProblem("p", [grid], [np.zeros(3)], **{param: 1e308})
