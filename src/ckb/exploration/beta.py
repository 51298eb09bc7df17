r"""Confidence-width schedules :math:`\beta_t`.

A schedule is a small immutable object; ``schedule(t, gp)`` returns :math:`\beta_t` for round ``t``
(1-based) given the GP posterior after ``t - 1`` observations. Every schedule takes a multiplicative
``scale`` (reproductions of the papers' results are very sensitive to it).

``theory``
    :math:`\beta_t = B + R\sqrt{2(\hat\gamma_{t-1} + 1 + \ln(1/\alpha))}` (IGP-UCB, Chowdhury & Gopalan
    2017 Thm 2; Shi & Eryilmaz (2022), Algorithm 1; Theorem 1 of Zhou & Ji (2022) and of the CBO paper,
    with ``ln(2/α)`` when two GPs share the failure probability: pass ``alpha/2`` there). The maximum
    information gain :math:`\gamma_{t-1}` is not computable, so it is estimated by the information gain
    of the points actually chosen,
    :math:`\hat\gamma_{t-1} = \tfrac12\sum_{s<t}\ln(1 + \sigma^2_{s-1}(x_s)/\lambda)`, which the GP
    accumulates as ``gp.info_gain``. (This is a lower bound on :math:`\gamma_{t-1}`; the choice and
    its reason are recorded in every spec that uses it.)
``constant``
    :math:`\beta_t = \beta` for all ``t``.
``log``
    :math:`\beta_t = B + \frac{R}{\sqrt\lambda}\sqrt{\ln t}` (with ``ln 1`` replaced by 0), the heuristic of
    the public code of Deng, Zhou, Ghosh, Gupta & Shroff (2022, interference-constrained beam alignment
    via kernelized bandits).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from ckb._validation import check_scalar, did_you_mean
from ckb.errors import InvalidInputError

#: how each schedule parameter is checked: (name in errors, check_scalar bounds)
_CHECKS: dict[str, tuple[str, dict[str, Any]]] = {
    "B": ("B", {"low": 0.0}),
    "R": ("R", {"low": 0.0}),
    "alpha": ("alpha", {"low": 0.0, "high": 1.0, "low_inclusive": False, "high_inclusive": False}),
    "value": ("beta value", {"low": 0.0}),
    "scale": ("beta scale", {"low": 0.0}),
}


class BetaSchedule:
    """Base of the schedules (frozen dataclasses): their fields are checked on construction, in field
    order, by :data:`_CHECKS`; :meth:`to_dict` is ``{"type": type_name, **fields}``."""

    scale: float
    type_name = ""

    def __post_init__(self) -> None:
        for f in fields(self):  # type: ignore[arg-type]
            name, bounds = _CHECKS[f.name]
            check_scalar(getattr(self, f.name), name, **bounds)

    def __call__(self, t: int, gp) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type_name, **asdict(self)}  # type: ignore[call-overload]


@dataclass(frozen=True)
class TheoryBeta(BetaSchedule):
    """``B + R sqrt(2 (γ̂_{t-1} + 1 + ln(1/α)))``, times ``scale``. ``ln(1/α)`` is ``log(1/α)``, or
    ``-log(α)`` where ``1/α`` overflows (a subnormal α below about 5.6e-309, which gave β = inf): finite
    for every α in (0, 1), and the same bits as before wherever it was finite."""

    B: float = 1.0
    R: float = 0.1
    alpha: float = 0.05
    scale: float = 1.0
    type_name = "theory"

    def __post_init__(self) -> None:
        super().__post_init__()
        # ln(1/alpha); -ln(alpha) where 1/alpha overflows (alpha below ~5.6e-309), the old expression
        # elsewhere (the two differ by an ulp for some alpha: results stay bit for bit)
        alpha = float(self.alpha)
        inv = 1.0 / alpha
        log_inv = math.log(inv) if math.isfinite(inv) else -math.log(alpha)
        object.__setattr__(self, "_log_term", 1.0 + log_inv)

    def __call__(self, t: int, gp) -> float:
        return self.scale * (self.B + self.R * math.sqrt(2.0 * (gp.info_gain + self._log_term)))


@dataclass(frozen=True)
class ConstantBeta(BetaSchedule):
    """``β_t = value * scale``."""

    value: float = 2.0
    scale: float = 1.0
    type_name = "constant"

    def __call__(self, t: int, gp) -> float:
        return self.scale * self.value


@dataclass(frozen=True)
class LogBeta(BetaSchedule):
    """``β_t = (B + R / sqrt(λ) sqrt(ln t)) * scale`` with ``λ`` the GP's noise; the round ``t`` must be
    an integer >= 1 (NaN gave NaN, and -5 the width of round 1)."""

    B: float = 1.0
    R: float = 0.1
    scale: float = 1.0
    type_name = "log"

    def __call__(self, t: int, gp) -> float:
        t = check_scalar(t, "round t of the beta schedule", low=1, integer=True)
        return self.scale * (self.B + self.R / math.sqrt(gp.noise) * math.sqrt(math.log(t)))


_SCHEDULES = {"theory": TheoryBeta, "constant": ConstantBeta, "log": LogBeta}


def make_beta(spec: Any, **defaults: float) -> BetaSchedule:
    """Build a schedule from a number (constant), a name, or a dict ``{"type": ..., **params}``.

    ``defaults`` (e.g. ``B``, ``R``, ``alpha``, ``scale``) fill parameters the spec leaves out, when the
    schedule accepts them; this is how a policy passes its own ``B`` and ``R`` to ``"theory"``.
    """
    if isinstance(spec, BetaSchedule):
        return spec
    if isinstance(spec, (int, float, np.integer, np.floating)) and not isinstance(spec, bool):
        value = check_scalar(spec, "beta")  # finite: an integer beyond float range is named
        scale = check_scalar(defaults.get("scale", 1.0), "beta scale", low=0.0)  # "x" was a raw error
        return ConstantBeta(value=value, scale=scale)
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict):
        raise InvalidInputError(f"beta must be a number, a schedule name or a dict, got {spec!r}.")
    spec = dict(spec)
    kind = spec.pop("type", "theory")
    if kind not in _SCHEDULES:
        raise InvalidInputError(f"unknown beta schedule {kind!r}.{did_you_mean(str(kind), _SCHEDULES)}")
    cls = _SCHEDULES[kind]
    fields = cls.__dataclass_fields__
    unknown = set(spec) - set(fields)
    if unknown:
        bad = sorted(unknown)[0]
        raise InvalidInputError(
            f"beta schedule {kind!r} has no parameter {bad!r}.{did_you_mean(bad, fields)}"
        )
    params = {k: v for k, v in defaults.items() if k in fields}
    params.update(spec)
    return cls(**params)
