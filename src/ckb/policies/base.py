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

from ckb._validation import check_bool, check_scalar, is_count, short_repr
from ckb.contract.observation import Observation
from ckb.contract.problem_info import ProblemInfo
from ckb.errors import InvalidInputError, OutOfDomainError
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
        if not isinstance(rng, np.random.Generator):
            raise InvalidInputError(
                f"a policy needs a numpy Generator (np.random.default_rng(seed)), got {rng!r:.80}."
            )
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
    #: top-level state keys whose arrays must be finite (raw data kept by the policy, e.g. rewards)
    finite_state_keys: ClassVar[tuple[str, ...]] = ()

    def state_dict(self) -> dict[str, Any]:
        return {"policy": self._who, "t": self.t, "rng": self.rng.bit_generator.state, **self._state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` of this policy. The whole state is checked first (its policy, keys,
        round, generator, finite data); a state that still fails to load leaves the policy as it was."""
        own = self.state_dict()
        t, rng = self._check_state(state, own)
        try:
            self.t = t
            self.rng.bit_generator.state = rng
            self._load(state)
            for key, gp in self._gp_items():
                _check_gp(gp, key)
        except Exception as exc:
            self.t = own["t"]
            self.rng.bit_generator.state = own["rng"]
            self._load(own)
            if isinstance(exc, InvalidInputError):
                raise
            msg = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise InvalidInputError(
                f"cannot load this state into policy {self._who!r} ({msg}); nothing was loaded."
            ) from None

    def _check_state(self, state: Any, own: dict[str, Any]) -> tuple[int, dict]:
        """The checks of :meth:`load_state_dict` before anything is assigned; returns ``(t, rng state)``."""
        who = self._who
        if not isinstance(state, dict):
            raise InvalidInputError(
                f"policy {who!r} loads a state dict (from state_dict()), got {type(state).__name__}."
            )
        other = state.get("policy", who)  # checkpoints written before the name was stored have none
        if other != who:
            raise InvalidInputError(
                f"this state belongs to policy {other!r}, not to {who!r}; nothing was loaded."
            )
        missing = [k for k in own if k not in state and k != "policy"]
        extra = [k for k in state if k not in own]
        if missing or extra:
            parts = [f"missing key(s) {missing}"] if missing else []
            parts += [f"unexpected key(s) {extra}"] if extra else []
            raise InvalidInputError(f"not a state of policy {who!r}: {', '.join(parts)}; nothing was loaded.")
        t = state["t"]
        if not is_count(t):
            raise InvalidInputError(f"state 't' must be a round number >= 0, got {t!r}.")
        probe = type(self.rng.bit_generator)()
        try:
            probe.state = state["rng"]
        except Exception as exc:
            raise InvalidInputError(
                f"state 'rng' is not a state of this policy's {type(probe).__name__} generator "
                f"({' '.join(str(exc).split())}): got {state['rng']!r:.80}."
            ) from None
        for key in self.finite_state_keys:
            _check_finite(state[key], key)
        for key, sub in _gp_states(state):
            n_obs = sub["t"]
            if not is_count(n_obs):
                raise InvalidInputError(f"state {key}.t must be a count >= 0, got {n_obs!r:.80}.")
            for name in ("X", "y", "arms"):
                if np.ndim(sub[name]) < 1 or np.shape(sub[name])[0] != n_obs:
                    raise InvalidInputError(
                        f"state {key}.{name} has shape {np.shape(sub[name])}, but {key}.t = {n_obs} "
                        "observations need one row each; nothing was loaded."
                    )
            for name, v in sub.items():
                if name != "mode" and name != "arms":
                    _check_finite(v, f"{key}.{name}")
        if isinstance(state.get("rule"), dict):
            for name, v in state["rule"].items():
                if name != "last" and isinstance(v, np.ndarray) and v.dtype.kind == "f":
                    _check_finite(v, f"rule.{name}")
        return int(t), state["rng"]

    def _gp_items(self):
        """``(state key, GP)`` of every GP the policy keeps (an attribute or a list of them)."""
        for key, v in vars(self).items():
            if isinstance(v, ExactGP):
                yield key, v
            elif isinstance(v, list) and v and all(isinstance(g, ExactGP) for g in v):
                yield from ((f"{key}[{j}]", g) for j, g in enumerate(v))

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
        from the best ``n_restarts`` candidates (:func:`ckb.exploration.refine_from_candidates`). Scores
        of another shape than one per candidate are refused in one line (an ``(n, m)`` score's flat argmax
        played arms that did not exist or were not meant)."""
        scores = np.asarray(scores)
        if scores.shape != (len(candidates),):
            raise InvalidInputError(
                f"policy {self._who!r}: its scores have shape {scores.shape}, expected ({len(candidates)},), one "
                "per candidate point (a rule's score returns one value per point: e.g. sum over the m "
                "constraints)."
            )
        dom = self.info.domain
        if dom.candidates is not None:
            return argmax_random_tie(scores, self.rng)
        return refine_from_candidates(
            scores, score_at, candidates, dom.lower, dom.upper, self.rng, n_restarts=n_restarts
        )

    def _asked_round(self, t: Any) -> int:
        """An observation's round as an int: a round >= 1 that this policy has asked."""
        r = _obs_int(t, "round t")
        if r < 1:
            raise InvalidInputError(f"observation round t must be >= 1, got {t!r}.")
        if r > self.t:
            raise InvalidInputError(
                f"observation round t = {r} has not been asked: policy {self._who!r} has asked {self.t} "
                "round(s); tell the observation of a round after asking it."
            )
        return r

    def _check_obs(self, obs: Observation) -> Observation:
        """Check a whole observation before a policy records any of it; returns it with ``t`` and
        ``index`` as ints, ``y`` as a float and ``c`` as an ``(m,)`` float array (the values unchanged).
        Every ``tell`` calls this first, so a refused observation changes nothing."""
        if not isinstance(obs, Observation):
            raise InvalidInputError(
                f"policy {self._who!r}: tell needs a ckb.contract.Observation, got {type(obs).__name__} {obs!r:.80}."
            )
        has_y, has_c = obs.has_y, obs.has_c
        has_y, has_c = check_bool(has_y, "observation has_y"), check_bool(has_c, "observation has_c")
        if not (has_y and has_c) and not self.accepts_partial_feedback:
            raise InvalidInputError(
                f"policy {self._who!r} cannot use feedback whose reward and costs arrive separately "
                f"(round {obs.t}: has_y = {has_y}, has_c = {has_c}); use a policy that accepts "
                "partial feedback (e.g. rpol-ucb, rpol-censored-ucb, ckb-ucb, config) or joint delays."
            )
        t = self._asked_round(obs.t)
        index = _obs_int(obs.index, "index (arm)")
        dom = self.info.domain
        n = dom.n
        if index >= 0 or not hasattr(dom, "lower"):  # an arm; a finite domain has nothing but arms
            if not 0 <= index < n:
                raise OutOfDomainError(
                    f"observation index {obs.index!r} is not an arm of the domain (0..{n - 1})."
                )
            x = dom.candidates[index]  # the arm's own point; obs.x must be it, to round-off
            try:
                given = np.asarray(obs.x, dtype=float)
            except (TypeError, ValueError):
                given = None
            if given is None or given.shape != x.shape or not np.allclose(given, x, rtol=1e-9, atol=1e-12):
                raise OutOfDomainError(
                    f"observation x {short_repr(obs.x, 80)} is not the point of arm {index} "
                    f"({short_repr(x.tolist(), 80)}); an observation's x and index must agree."
                )
        elif index != -1:
            raise OutOfDomainError(
                f"observation index {obs.index!r} must be an arm 0..{n - 1} or -1 (a point of the box)."
            )
        else:
            try:
                x = np.asarray(obs.x, dtype=float)
            except (TypeError, ValueError):
                x = None
            if x is None or x.shape != (dom.d,) or not np.all(np.isfinite(x)):
                raise InvalidInputError(
                    f"observation x must be a finite point of shape ({dom.d},), got {obs.x!r:.80}."
                )
            dom.check_point(x)
        y = obs.y
        if has_y:
            if isinstance(y, (bool, np.bool_, str, bytes)) or y is None or np.ndim(y) != 0:
                raise InvalidInputError(f"observation y must be a real number, got {y!r:.80}.")
            try:
                y = float(y)
            except (TypeError, ValueError):
                raise InvalidInputError(f"observation y must be a real number, got {obs.y!r:.80}.") from None
            if not np.isfinite(y):
                raise InvalidInputError(f"observation y must be finite, got {obs.y!r}; nothing was recorded.")
        try:
            c = np.asarray(obs.c, dtype=float)
        except (TypeError, ValueError):
            c = None
        m = self.info.m
        if c is not None and c.ndim == 1 and c.shape != (m,):
            raise InvalidInputError(
                f"observation has {c.shape[0]} constraint value(s) but the problem has m = {m}: {obs.c!r:.80}."
            )
        if c is None or c.shape != (m,):
            got = f"shape {c.shape}" if c is not None else "a non-numeric value"
            raise InvalidInputError(
                f"observation c must be m = {m} constraint value(s) (shape ({m},)), got {got}: {obs.c!r:.80}."
            )
        if has_c and not np.all(np.isfinite(c)):
            raise InvalidInputError(f"observation c must be finite, got {c.tolist()}; nothing was recorded.")
        if t == obs.t and index == obs.index and y is obs.y and c is obs.c and x is obs.x:
            return obs
        return Observation(t, index, x, y, c, has_y=bool(has_y), has_c=bool(has_c))


def _check_finite(value: Any, key: str) -> None:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(f"state {key!r} must hold numbers, got {value!r:.80}.") from None
    if not np.all(np.isfinite(arr)):
        bad = arr.reshape(-1)[~np.isfinite(arr.reshape(-1))][0]
        raise InvalidInputError(f"state {key!r} must be finite, but it holds {bad}; nothing was loaded.")


def _gp_states(state: Any, key: str = ""):
    """``(path, sub-state)`` of every GP state (a dict with the keys of ExactGP.state_dict) in ``state``."""
    if isinstance(state, dict):
        if {"X", "y", "arms", "mode", "info_gain"} <= set(state):
            yield key, state
            return
        for k, v in state.items():
            yield from _gp_states(v, f"{key}.{k}" if key else str(k))
    elif isinstance(state, (list, tuple)):
        for j, v in enumerate(state):
            yield from _gp_states(v, f"{key}[{j}]")


def _check_gp(gp: ExactGP, key: str) -> None:
    """A loaded GP's arrays have the shapes its data imply (a state may hold arrays of another size)."""
    t, n = gp.t, gp.n
    shapes = {"y": (gp.y.shape, (t,)), "arms": (gp.arms.shape, (t,))}
    if gp.candidates is not None:
        shapes["mean"] = (np.shape(gp.mean), (n,))
        shapes["var"] = (gp.var.shape, (n,))
    for name, (got, want) in shapes.items():
        if got != want:
            raise InvalidInputError(
                f"state {key}.{name} has shape {got} but {t} observation(s) on {n} candidates need {want}."
            )
    arms = gp.arms
    if np.any((arms < -1) | (arms >= max(n, 1))):
        raise InvalidInputError(f"state {key}.arms holds {arms.tolist()}: not arms 0..{n - 1} (or -1).")


def _obs_int(value: Any, what: str) -> int:
    """An observation's integer field (an int, not a bool), else an error."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise InvalidInputError(f"observation {what} must be an integer, got {value!r:.80}.")


__all__ = ["Policy", "RuleAdapter"]
