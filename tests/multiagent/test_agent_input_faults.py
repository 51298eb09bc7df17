"""Agent, coordinator and backend construction in the multi-agent harness (public through
``ckb.multiagent``). Before: a ``system`` or ``model`` table that was not a dict, or had an unknown key,
was a raw TypeError; seeds -1, [0, -1] and {"entropy": 1} were numpy's ValueError or a KeyError; a
coordinator took n_agents = 0 or "a" (a ValueError later); a backend given as 3 or None crashed inside
the did-you-mean helper; and a NaN number read "must be finite, but entry () is array(nan)"."""

import numpy as np
import pytest

from ckb._validation import check_finite_array
from ckb.errors import CKBError
from ckb.multiagent import MultiAgentTrial, MultiAgentTrialConfig
from ckb.multiagent.coordinator import Coordinator

CFG = MultiAgentTrialConfig(
    algorithm="a", method="dmabo", problem="gp-samples", horizon=3, problem_params={"grid_size": 20}
)


def _raises(call, match):
    with pytest.raises(CKBError, match=match) as exc:
        call()
    assert "\n" not in str(exc.value)


def test_an_agent_names_a_bad_system_model_or_seed():
    with MultiAgentTrial(CFG) as trial:
        kw = dict(trial.setup.agent_kwargs[0])
        make = trial.setup.agent_cls
        cases = [
            ({"system": [1]}, r"agent 0: system must be a dict of keyword parameters, got \[1\]"),
            ({"system": {**kw["system"], "bogus": 1}}, r"agent 0's system has no parameter 'bogus'"),
            ({"model": {**kw["model"], "kernal": 1}}, r"agent 0's model has no parameter 'kernal'.*'kernel'"),
            ({"seed": -1}, r"seed must be an int >= 0.*got -1"),
            ({"seed": [0, -1]}, r"seed must be an int >= 0.*got \[0, -1\]"),
            ({"seed": {"entropy": 1}}, r"seed must be an int >= 0.*got \{'entropy': 1\}"),
        ]
        for change, match in cases:
            _raises(lambda change=change: make(**{**kw, **change}), match)
        assert make(**{**kw, "seed": [0, 1, 2]}).t == 0


@pytest.mark.parametrize(
    "n_agents, match", [(0, "n_agents must be >= 1"), ("a", "n_agents must be an integer")]
)
def test_a_coordinator_needs_a_number_of_agents(n_agents, match):
    _raises(lambda: Coordinator(n_agents), match)


def test_a_backend_that_is_not_a_name_is_one_line():
    _raises(
        lambda: MultiAgentTrial(CFG, backend=3),
        r"the agents' backend must be a backend name \('inprocess', 'ray'\), got 3",
    )
    _raises(
        lambda: MultiAgentTrialConfig(
            algorithm="a", method="dmabo", problem="gp-samples", horizon=3, backend=None
        ),
        r"MultiAgentTrialConfig.backend must be a backend name .*got None",
    )


def test_a_number_that_is_not_finite_is_named_without_an_entry():
    _raises(lambda: check_finite_array(float("nan"), "lam1"), r"^lam1 must be finite, got nan\.$")
    _raises(lambda: check_finite_array([1.0, np.inf], "x"), r"x must be finite, but entry \[1\] is")
