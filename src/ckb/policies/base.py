"""The policy interface: ask / tell with explicit, serializable state.

A policy is constructed from a :class:`~ckb.contract.ProblemInfo` (never the problem itself: no true
functions, no optimum), a numpy ``Generator`` it owns, and keyword parameters validated in the
constructor. Each round the runner calls :meth:`Policy.ask` (optionally with information the environment
reveals before the round) and later :meth:`Policy.tell` with each observation as it arrives (in the
maximization sense). :meth:`Policy.internals` exposes scalars the runner records per round (dual
variables, beta, ...). :meth:`Policy.state_dict` / :meth:`Policy.load_state_dict` capture everything
needed to resume a run exactly (including the random generator's state).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from ckb._validation import check_scalar
from ckb.contract.observation import Observation
from ckb.contract.problem_info import ProblemInfo
from ckb.errors import InvalidInputError
from ckb.exploration import argmax_random_tie, refine_from_candidates, sobol_candidates
from ckb.kernels import Kernel, make_kernel
from ckb.rules.base import RuleAdapter
from ckb.surrogates import ExactGP

_REQUIRED = object()  # no default: a missing hint is an error


class Policy(ABC):
    #: the registry name (set by :func:`ckb.policies.register`)
    name: ClassVar[str] = ""
    #: whether ``tell`` handles observations carrying only the reward or only the costs (delayed feedback)
    accepts_partial_feedback: ClassVar[bool] = False

    def __init__(self, info: ProblemInfo, rng: np.random.Generator) -> None:
        if not isinstance(info, ProblemInfo):
            raise InvalidInputError(f"a policy needs a ProblemInfo, got {type(info).__name__}.")
        self.info = info
        self.rng = rng
        self.t = 0  # rounds asked so far

    @abstractmethod
    def ask(self, context: Any = None) -> int | np.ndarray:
        """The next action: a candidate index on a domain with candidates, else a point."""

    @abstractmethod
    def tell(self, obs: Observation) -> None:
        """Record one observation (``obs.y`` in the maximization sense)."""

    def internals(self) -> dict[str, float]:
        """Scalars to record after each ask (e.g. ``{"beta": ..., "dual": ...}``)."""
        return {}

    # persistence -----------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "rng": self.rng.bit_generator.state, **self._state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t = int(state["t"])
        self.rng.bit_generator.state = state["rng"]
        self._load(state)

    def _state(self) -> dict[str, Any]:
        return {}

    def _load(self, state: dict[str, Any]) -> None:
        return None

    # helpers ---------------------------------------------------------------
    @staticmethod
    def _named(name: str, values) -> dict[str, float]:
        """Per-constraint internals: ``{name: v}`` for one value, ``{name_0: v0, name_1: v1, ...}`` for more."""
        values = list(values)
        if len(values) == 1:
            return {name: float(values[0])}
        return {f"{name}_{j}": float(v) for j, v in enumerate(values)}

    @property
    def _who(self) -> str:
        """The policy's name in error messages (the class name for an unregistered subclass)."""
        return self.name or type(self).__name__

    def _hint(self, key: str, value: Any, what: str = "", param: str | None = None, default: Any = _REQUIRED):
        """``value`` if given, else the problem's public hint ``key`` (:attr:`ProblemInfo.hints`), else
        ``default``; without a default, an error naming the parameter and the hints the problem has."""
        if value is not None:
            return value
        hints = self.info.hints
        if key in hints:
            return hints[key]
        if default is not _REQUIRED:
            return default
        raise InvalidInputError(
            f"policy {self._who!r} needs {what or key}: pass {param or key}=... or use a problem that "
            f"publishes the hint {key!r} (problem {self.info.name!r} publishes {sorted(hints) or 'none'})."
        )

    def _kernel(self, kernel: Kernel | dict | None) -> Kernel:
        if kernel is None:
            if self.info.kernel is None:
                raise InvalidInputError(
                    f"policy {self.name!r} needs a kernel: the problem {self.info.name!r} suggests none; pass kernel=..."
                )
            return self.info.kernel
        return kernel if isinstance(kernel, Kernel) else make_kernel(kernel)

    def _gps(
        self,
        kernel: Kernel | dict | None,
        noise: float,
        candidates: np.ndarray | None,
        *,
        method: str = "auto",
        m: int = 0,
        kernel_g: Kernel | dict | None = None,
        noise_g: float | None = None,
        shared_prior: bool = False,
    ) -> tuple[ExactGP, list[ExactGP]]:
        """The GP of f and ``m`` GPs of the constraints on ``candidates`` (``None``: a continuous box).

        ``kernel`` (default: the problem's) and the regularizer λ = ``noise``; the constraints use
        ``kernel_g`` and ``noise_g`` when given, else the same. ``shared_prior``: with one kernel for all,
        the constraint GPs reuse f's prior factor (joint samples from one eigendecomposition)."""
        kf = self._kernel(kernel)
        kg = kf if kernel_g is None else self._kernel(kernel_g)
        gp_f = ExactGP(kf, noise, candidates, method=method)
        prior = gp_f.prior if shared_prior and kg is kf else None
        noise_g = noise if noise_g is None else noise_g
        return gp_f, [ExactGP(kg, noise_g, candidates, method=method, prior=prior) for _ in range(m)]

    def _require_constraints(self) -> None:
        if self.info.m < 1:
            raise InvalidInputError(
                f"policy {self._who!r} needs at least one constraint (m >= 1), but problem "
                f"{self.info.name!r} has m = {self.info.m}."
            )

    def _require_candidates(self, why: str = "") -> np.ndarray:
        """The domain's candidates (arms or a grid); an error on a continuous box without a grid."""
        candidates = self.info.domain.candidates
        if candidates is None:
            raise InvalidInputError(
                f"policy {self._who!r} needs a finite domain or a grid of candidates{why}; problem "
                f"{self.info.name!r} is a continuous box without a grid (give it one: BoxDomain(..., grid=...))."
            )
        return candidates

    def _search_set(self, n_candidates: int) -> tuple[np.ndarray, bool]:
        """The points a GP keeps its posterior at: the domain's candidates (arms or a grid; ``True``: the
        argmax is exact) or, on a continuous box, ``n_candidates`` Sobol points drawn from the policy's rng
        (``False``: refine from them, :func:`ckb.exploration.refine_from_candidates`)."""
        dom = self.info.domain
        if dom.candidates is not None:
            return dom.candidates, True
        n = check_scalar(n_candidates, "n_candidates", low=1, integer=True)
        return sobol_candidates(dom.lower, dom.upper, n, self.rng), False

    def _search_gps(
        self, kernel, noise: float, n_candidates: int, n_restarts: int, *, method: str, m: int = 0
    ) -> tuple[ExactGP, list[ExactGP]]:
        """The GPs of :meth:`_gps` (regularizer ``noise``, kept as ``self.noise``) on the search set of
        :meth:`_search_set` (``self._finite``: whether the argmax over it is exact); ``n_restarts`` (kept
        as ``self.n_restarts``) is the number of local refinements :meth:`_best` makes on a box."""
        self.noise = check_scalar(noise, "noise (lambda)", low=0.0, low_inclusive=False)
        self.n_restarts = check_scalar(n_restarts, "n_restarts", low=0, integer=True)
        cands, self._finite = self._search_set(n_candidates)
        return self._gps(kernel, self.noise, cands, method=method, m=m)

    def _best(
        self, scores: np.ndarray, score_at, candidates: np.ndarray, n_restarts: int
    ) -> int | np.ndarray:
        """The argmax of ``scores`` (at ``candidates``, the search set of :meth:`_search_set`): exact with
        random tie-breaking on a domain with candidates; on a continuous box, L-BFGS-B on ``score_at``
        from the best ``n_restarts`` candidates (:func:`ckb.exploration.refine_from_candidates`)."""
        dom = self.info.domain
        if dom.candidates is not None:
            return argmax_random_tie(scores, self.rng)
        return refine_from_candidates(
            scores, score_at, candidates, dom.lower, dom.upper, self.rng, n_restarts=n_restarts
        )

    def _check_obs(self, obs: Observation) -> None:
        if not (obs.has_y and obs.has_c) and not self.accepts_partial_feedback:
            raise InvalidInputError(
                f"policy {self.name!r} cannot use feedback whose reward and costs arrive separately "
                f"(round {obs.t}: has_y = {obs.has_y}, has_c = {obs.has_c}); use a policy that accepts "
                "partial feedback (e.g. rpol-ucb, rpol-censored-ucb, ckb-ucb, config) or joint delays."
            )
        if obs.c.shape != (self.info.m,):
            raise InvalidInputError(
                f"observation has {obs.c.shape[0] if obs.c.ndim else 'no'} constraint value(s) but the problem has m = {self.info.m}."
            )


__all__ = ["Policy", "RuleAdapter"]
