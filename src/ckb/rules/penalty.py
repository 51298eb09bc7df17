r"""Epoch-based penalty methods for long-term constraints (Shi & Eryilmaz, AISTATS 2022, Algorithms 2-3).

The rule's rounds are split into epochs of ``S`` rounds, :math:`L = \lceil T/S \rceil` (a horizon that is
not a multiple of ``S`` ends with a partial epoch). Within epoch :math:`l` the multipliers :math:`\kappa^l`
are frozen and the decision is GP-UCB (the paper's Algorithm 1) on a penalized objective, modeled from the
*penalized observations* :meth:`EpochPenaltyRule.target`; after the epoch's S-th observation the
multipliers are updated from its mean constraint values (:meth:`EpochPenaltyRule.observe`, which says
when a new epoch starts: the adapter re-expresses or drops its data then). The last epoch makes no
update.

``PenaltyNoiselessRule`` (Algorithm 2; constraints observed exactly)
    :math:`\kappa^1_j = 1`; confidence :math:`\delta/L`; objective
    :math:`F_l = f - \sum_j \kappa^l_j(\psi(g_j) - 1)`, observed as :math:`y - \sum_j \kappa^l_j(\psi(c_j) - 1)`;
    then :math:`\kappa^{l+1}_j = \kappa^l_j\,\psi\big(\tfrac1S\sum_s g_j(x^s_l)\big)`. :math:`\psi` is
    ``"exp"``: :math:`e^{c x}` for :math:`x \ge 0` (the paper's experiments, ``c = 1``) or ``"poly"``:
    :math:`(c x + 1)^n`; both 1 for :math:`x \le 0` (eqs. 9-10). The same :math:`\psi_c` is used in the
    penalty and in the update (Algorithm 2 writes :math:`\psi(g)`, Assumption 3 :math:`\psi(c g)`: with
    ``c = 1`` they agree). Multipliers only grow; :math:`\kappa` is kept as :math:`\log\kappa` and capped
    at ``kappa_max`` (overflow guard, reported as ``kappa_capped``). The penalized observation itself
    cannot be guarded so: its terms are all >= 0, so when :math:`\kappa_j(\psi(c_j) - 1)` or the sum
    passes the float range (``"exp"``, ``c = 1``: a constraint value above about 709.8, less with a
    larger :math:`\kappa`) the true value is below :math:`-1.8\times 10^{308}`, and
    :meth:`EpochPenaltyRule.target` raises an ``InvalidInputError`` naming the constraint values, the
    penalty and the multipliers (it returned -inf, refused later by the model without naming either).
``PenaltyNoisyRule`` (Algorithm 3; noisy constraints)
    :math:`\kappa^1_j = 0`; confidence :math:`\delta/(2L)` and noise level
    :math:`R_l = \sqrt{1 + \sum_j (\kappa^l_j)^2}\,R` (recomputed each epoch); objective
    :math:`G_l = f - \sum_j \kappa^l_j g_j`, observed as :math:`y - \sum_j \kappa^l_j c_j`; then
    :math:`\kappa^{l+1}_j = [\kappa^l_j + \mu\,\tfrac1S\sum_s c_j^s]^+` (``mu`` 0.5 as in the paper's
    experiments; ``mu_scaling="sqrt-L"``: :math:`\mu/\sqrt L`, the theory's :math:`O(1/\sqrt L)`).

Width: IGP-UCB's :math:`\beta = B + R_l\sqrt{2(\hat\gamma + 1 + \ln(1/\delta_l))}` for ``"theory"``
(``beta``, times ``beta_scale``); ``B`` is the same in every epoch, as the algorithm passes it.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from ckb.errors import InvalidInputError
from ckb.rules.base import NONNEGATIVE, POSITIVE, PROBABILITY, Choice, Int, Real, Rule, Width, named
from ckb.rules.cei import FIRST_CONSTANTS, FeasibilityFirst
from ckb.rules.primal_dual import _width


def log_psi(x: np.ndarray, kind: str = "exp", c: float = 1.0, n: float = 2.0) -> np.ndarray:
    r""":math:`\ln\psi_c(x)`: 0 for :math:`x \le 0`; :math:`c x` (``exp``) or :math:`n\ln(c x + 1)` (``poly``)."""
    xp = np.maximum(np.asarray(x, dtype=float), 0.0)
    if kind == "exp":
        return c * xp
    return n * np.log1p(c * xp)


def psi(x: np.ndarray, kind: str = "exp", c: float = 1.0, n: float = 2.0) -> np.ndarray:
    r""":math:`\psi_c(x)` of eqs. (9)-(10): 1 for :math:`x \le 0`, :math:`e^{cx}` or :math:`(cx + 1)^n` above."""
    return np.exp(log_psi(x, kind, c, n))


class EpochPenaltyRule(FeasibilityFirst, Rule):
    """The shared epoch loop (module docstring); subclasses set the multipliers' start, penalty and update.
    ``feasibility_first`` (off: the papers' algorithms have none; ``ckb.Optimizer``'s ``penalty-noisy``
    turns it on) and ``first_quantile`` (0.5): while no evaluation has satisfied every constraint, the
    decision is the point most likely feasible and better than that quantile of the observed objective
    values, from models of the objective and each constraint (:class:`ckb.rules.cei.FeasibilityFirst`;
    torch only). The epoch loop goes on through the search: its observed costs are spent."""

    needs_horizon = True
    #: confidence split: delta / (split * L)
    split: ClassVar[int] = 1
    constants: ClassVar[dict[str, Any]] = {
        "S": Int(low=1, label="S (epoch length)"),
        "B": NONNEGATIVE,
        "R": NONNEGATIVE,
        "alpha": PROBABILITY,
        "beta": Width(),
        "beta_scale": NONNEGATIVE,
        **FIRST_CONSTANTS,
    }
    defaults: ClassVar[dict[str, Any]] = {
        "alpha": 0.05,
        "beta": "theory",
        "beta_scale": 1.0,
        "feasibility_first": False,
        "first_quantile": 0.5,
    }
    state_keys = ("kappa", "log_kappa", "epoch", "in_epoch", "epoch_sum", "asked")

    def setup(self) -> None:
        if self.horizon is None:
            from ckb.errors import InvalidInputError

            raise InvalidInputError("the penalty methods need the horizon T (to set L = ceil(T / S)).")
        self.L = math.ceil(self.horizon / self.S)
        self.log_kappa = np.zeros(self.m)
        self.kappa = self.initial_kappa()
        self.epoch, self.in_epoch = 1, 0
        self.epoch_sum = np.zeros(self.m)
        self.asked = [1.0, *self.kappa.tolist()]  # the epoch and multipliers the last decision used
        self.width = float("nan")
        self.after_load()

    def after_load(self) -> None:
        self.beta_schedule = self.schedule(
            self.beta, self.B, self.epoch_R(), self.alpha / (self.split * self.L), self.beta_scale
        )

    # the two algorithms differ in these
    def initial_kappa(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def penalty(self, c: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """:math:`\\sum_j \\kappa_j \\Lambda(c_j)` for constraint values ``c`` (k, m) -> (k,)."""
        raise NotImplementedError

    def update_multipliers(self, mean_c: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def epoch_R(self) -> float:
        return self.R

    # the loop
    def describe_penalty(self) -> str:
        """The penalty in words, for errors."""
        return f"sum_j kappa_j c_j with kappa = {self.kappa.tolist()}"

    def target(self, y, c) -> np.ndarray:
        """The penalized observations of the current epoch: ``y`` (k,) and ``c`` (k, m) -> (k,). A row of
        finite ``y`` and ``c`` whose penalized value passes the float range is an ``InvalidInputError``
        naming it (module docstring); non-finite inputs pass through as before."""
        c = np.asarray(c, dtype=float).reshape(-1, self.m)
        y = np.asarray(y, dtype=float).reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):
            out = y - self.penalty(c)
        if not np.all(np.isfinite(out)):
            bad = ~np.isfinite(out) & np.isfinite(y) & np.all(np.isfinite(c), axis=-1)
            if np.any(bad):
                i = int(np.flatnonzero(bad)[0])
                from ckb.errors import InvalidInputError

                raise InvalidInputError(
                    f"the penalized observation y - penalty at constraint values c = {c[i].tolist()} "
                    f"(y = {float(y[i])!r}) is beyond the float range (got {float(out[i])}): penalty "
                    f"{self.describe_penalty()}; constraint values this large overflow it."
                )
        return out

    def begin_round(self, model_of) -> float:
        """Round t += 1 and its UCB width (``model_of("pen")``: the penalized objective's model; None in
        the search for a first feasible point, which models no penalized objective: width NaN)."""
        self.t += 1
        self.asked = [float(self.epoch), *self.kappa.tolist()]
        nan = float("nan")
        self.width = nan if model_of is None else _width(self.beta_schedule, self.t, model_of, "pen")
        return self.width

    def observe(self, c) -> bool:
        """One observation's constraint values (m,); True when it closed the epoch (multipliers updated)."""
        self.in_epoch += 1
        self.epoch_sum = self.epoch_sum + np.asarray(c, dtype=float).reshape(self.m)
        if self.in_epoch == self.S and self.epoch < self.L:
            self.update_multipliers(self.epoch_sum / self.S)
            self.epoch += 1
            self.in_epoch = 0
            self.epoch_sum = np.zeros(self.m)
            self.after_load()
            return True
        return False

    def internals(self) -> dict[str, float]:
        """The width, epoch and multipliers the last decision used."""
        return {"beta": self.width, "epoch": self.asked[0], **named("kappa", self.asked[1:])}

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "width": self.width}

    def apply_state(self, state: dict[str, Any]) -> None:
        super().apply_state(state)
        try:
            self.width = float(state.get("width", float("nan")))
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"{type(self).__name__} state: width = {state.get('width')!r} must be a number."
            ) from None
        try:
            self.asked = [float(v) for v in np.asarray(self.asked, dtype=float).reshape(-1)]
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"{type(self).__name__} state: asked = {self.asked!r} must be the epoch and m multipliers."
            ) from None
        problem = None
        if not np.all(np.isfinite(self.asked)):
            problem = f"asked = {self.asked} must be finite"
        elif len(self.asked) != self.m + 1:
            problem = f"asked has {len(self.asked)} values, expected the epoch and m = {self.m} multipliers"
        elif not (1 <= self.epoch <= self.L and 0 <= self.in_epoch <= self.S):
            problem = f"epoch {self.epoch} (of L = {self.L}) and in_epoch {self.in_epoch} (of S = {self.S})"
        elif np.any(self.kappa < 0):
            problem = f"a negative multiplier kappa = {self.kappa.tolist()}"
        if problem is not None:
            raise InvalidInputError(f"{type(self).__name__} state: {problem}.")


