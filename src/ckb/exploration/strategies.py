r"""Exploration strategies: how an estimate of a function over the candidates is drawn from its posterior.

Definitions 1 and 2 of the primal-dual papers (Zhou & Ji (2022) and the CBO paper), with posterior
:math:`\mathcal{GP}(\hat\mu_{t-1}, \hat k_{t-1})` and :math:`\hat\sigma_{t-1} = \sqrt{\hat k_{t-1}(x, x)}`
(the papers' Definition 1 omits the square root; Zhou & Ji's Definition 2 has it):

``ucb`` (GP-UCB)
    :math:`h_t = \hat\mu_{t-1} + s\,\hat\beta_t\hat\sigma_{t-1}` with ``s = +1`` for the reward (optimistic,
    high) and ``s = -1`` for a cost (optimistic, low: the lower confidence bound).
``ts`` (GP-TS)
    a joint sample :math:`h_t \sim \mathcal{GP}(\hat\mu_{t-1}, \hat\beta_t^2 \hat k_{t-1})` over all
    candidates (fresh and independent each call; the sign is irrelevant by symmetry).
``rand`` (RandGP-UCB)
    :math:`h_t = \hat\mu_{t-1} + \hat Z_t \hat\sigma_{t-1}` with **one scalar** :math:`\hat Z_t` shared by all
    candidates. ``distribution="gaussian"`` (the papers' Corollary 3): :math:`Z \sim \mathcal N(0, \hat\beta_t^2)`.
    ``distribution="uniform-discrete"`` (the CBO paper, App. D.4): Z uniform on ``n_points`` equally spaced
    values of :math:`[0, 2\hat\beta_t]`, mirrored to :math:`[-2\hat\beta_t, 0]` for a cost (``s = -1``), so
    that the anti-concentration event :math:`Z \le -\hat\beta_t` has positive probability (the mirror is a
    choice the paper leaves open: it states only the reward's case).

A strategy is stateless; randomness comes from the policy's generator, so a policy's state captures it.
A new strategy is a subclass registered in :data:`STRATEGIES`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_choice, check_scalar, did_you_mean
from ckb.errors import InvalidInputError
from ckb.registry import Registry

STRATEGIES: Registry = Registry("exploration strategy")


class Strategy:
    """Draws an estimate of a function over the candidates from a GP posterior. Every strategy refuses a
    width ``beta`` that is not a finite number >= 0 (:meth:`check_beta`; a NaN or negative width gave
    NaN estimates or flipped the optimism silently)."""

    name = ""

    def check_beta(self, beta: Any, sign: Any = 1.0) -> None:
        """A one-line ``InvalidInputError`` unless ``beta`` is a finite real number >= 0 and ``sign`` is +1
        (a reward) or -1 (a cost; NaN gave all-NaN estimates)."""
        check_scalar(beta, f"exploration {self.name!r} width beta", low=0.0)
        value = check_scalar(sign, f"exploration {self.name!r} sign")
        if value not in (1.0, -1.0):
            raise InvalidInputError(
                f"exploration {self.name!r} sign must be +1 (a reward) or -1 (a cost), got {sign!r}."
            )

    def estimate(self, gp, beta: float, rng: np.random.Generator, sign: float = 1.0) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.name}


@STRATEGIES.register("ucb")
class UCB(Strategy):
    """``mean + sign * beta * std`` (UCB for a reward, LCB for a cost)."""

    name = "ucb"

    def estimate(self, gp, beta, rng, sign=1.0):
        self.check_beta(beta, sign)
        return gp.mean + (sign * beta) * gp.std


@STRATEGIES.register("ts")
class ThompsonSampling(Strategy):
    """A fresh joint posterior sample with covariance scaled by ``beta**2``."""

    name = "ts"

    def estimate(self, gp, beta, rng, sign=1.0):
        self.check_beta(beta, sign)
        return gp.sample(rng, scale=beta)


@STRATEGIES.register("rand")
class RandomShift(Strategy):
    """``mean + Z * std`` with one random scalar ``Z`` per call (RandGP-UCB)."""

    name = "rand"

    def __init__(self, distribution: str = "gaussian", n_points: int = 11) -> None:
        check_choice(distribution, "distribution", ("gaussian", "uniform-discrete"))
        self.distribution = distribution
        self.n_points = check_scalar(n_points, "n_points", low=2, integer=True)

    def draw(self, beta: float, rng: np.random.Generator, sign: float = 1.0) -> float:
        self.check_beta(beta, sign)  # before drawing: a refused width or sign consumes nothing
        if self.distribution == "gaussian":
            return beta * float(rng.standard_normal())
        k = int(rng.integers(self.n_points))
        return sign * 2.0 * beta * k / (self.n_points - 1)

    def estimate(self, gp, beta, rng, sign=1.0):
        return gp.mean + self.draw(beta, rng, sign) * gp.std

    def to_dict(self):
        return {"type": "rand", "distribution": self.distribution, "n_points": self.n_points}


def make_strategy(spec: Any) -> Strategy:
    """A strategy from a name (``"ucb"``, ``"ts"``, ``"rand"``) or a dict ``{"type": ..., **params}``."""
    if isinstance(spec, Strategy):
        return spec
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict):
        raise InvalidInputError(f"exploration must be a name or a table, got {spec!r}.")
    spec = dict(spec)
    kind = spec.pop("type", None)
    if kind not in STRATEGIES:
        raise InvalidInputError(
            f"unknown exploration strategy {kind!r}.{did_you_mean(str(kind), STRATEGIES.names())}"
        )
    try:
        return STRATEGIES.get(kind)(**spec)
    except TypeError as exc:
        raise InvalidInputError(f"bad parameters for exploration {kind!r}: {exc}") from None
