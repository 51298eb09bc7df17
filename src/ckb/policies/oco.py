r"""Constrained online convex optimization with bandit feedback: the OCO baseline of Shi & Eryilmaz (2022).

**A reconstruction, not Cao & Liu's exact rules.** Shi & Eryilmaz compare against "constrained OCO with
bandit feedback proposed in Cao and Liu (2018)" (IEEE TAC 64(7)), tuned "to achieve the best
performance", and name only its step size η. Cao & Liu's paper is not at hand, so this is our own
reconstruction: a bandit primal-dual (online saddle-point) method on the regularized Lagrangian of the
*minimization* problem with loss :math:`\ell = -f` and constraints :math:`g_j \le 0`,

.. math::

    \mathcal L(x, \lambda) = \ell(x) + \sum_j \lambda_j g_j(x) - \tfrac{\beta}{2}\|\lambda\|^2,

with gradients estimated from function values only (Flaxman et al. 2005's sphere estimator). Do not
claim equivalence with Cao & Liu's algorithm (their exact estimator, step-size schedules and whether
their dual step uses :math:`x_t` or :math:`x_{t+1}` are unverified).

Let :math:`X_\delta = [\text{lower} + \delta_e, \text{upper} - \delta_e]` be the box shrunk by
:math:`\delta_e` on each side, so that every queried point lies in the box. Start from :math:`x_1`
uniform in :math:`X_\delta` (drawn from the policy's generator: Shi & Eryilmaz's "runs from different
initial points"; or ``x0``) and :math:`\lambda_1 = 0`. Each update, with :math:`u_t` uniform on the unit
sphere :math:`S^{d-1}` and :math:`c_t` the *observed* (possibly noisy) constraint values:

**one-point** (default; one round per update): play :math:`y_t = x_t + \delta_e u_t`, observe
:math:`r_t` (noisy reward) and :math:`c_t`, and estimate

.. math::

    \hat\nabla\ell = \frac{d}{\delta_e}(-r_t)\,u_t, \qquad
    \hat\nabla g_j = \frac{d}{\delta_e} c_{t,j}\, u_t, \qquad \hat g_j = c_{t,j};

**two-point** (two consecutive rounds per update, both played and scored): play
:math:`x_t + \delta_e u_t` and then :math:`x_t - \delta_e u_t` (same :math:`u_t`, same base point), and estimate

.. math::

    \hat\nabla\ell = \frac{d}{2\delta_e}(r^- - r^+)\,u_t, \qquad
    \hat\nabla g_j = \frac{d}{2\delta_e}(c^+_j - c^-_j)\,u_t, \qquad
    \hat g_j = \tfrac12 (c^+_j + c^-_j)

(the mean of the two readings estimates :math:`g_j(x_t)` up to :math:`O(\delta_e^2)`); then, in both variants,

.. math::

    x_{t+1} = \mathrm{Proj}_{X_\delta}\big(x_t - \eta\,(\hat\nabla\ell + \textstyle\sum_j \lambda_{t,j}\hat\nabla g_j)\big),
    \qquad
    \lambda_{t+1,j} = \big[\lambda_{t,j} + \eta_\lambda(\hat g_j - \beta\lambda_{t,j})\big]^+ .

The projection on a box is a coordinate-wise clip. The played point (:math:`y_t`, or each of the two
two-point queries) is the action the runner scores for regret and violation.

**Why one-point is the default.** Shi & Eryilmaz's protocol has one decision per round, scored every
round, with the same horizon T = 350 for the proposed methods and OCO; the one-point variant keeps "one
round = one query = one update", so OCO gets exactly the evaluation budget of the other methods. The
two-point variant needs two queries per update (T = 350 rounds give 175 updates) but its estimator's
variance does not grow with :math:`|\ell|` (the one-point estimator's second moment is of order
:math:`(d/\delta_e)^2 \ell^2`, large when f is far from 0, as on the Gardner problem where
:math:`\ell \in [-1, 7]`), so it is offered as the lower-variance alternative.

Parameters and choices (each configurable)
------------------------------------------
- ``eta`` (η > 0, default 0.01): the primal step size, and the dual one unless ``eta_dual`` is given.
  Shi & Eryilmaz tune it per experiment ("best performance", a smaller η with noisy constraints);
  ``benchmarks/tune_oco.py`` does that grid search. The default is a plain constant, not a tuned value.
- ``eta_dual`` (> 0, default ``eta``): a separate dual step size.
- ``delta_e`` (:math:`\delta_e`, exploration radius, absolute units of the box; default 5% of the box's
  smallest side): must be below half of every side so that :math:`X_\delta` is a box.
- ``dual_reg`` (β >= 0, default 0): the dual regularizer (Mahdavi et al. 2012's
  :math:`-\tfrac\beta2\|\lambda\|^2`); 0 is the plain projected dual ascent.
- ``variant``: ``"one-point"`` (default) or ``"two-point"``.
- ``x0``: a fixed initial point in :math:`X_\delta` (default: uniform in :math:`X_\delta`).
- Feedback arriving late (a delaying environment) is applied when it arrives, to the current iterate;
  a two-point update waits for both readings of its pair. In the basic environment each round's
  feedback arrives before the next round, and the rules above hold exactly.
- The domain must be a continuous box (``BoxDomain`` without a grid): the method moves in the box.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_finite_array, check_scalar
from ckb.contract.domain import BoxDomain
from ckb.errors import InvalidInputError
from ckb.policies.base import Policy
from ckb.policies.registry import POLICIES

VARIANTS = ("one-point", "two-point")


def _arr(a: Any) -> np.ndarray:
    return np.array(a, dtype=float)  # a copy


@POLICIES.register("oco")
class BanditOCO(Policy):
    """Bandit primal-dual OCO (reconstruction of Cao & Liu 2018 for Shi & Eryilmaz 2022); see the module
    docstring.

    Parameters
    ----------
    eta:
        Primal step size η (and the dual one unless ``eta_dual`` is given). Default 0.01.
    eta_dual:
        Dual step size; default ``eta``.
    delta_e:
        Exploration radius; the box is shrunk by it on each side. Default 5% of the smallest side.
    dual_reg:
        Dual regularizer β >= 0 in λ ← [λ + η_λ (ĝ − βλ)]^+. Default 0.
    variant:
        ``"one-point"`` (one query per update, default) or ``"two-point"`` (x + δu then x − δu).
    x0:
        Initial point inside the shrunk box; default uniform in it, from the policy's generator.
    """

    def __init__(
        self,
        info,
        rng,
        *,
        eta: float = 0.01,
        eta_dual: float | None = None,
        delta_e: float | None = None,
        dual_reg: float = 0.0,
        variant: str = "one-point",
        x0: Any = None,
    ) -> None:
        super().__init__(info, rng)
        dom = info.domain
        if not isinstance(dom, BoxDomain) or dom.candidates is not None:
            raise InvalidInputError(
                f"policy 'oco' moves in a continuous box; problem {info.name!r} has "
                + (
                    "a grid of candidates (use grid=None)."
                    if isinstance(dom, BoxDomain)
                    else "a finite domain."
                )
            )
        self.eta = check_scalar(eta, "eta", low=0.0, low_inclusive=False)
        self.eta_dual = (
            self.eta if eta_dual is None else check_scalar(eta_dual, "eta_dual", low=0.0, low_inclusive=False)
        )
        half = 0.5 * float(np.min(dom.upper - dom.lower))
        if delta_e is None:
            delta_e = 0.1 * half
        self.delta_e = check_scalar(
            delta_e,
            f"delta_e (half the box's smallest side is {half:g})",
            low=0.0,
            high=half,
            low_inclusive=False,
            high_inclusive=False,
        )
        self.dual_reg = check_scalar(dual_reg, "dual_reg (beta)", low=0.0)
        if variant not in VARIANTS:
            raise InvalidInputError(f"variant must be one of {VARIANTS}, got {variant!r}.")
        self.variant = variant
        self.d, self.m = dom.d, info.m
        self.lower, self.upper = dom.lower.astype(float), dom.upper.astype(float)
        self.lo, self.hi = self.lower + self.delta_e, self.upper - self.delta_e  # the shrunk box X_δ
        if x0 is None:
            self.x = rng.uniform(self.lo, self.hi)
        else:
            x0 = check_finite_array(x0, "x0", shape=(self.d,))
            if np.any(x0 < self.lo) or np.any(x0 > self.hi):
                raise InvalidInputError(
                    f"x0 = {x0.tolist()} must lie in the box shrunk by delta_e = {self.delta_e:g}: "
                    f"[{self.lo.tolist()}, {self.hi.tolist()}]."
                )
            self.x = x0.copy()
        self.lam = np.zeros(self.m)
        #: asked rounds awaiting feedback: t -> (sign, pair key, u, played point)
        self._pending: dict[int, tuple[int, int, np.ndarray, np.ndarray]] = {}
        #: two-point: the pair being asked (first round, u, base point), or None
        self._pair: tuple[int, np.ndarray, np.ndarray] | None = None
        #: two-point: the first-arrived reading of each incomplete pair: key -> (sign, y, c)
        self._half: dict[int, tuple[int, float, np.ndarray]] = {}
        self._step_norm = 0.0
        self._last: dict[str, float] = {}

    # ----------------------------------------------------------------- loop
    def _sphere(self) -> np.ndarray:
        z = self.rng.standard_normal(self.d)
        return z / np.linalg.norm(z)

    def ask(self, context: Any = None) -> np.ndarray:
        self.t += 1
        if self.variant == "one-point":
            u, sign, base, key = self._sphere(), 1, self.x, self.t
        elif self._pair is None:  # first query of a two-point pair: x + δu
            u, sign, base, key = self._sphere(), 1, self.x.copy(), self.t
            self._pair = (self.t, u, base)
        else:  # second query of the pair: x − δu around the same base point
            key, u, base = self._pair
            sign = -1
            self._pair = None
        # |δ u_i| <= δ keeps the point in the box; the clip only absorbs rounding
        point = np.clip(base + sign * self.delta_e * u, self.lower, self.upper)
        self._pending[self.t] = (sign, key, u, point)
        self._last = {**self._named("dual", self.lam), "step_norm": self._step_norm}
        return point.copy()

    def tell(self, obs) -> None:
        obs = self._check_obs(obs)
        rec = self._pending.get(int(obs.t))
        if rec is None:
            raise InvalidInputError(
                f"observation of round {obs.t} matches no asked round awaiting feedback "
                f"(awaiting: {sorted(self._pending) or 'none'})."
            )
        sign, key, u, point = rec
        x = np.asarray(obs.x, dtype=float)
        if x.shape != point.shape or not np.allclose(x, point, rtol=0.0, atol=1e-12):
            raise InvalidInputError(
                f"observation of round {obs.t} is at {np.asarray(obs.x).tolist()}, but the policy played "
                f"{point.tolist()} then."
            )
        y = check_scalar(obs.y, f"reward observation of round {obs.t}")
        c = check_finite_array(obs.c, f"constraint observation of round {obs.t}")
        del self._pending[int(obs.t)]
        k = self.d / self.delta_e
        if self.variant == "one-point":
            self._update(u, k * -y, k * c, c)
            return
        other = self._half.pop(key, None)
        if other is None:
            self._half[key] = (sign, y, c.copy())
            return
        readings = {sign: (y, c), other[0]: (other[1], other[2])}
        (yp, cp), (ym, cm) = readings[1], readings[-1]
        self._update(u, 0.5 * k * (ym - yp), 0.5 * k * (cp - cm), 0.5 * (cp + cm))

    def _update(self, u: np.ndarray, a_loss: float, a_g: np.ndarray, g_hat: np.ndarray) -> None:
        """Primal step with the gradient estimate (a_loss + λ·a_g) u, then the dual step with ĝ."""
        grad = (a_loss + float(self.lam @ a_g)) * u
        x_new = np.clip(self.x - self.eta * grad, self.lo, self.hi)
        self._step_norm = float(np.linalg.norm(x_new - self.x))
        self.x = x_new
        self.lam = np.maximum(self.lam + self.eta_dual * (g_hat - self.dual_reg * self.lam), 0.0)

    def internals(self) -> dict[str, float]:
        """``dual`` (``dual_j`` for m > 1): λ_t when the round was asked; ``step_norm``: the length
        ‖x_t − x_{t−1}‖ of the last primal step taken before the round (0 before the first update)."""
        return self._last

    # ----------------------------------------------------------- persistence
    def _state(self) -> dict[str, Any]:
        pending = [[t, s, k, u.copy(), p.copy()] for t, (s, k, u, p) in sorted(self._pending.items())]
        pair = None if self._pair is None else [self._pair[0], self._pair[1].copy(), self._pair[2].copy()]
        half = [[k, s, y, c.copy()] for k, (s, y, c) in sorted(self._half.items())]
        return {
            "x": self.x.copy(),
            "lam": self.lam.copy(),
            "pending": pending,
            "pair": pair,
            "half": half,
            "step_norm": self._step_norm,
            "last": dict(self._last),
        }

    def _load(self, state: dict[str, Any]) -> None:
        self.x = _arr(state["x"])
        self.lam = _arr(state["lam"]).reshape(self.m)
        self._pending = {int(t): (int(s), int(k), _arr(u), _arr(p)) for t, s, k, u, p in state["pending"]}
        pair = state["pair"]
        self._pair = None if pair is None else (int(pair[0]), _arr(pair[1]), _arr(pair[2]))
        self._half = {int(k): (int(s), float(y), _arr(c)) for k, s, y, c in state["half"]}
        self._step_norm = float(state["step_norm"])
        self._last = {k: float(v) for k, v in state["last"].items()}