class PenaltyNoiselessRule(EpochPenaltyRule):
    """Algorithm 2. Extra constants: ``psi`` (``"exp"`` | ``"poly"``), ``c`` (> 0, 1), ``n`` (>= 1, 2),
    ``kappa_max`` (1e8)."""

    constants: ClassVar[dict[str, Any]] = {
        **EpochPenaltyRule.constants,
        "psi": Choice(("exp", "poly")),
        "c": POSITIVE,
        "n": Real(low=1.0),
        "kappa_max": Real(low=1.0),
    }
    defaults: ClassVar[dict[str, Any]] = {
        **EpochPenaltyRule.defaults,
        "psi": "exp",
        "c": 1.0,
        "n": 2.0,
        "kappa_max": 1e8,
    }

    def initial_kappa(self) -> np.ndarray:
        return np.ones(self.m)

    def penalty(self, c: np.ndarray) -> np.ndarray:
        return np.expm1(log_psi(c, self.psi, self.c, self.n)) @ self.kappa

    def describe_penalty(self) -> str:
        shape = f"scale c = {self.c!r}" + (f", n = {self.n!r}" if self.psi == "poly" else "")
        return (
            f"sum_j kappa_j (psi(c_j) - 1) with psi = {self.psi!r} ({shape}), kappa = {self.kappa.tolist()}"
        )

    def update_multipliers(self, mean_c: np.ndarray) -> None:
        self.log_kappa = np.minimum(
            self.log_kappa + log_psi(mean_c, self.psi, self.c, self.n), math.log(self.kappa_max)
        )
        self.kappa = np.exp(self.log_kappa)

    def internals(self) -> dict[str, float]:
        capped = float(np.any(self.log_kappa >= math.log(self.kappa_max)))
        return {**super().internals(), "kappa_capped": capped}


