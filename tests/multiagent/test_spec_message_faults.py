"""Multi-agent spec messages that named the wrong thing or gave no way out (probe report 1.3, 4, 5), and
``--horizon`` that silently reached no label (the header said T = 50 while the labels ran at their own)."""

import copy
import warnings

import numpy as np
import pytest

from ckb.errors import InvalidInputError, SpecError
from ckb.experiments import load_spec
from ckb.multiagent import admm_penalty
from ckb.multiagent.problems import make_multiagent_problem
from ckb.multiagent.spec import HorizonWarning, MultiAgentSpec
from tests.checks import one_line
from tests.multiagent.ma_helpers import TINY_SPEC

RAW = TINY_SPEC


def _spec_error(top=None, **label):
    """The one-line error of RAW with ``top`` added to its [problem] table and ``label`` to dmabo's."""
    raw = copy.deepcopy(RAW)
    raw["algorithms"]["dmabo"].update(label)
    raw["problem"].update(top or {})
    with pytest.raises(SpecError) as exc:
        MultiAgentSpec.from_dict(raw).validate()
    return one_line(exc)


# ------------------------------------------------------------------------------------- 4: messages
def test_a_label_problem_table_cannot_set_name():
    msg = _spec_error(problem={"name": "gp-samples"})
    assert msg.startswith("field 'algorithms.dmabo.problem' cannot set 'name' (got 'gp-samples')")
    assert "[problem] name = 'power-allocation'" in msg and "multiple values" not in msg


def test_eta_string_names_the_accepted_one():
    msg = _spec_error(eta="1/T")
    assert "eta must be a number > 0 or the string '1/sqrt(T)'" in msg and "'1/T'" in msg


def test_eps_rule_in_practical_mode_says_it_needs_theory_mode():
    msg = _spec_error(eps="eps2")
    assert "eps = 'eps2'" in msg and "mode = 'theory'" in msg


def test_counterexample_with_gp_agents_suggests_the_oracle_surrogate():
    raw = copy.deepcopy(RAW)
    raw["problem"] = {"name": "counterexample"}
    with pytest.raises(SpecError, match=r"gives no kernel for the agents' GPs.*surrogate = 'oracle'") as exc:
        MultiAgentSpec.from_dict(raw).validate()
    one_line(exc)


def test_an_error_of_the_problem_table_blames_it_not_the_first_label():
    msg = _spec_error({"n_agents": -1})
    assert msg.startswith("field 'problem': n_agents must be >= 1, got -1.")
    assert "algorithm 'dmabo'" not in msg


def test_an_error_of_a_label_problem_override_blames_the_label():
    msg = _spec_error(problem={"n_agents": -1})
    assert msg.startswith("field 'algorithms.dmabo.problem': n_agents must be >= 1, got -1.")
    # the [problem] table's own error stays the table's, though the label overrides another parameter
    msg = _spec_error({"n_agents": -1}, problem={"grid_size": 21})
    assert msg.startswith("field 'problem': n_agents must be >= 1")


def test_gp_samples_whose_variance_cannot_give_the_slater_margin_says_so_at_once():
    with pytest.raises(InvalidInputError) as exc:
        make_multiagent_problem("gp-samples", np.random.default_rng(0), variance=1e-300, grid_size=20)
    msg = one_line(exc)
    assert "cannot reach min_slater = 0.05 with variance = 1e-300" in msg and "draws" not in msg


def test_gp_samples_instances_are_unchanged():
    a = make_multiagent_problem("gp-samples", np.random.default_rng(3), grid_size=20, n_agents=2)
    b = make_multiagent_problem("gp-samples", np.random.default_rng(3), grid_size=20, n_agents=2)
    assert a.metadata["draws"] == b.metadata["draws"]
    for fa, fb in zip(a.f + a.g, b.f + b.g):
        np.testing.assert_array_equal(fa, fb)


def test_admm_penalty_docstring_says_what_round_one_does():
    doc = admm_penalty.__doc__
    assert "taken as 0 before its first observation" not in doc
    assert "the EI term is\n  left out" in doc


# --------------------------------------------------------------------------- 5: --horizon
def test_horizon_that_reaches_no_label_is_refused():
    spec = load_spec("dmabo-counterexample")
    with pytest.raises(SpecError) as exc:
        spec.with_overrides(horizon=50)
    msg = one_line(exc)
    assert msg.startswith("--horizon 50 reaches no algorithm")
    assert "T100 (T = 100)" in msg and "--set algorithms.LABEL.horizon=T" in msg


def test_horizon_that_leaves_some_labels_at_their_own_warns_naming_them():
    spec = load_spec("dmabo-scaling")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = spec.with_overrides(horizon=60)
    msgs = [str(w.message) for w in caught if issubclass(w.category, HorizonWarning)]
    assert len(msgs) == 1 and "\n" not in msgs[0]
    assert "N8-T100 (T = 100)" in msgs[0] and "N8-T1600 (T = 1600)" in msgs[0]
    assert out.horizon == 60


def test_horizon_without_labels_of_their_own_is_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert load_spec("dmabo-power").with_overrides(horizon=7).horizon == 7
        load_spec("dmabo-counterexample").with_overrides(trials=1)  # no --horizon: nothing to say
