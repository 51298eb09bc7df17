r"""The interface of a practical policy (:class:`OptimizerPolicy`) and what it receives at an ask.

A practical policy is one decision rule of the papers on a continuous box with fitted GPs. It owns its
explicit state (round counter, duals, penalties, epochs: JSON-able, stored after every step) and nothing
else: the optimizer (:mod:`ckb.optimizer.core`) owns the data, the models, the random generator and the
study file. Per step:

- :meth:`OptimizerPolicy.targets`: which functions to model, from the complete observations in policy
  units (``y``: the standardized objective in the maximization sense, ``c``: (n, m) scaled constraints);
- :meth:`OptimizerPolicy.decide` (at an ask, after the initial design): the next point in the unit cube
  from a :class:`Decision` (models conditioned on the pending points, the maximizer, the generator), and
  every update the rule makes at ask time;
- :meth:`OptimizerPolicy.observe` (at a tell of a point the policy chose): the updates fed by observed
  values.

Beta schedules: ``beta`` is a number (constant width, the default) or a schedule of
:mod:`ckb.exploration.beta` (``"theory"``: :math:`B + R\sqrt{2(\hat\gamma + 1 + \ln(1/\alpha))}` with
:math:`\hat\gamma = \tfrac12\log\det(I + K/\sigma_n^2)` of the fitted GP on its data; ``"log"``; a dict).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ckb._validation import check_finite_array, check_scalar
from ckb.errors import InvalidInputError
from ckb.exploration import make_beta
from ckb.exploration.beta import ConstantBeta


@dataclass
class Decision:
    """What a policy sees at an ask: ``models`` (conditioned on pending points), ``maximize(score)`` ->
    ``(x_unit, value)``, the generator ``rng``, and the complete observations in policy units ``y``
    (n,), ``c`` (n, m)."""

    models: Any
    maximize: Any
    rng: np.random.Generator
    y: np.ndarray
    c: np.ndarray


class OptimizerPolicy:
    """Base class: state ``t`` (the policy's rounds so far), helpers for beta and per-constraint values."""

    name: ClassVar[str] = ""
    #: default constant width on standardized outcomes
    default_beta: ClassVar[float] = 2.0

    def __init__(self, m: int, horizon: int) -> None:
        self.m = check_scalar(m, "m (number of constraints)", low=1, integer=True)
        self.horizon = check_scalar(horizon, "horizon (policy rounds T)", low=1, integer=True)
        self.t = 0

    # -------------------------------------------------------------------------------- protocol
    def targets(self, y: np.ndarray, c: np.ndarray) -> dict[str, np.ndarray]:
        """Functions to model: by default the objective ``f`` and each constraint ``g0, g1, ...``."""
        out = {"f": np.asarray(y, dtype=float)}
        for j in range(self.m):
            out[f"g{j}"] = np.asarray(c, dtype=float)[:, j]
        return out

    def model_tag(self) -> str:
        """Changes when the modeled targets change meaning (forces a refit), e.g. a new penalty epoch."""
        return ""

    def decide(self, ctx: Decision) -> tuple[np.ndarray, dict[str, float]]:  # pragma: no cover
        raise NotImplementedError

    def observe(self, y: float, c: np.ndarray) -> None:
        """Tell-time update from one observation of a point this policy chose (policy units)."""

    def internals(self) -> dict[str, float]:
        """The current state as scalars (for metrics())."""
        return {}

    # ----------------------------------------------------------------------------- persistence
    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, **self._state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t = int(state["t"])
        self._load(state)

    def _state(self) -> dict[str, Any]:
        return {}

    def _load(self, state: dict[str, Any]) -> None:
        return None

    # --------------------------------------------------------------------------------- helpers
    def _beta(self, spec: Any, B: float, R: float, alpha: float, what: str):
        spec = self.default_beta if spec is None else spec
        try:
            return make_beta(spec, B=B, R=R, alpha=alpha)
        except TypeError as exc:
            raise InvalidInputError(f"bad {what}: {exc}") from None

    @staticmethod
    def _width(schedule, t: int, models, name: str) -> float:
        if isinstance(schedule, ConstantBeta):
            return schedule(t, None)
        return float(schedule(t, models.view(name)))

    def _per_constraint(self, value: Any, what: str) -> np.ndarray:
        arr = np.atleast_1d(check_finite_array(value, what))
        if arr.shape not in ((1,), (self.m,)):
            raise InvalidInputError(
                f"{what} must be a number or a list of m = {self.m} numbers, got {arr.tolist()}."
            )
        arr = np.broadcast_to(arr, (self.m,)).astype(float).copy()
        if np.any(arr <= 0):
            raise InvalidInputError(f"{what} must be > 0, got {arr.tolist()}.")
        return arr

    @staticmethod
    def _named(name: str, values) -> dict[str, float]:
        values = list(np.atleast_1d(values))
        if len(values) == 1:
            return {name: float(values[0])}
        return {f"{name}_{j}": float(v) for j, v in enumerate(values)}

    @staticmethod
    def _split(models, X):
        """Posterior mean/std of f and of the constraints at X: (mu_f, sd_f, mu_g, sd_g)."""
        mu, sd = models.mean_std(X)
        return mu[..., 0], sd[..., 0], mu[..., 1:], sd[..., 1:]