class PenaltyNoisyRule(EpochPenaltyRule):
    """Algorithm 3. Extra constants: ``mu`` (0.5), ``mu_scaling`` (``"constant"`` | ``"sqrt-L"``)."""

    split = 2
    constants: ClassVar[dict[str, Any]] = {
        **EpochPenaltyRule.constants,
        "mu": NONNEGATIVE,
        "mu_scaling": Choice(("constant", "sqrt-L")),
    }
    defaults: ClassVar[dict[str, Any]] = {**EpochPenaltyRule.defaults, "mu": 0.5, "mu_scaling": "constant"}

    def setup(self) -> None:
        super().setup()
        self.mu0 = self.mu  # the constant as given; mu: the step used
        self.mu = self.mu0 / math.sqrt(self.L) if self.mu_scaling == "sqrt-L" else self.mu0

    def initial_kappa(self) -> np.ndarray:
        return np.zeros(self.m)

    def penalty(self, c: np.ndarray) -> np.ndarray:
        return c @ self.kappa

    def update_multipliers(self, mean_c: np.ndarray) -> None:
        self.kappa = np.maximum(self.kappa + self.mu * mean_c, 0.0)

    def epoch_R(self) -> float:
        return math.sqrt(1.0 + float(self.kappa @ self.kappa)) * self.R
