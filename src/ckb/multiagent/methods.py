"""How a multi-agent method is set up for a problem: the registry and the shared agent kwargs.

A method is a function registered in ``METHODS`` that, given a
:class:`~ckb.multiagent.problems.MultiAgentProblem`, its spec parameters, the horizon and the seeds,
returns a :class:`Setup`: the agent class, one *picklable* keyword dict per agent (so any backend can
build the agents anywhere), and the coordinator. Seeds follow the code base's convention
(``SeedSequence(seed, spawn_key=(trial, stream, agent))``): stream 1 is agent ``i``'s system noise,
stream 2 its decision randomness (stream 0 drew the instance).

Parameters shared by every method (the agents' models; defaults are our choices, see the specs):

``beta``
    a number (constant width) or ``{"type": "theory", ...}`` (:mod:`ckb.multiagent.models`); default 3.0;
``clip``
    clip the confidence bounds at the problem's public bounds ``C_{i,j}`` (default ``True``);
``surrogate``
    ``"gp"`` (default) or ``"oracle"`` (exact tables; the counter-example);
``tie_break``
    ``"random"`` (default) or ``"first"``;
``gp_method``
    the :class:`~ckb.surrogates.ExactGP` representation (``"auto"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ckb._validation import check_bool, check_scalar, did_you_mean, short_repr
from ckb.errors import InvalidInputError
from ckb.registry import Registry

METHODS: Registry = Registry("multi-agent method")

COMMON_PARAMS = ("beta", "clip", "surrogate", "tie_break", "gp_method")

#: The largest absolute value a method's number (a step ``eta``, a margin ``eps``, an initial dual
#: ``lam1``/``mu1``, a penalty ``Q``) may take. A primal score multiplies two of them with a table value
#: (``eta lambda^T g``), and doubles overflow beyond about 1.8e308: at 1e100 such a product of values up to
#: 1e100 stays finite, while no meaningful price, step or margin comes near it (they are in the units of
#: the problem's tables, which are of order 1 in every shipped experiment).
MAX_MAGNITUDE = 1e100

_SURROGATES = ("gp", "oracle")
_TIE_BREAKS = ("random", "first")
_GP_METHODS = ("auto", "cholesky", "dense")


@dataclass
class Setup:
    agent_cls: type
    agent_kwargs: list[dict[str, Any]]
    coordinator: Any
    record: dict[str, Any] = field(default_factory=dict)


def check_method_params(method: str, params: dict[str, Any], own: tuple[str, ...]) -> None:
    valid = COMMON_PARAMS + own
    for key in params:
        if key not in valid:
            hint = (
                did_you_mean(key, valid) if isinstance(key, str) else f" Known: {', '.join(sorted(valid))}."
            )
            raise InvalidInputError(f"method {method!r} has no parameter {key!r}.{hint}")


def agent_kwargs(
    problem, params: dict[str, Any], horizon: int, seed: int, trial: int
) -> list[dict[str, Any]]:
    """The kwargs every :class:`~ckb.multiagent.agent.GridAgent` takes, one dict per agent."""
    surrogate = _check_choice(params.get("surrogate", "gp"), "surrogate", _SURROGATES)
    _check_choice(params.get("tie_break", "random"), "tie_break", _TIE_BREAKS)
    _check_choice(params.get("gp_method", "auto"), "gp_method", _GP_METHODS)
    clip = check_bool(params.get("clip", True), "clip")
    C = np.asarray(problem.hints["C"], dtype=float)
    out = []
    for i in range(problem.n_agents):
        model: dict[str, Any] = {
            "clip": C[i].tolist() if clip else None,
            "beta": params.get("beta", 3.0),
            "n_agents": problem.n_agents,
            "kind": surrogate,
        }
        if surrogate == "oracle":
            model["values"] = {"f": problem.f[i], "g": problem.g[i]}
        else:
            if problem.kernel is None:
                raise InvalidInputError(
                    f"problem {problem.name!r} gives no kernel for the agents' GPs (surrogate = 'gp', the "
                    "default); set surrogate = 'oracle' (the agents read the true functions)."
                )
            model.update(
                kernel=dict(problem.kernel), noise=problem.gp_noise, gp_method=params.get("gp_method", "auto")
            )
        out.append(
            {
                "agent": i,
                "grid": problem.grids[i],
                "m": problem.m,
                "A": problem.A[i],
                "horizon": int(horizon),
                "seed": [int(seed), int(trial), 2, i],
                "tie_break": params.get("tie_break", "random"),
                "system": {
                    "f": problem.f[i],
                    "g": problem.g[i],
                    "noise_std": problem.noise_std,
                    "constraint_noise_std": problem.constraint_noise_std,
                    "seed": [int(seed), int(trial), 1, i],
                },
                "model": model,
            }
        )
    return out


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``; else an error naming the parameter (any type of value)."""
    if not isinstance(value, str) or value not in choices:
        hint = did_you_mean(value, choices) if isinstance(value, str) else ""
        raise InvalidInputError(
            f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {short_repr(value, 60)}.{hint}"
        )
    return value


def build_setup(method: str, problem, params: dict[str, Any], horizon: int, seed: int, trial: int) -> Setup:
    from collections.abc import Mapping

    from ckb.multiagent.problems import MultiAgentProblem

    if not isinstance(problem, MultiAgentProblem):
        raise InvalidInputError(f"problem must be a MultiAgentProblem, got {type(problem).__name__}.")
    if not isinstance(params, Mapping):
        raise InvalidInputError(
            f"params (the method's parameters) must be a table (a dict), got {params!r:.60} "
            f"({type(params).__name__})."
        )
    horizon = check_scalar(horizon, "horizon", low=1, integer=True)
    seed = check_scalar(seed, "seed", low=0, integer=True)
    trial = check_scalar(trial, "trial", low=0, integer=True)
    return METHODS.get(method)(problem, dict(params), int(horizon), int(seed), int(trial))
