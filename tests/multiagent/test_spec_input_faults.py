"""Multi-agent specs and method parameters: one-line errors naming the field (probe report A7, A8, C2, D1)."""

import copy

import numpy as np
import pytest

from ckb.errors import InvalidInputError, SpecError
from ckb.multiagent import MULTIAGENT_PROBLEMS
from ckb.multiagent.dmabo import DMABOAgent, DMABOCoordinator
from ckb.multiagent.methods import MAX_MAGNITUDE, build_setup
from ckb.multiagent.spec import MultiAgentSpec
from tests.multiagent.ma_helpers import TINY_SPEC, small_problem

RAW = TINY_SPEC


def _spec_error(match, **label):
    raw = copy.deepcopy(RAW)
    raw["algorithms"]["dmabo"].update(label)
    with pytest.raises(SpecError, match=match) as exc:
        MultiAgentSpec.from_dict(raw).validate()
    assert "\n" not in str(exc.value)
    return str(exc.value)


def _raises(match, fn, *args, **kwargs):
    with pytest.raises(InvalidInputError, match=match) as exc:
        fn(*args, **kwargs)
    assert "\n" not in str(exc.value)
    return str(exc.value)


# ----------------------------------------------------------------------------------- C2: backends
@pytest.mark.parametrize("backend", [3, None, ["ray"]])
def test_non_string_backend_is_one_line(backend):
    _spec_error(
        r"^field 'algorithms\.dmabo\.backend'.* must be a backend name \('inprocess', 'ray'\), got ",
        backend=backend,
    )


def test_unknown_backend_still_gets_a_suggestion():
    _spec_error(r"unknown backend 'rya'\. Did you mean 'ray'\?", backend="rya")


def test_inprocess_backend_options_are_refused_at_validation():
    _spec_error(
        r"^field 'algorithms\.dmabo\.backend_options'.*: the 'inprocess' backend takes no options, got \['address'\]\.$",
        backend_options={"address": "x"},
    )


def test_unknown_ray_backend_option_is_refused_at_validation():
    _spec_error(
        r"^field 'algorithms\.dmabo\.backend_options'.*: the 'ray' backend has no parameter 'bogus_opt'\.",
        backend="ray",
        backend_options={"bogus_opt": 1},
    )


def test_known_ray_backend_options_pass_validation():
    raw = copy.deepcopy(RAW)
    raw["algorithms"]["dmabo"].update(backend="ray", backend_options={"address": "local", "num_cpus": 2})
    MultiAgentSpec.from_dict(raw).validate()


# ------------------------------------------------------------------------- C2: plugin factories
@pytest.mark.parametrize("error", [ValueError("shift must be >= 0, got -1"), TypeError("bad\nshift")])
def test_plugin_problem_factory_error_is_one_line_naming_the_problem(monkeypatch, error):
    def factory(rng, *, shift: float = 0.0):
        raise error

    monkeypatch.setitem(MULTIAGENT_PROBLEMS._items, "_test-bad", factory)
    raw = copy.deepcopy(RAW)
    raw["problem"] = {"name": "_test-bad", "shift": -1}
    with pytest.raises(SpecError) as exc:
        MultiAgentSpec.from_dict(raw).validate()
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith("field 'problem'") and "multi-agent problem '_test-bad' could not be built: " in msg
    assert f"{type(error).__name__}: " in msg and " ".join(str(error).split()) in msg


def test_non_string_method_parameter_name_is_one_line():
    _raises(
        r"^method 'dmabo' has no parameter 1\. Known: ",
        build_setup,
        "dmabo",
        small_problem(),
        {1: 2},
        5,
        0,
        0,
    )


# ---------------------------------------------------------------------------- D1: names of values
@pytest.mark.parametrize(
    "params, match",
    [
        ({"gp_method": "fast"}, r"^gp_method must be one of 'auto', 'cholesky', 'dense', got 'fast'\."),
        ({"surrogate": "gpp"}, r"^surrogate must be one of 'gp', 'oracle', got 'gpp'\. Did you mean 'gp'\?"),
        ({"tie_break": 3}, r"^tie_break must be one of 'random', 'first', got 3\.$"),
        ({"lam1": float("nan")}, r"^lam1 must be finite, got nan\.$"),
    ],
)
def test_method_parameters_are_named_as_given(params, match):
    _raises(match, build_setup, "dmabo", small_problem(), params, 5, 0, 0)


@pytest.mark.parametrize("beta", [np.float32(2.0), np.float64(2.0), np.int64(2)])
def test_numpy_number_is_a_number_for_beta(beta):
    s = build_setup("dmabo", small_problem(), {"beta": beta}, 5, 0, 0)
    agent = s.agent_cls(**s.agent_kwargs[0])
    assert agent.model.beta(1).tolist() == [2.0, 2.0]


# ------------------------------------------------------------------------ A7: overflowing values
@pytest.mark.parametrize(
    "params, match",
    [
        ({"lam1": 1e308}, r"^lam1 must be at most 1e\+100 in absolute value"),
        ({"lam1": [1.0, 1e200]}, r"^lam1 must be at most 1e\+100 in absolute value"),
        ({"mu1": -1e200}, r"^mu1 must be at most 1e\+100 in absolute value"),
        ({"eta": 1e300}, r"^eta must be <= 1e\+100, got 1e\+300\.$"),
        ({"eps": 1e308}, r"^eps must be <= 1e\+100, got 1e\+308\.$"),
        ({"eps_scale": 1e308}, r"^eps_scale must be <= 1e\+100"),
    ],
)
def test_overflowing_method_parameters_are_refused(params, match):
    _raises(match, build_setup, "dmabo", small_problem(m=2), params, 5, 0, 0)


def test_overflowing_values_refused_by_the_parts_too():
    _raises(r"^lambda_1 must be at most", DMABOCoordinator, 1, b=[], eps=0.0, lam1=[1e300], mu1=[])
    _raises(r"^eps must be <= 1e\+100", DMABOCoordinator, 1, b=[], eps=1e300, lam1=[0.0], mu1=[])
    s = build_setup("dmabo", small_problem(), {}, 5, 0, 0)
    _raises(r"^eta must be <= 1e\+100", DMABOAgent, **{**s.agent_kwargs[0], "eta": 1e300})
    _raises(
        r"^Q \(penalty\) must be <= 1e\+100",
        build_setup,
        "admm-penalty",
        small_problem(m=0),
        {"Q": 1e300},
        5,
        0,
        0,
    )
    assert MAX_MAGNITUDE == 1e100


# -------------------------------------------------------------------------- A8: no-effect values
@pytest.mark.parametrize(
    "m, affine, params, key",
    [
        (0, True, {"lam1": 5.0}, "lam1"),
        (0, True, {"lam1": [5.0]}, "lam1"),
        (0, True, {"eps": 0.5}, "eps"),
        (0, True, {"eps_scale": 0.5}, "eps_scale"),
        (0, True, {"mode": "theory", "eps_cap": 0.1}, "eps_cap"),
        (0, True, {"mode": "theory", "eps": "eps1"}, "eps"),
        (1, False, {"mu1": [1.0]}, "mu1"),
        (1, False, {"mu1": 0.0}, "mu1"),
    ],
)
def test_parameters_without_effect_are_refused(m, affine, params, key):
    problem = small_problem(m=m, affine=affine)
    _raises(
        rf"^{key} would have no effect: problem 'small' has ", build_setup, "dmabo", problem, params, 5, 0, 0
    )
