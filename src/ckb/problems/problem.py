"""Problems: domain, true objective and constraints, noise model, and the ground truth only metrics see.

Conventions
-----------
- Constraints are feasible where ``g_j(x) <= 0`` for all ``j = 1..m`` (``m = 0`` is an unconstrained
  problem).
- The objective is *maximized* unless ``minimize=True``. Internally every policy maximizes the
  *utility* ``u = sign * f`` (``sign = -1`` when minimizing) and is told ``sign * y``; traces record
  ``f`` in the problem's own sense, and regret is always ``u* - u(x_t) >= 0``.
- A policy never receives a :class:`Problem`; it gets a :class:`~ckb.contract.ProblemInfo` (domain,
  ``m``, kernel hint, sense) and observations, the contract of :mod:`ckb.contract`. Ground truth
  (``x*``, ``f*``, true values) is for the runner's metrics.

Seams for later capabilities: an environment may reveal information before a round (full-information
constraint samples), deliver observations late (delays), or switch functions between phases
(non-stationarity); see :mod:`ckb.runner.environment`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from ckb._validation import check_bool, one_line, short_repr
from ckb.contract.domain import Domain
from ckb.contract.problem_info import ProblemInfo
from ckb.errors import CKBError, InvalidInputError
from ckb.kernels.base import Kernel
from ckb.problems.noise import ObservationModel

__all__ = ["Problem", "ProblemInfo"]  # ProblemInfo lives in ckb.contract; re-exported here


class Problem:
    """A black-box optimization problem with ``m >= 0`` constraints.

    Parameters
    ----------
    name, domain:
        Identification and the :class:`~ckb.contract.domain.Domain`.
    objective:
        ``f(X) -> (k,)`` for points ``X`` of shape ``(k, d)``; or, for a finite domain, an ``(n,)`` array of
        values at the arms.
    constraints:
        ``g(X) -> (k, m)``; or an ``(n, m)`` array on a finite domain; or ``None`` (``m = 0``).
    noise:
        The :class:`~ckb.problems.noise.ObservationModel`.
    kernel:
        The kernel the functions are believed to live in, offered to policies as a default.
    minimize:
        Minimize ``f`` instead of maximizing it.
    optimum:
        Optional known ``(x*, f*)``. Otherwise it is computed over the candidates (arms or grid); on a
        continuous box without a grid it must be given for regret to be defined.
    hints:
        Public scale constants for policy defaults (see :class:`~ckb.contract.ProblemInfo`).
    metadata:
        Free-form facts recorded in summaries (e.g. the instance's ``B``, ``h``, Slater margin).
    """

    #: the one environment this kind of problem runs under (None: any) and why; every other environment
    #: refuses it when built (:class:`~ckb.runner.environment.Environment`)
    needs_environment: ClassVar[str | None] = None
    needs_environment_because: ClassVar[str] = ""

    def __init__(
        self,
        name: str,
        domain: Domain,
        objective: Callable[[np.ndarray], np.ndarray] | np.ndarray,
        constraints: Callable[[np.ndarray], np.ndarray] | np.ndarray | None,
        noise: ObservationModel,
        *,
        kernel: Kernel | None = None,
        minimize: bool = False,
        optimum: tuple[np.ndarray, float] | None = None,
        hints: dict[str, float] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        _check_parts(name, domain, noise)
        self.name = name
        self.domain = domain
        self.noise = noise
        self.kernel = _checked_kernel(kernel, name)
        self.minimize = check_bool(minimize, "minimize")
        self.sign = -1.0 if self.minimize else 1.0
        self.hints = _checked_hints(hints, name)
        self.metadata = dict(metadata or {})
        self._f_fn, self._g_fn = None, None
        self.f_values = self.g_values = None  # tables over the candidates, when there are any
        if isinstance(objective, np.ndarray) or not callable(objective):
            if not domain.is_finite:
                raise InvalidInputError("a table of objective values needs a finite domain or a grid.")
            self.f_values = _table(objective, (domain.n,), "objective values")
        else:
            self._f_fn = objective
        if constraints is None:
            self.m = 0
            if self.f_values is not None or domain.is_finite:
                self.g_values = np.zeros((domain.n, 0))
        elif isinstance(constraints, np.ndarray) or not callable(constraints):
            if not domain.is_finite:
                raise InvalidInputError("a table of constraint values needs a finite domain or a grid.")
            g = _numeric(constraints, f"problem {name!r}: constraint values")
            g = g[:, None] if g.ndim == 1 else g
            self.g_values = _table(g, (domain.n, -1), "constraint values")
            self.m = self.g_values.shape[1]
        else:
            self._g_fn = constraints
            at = domain.candidates[:1] if domain.is_finite else domain.lower[None, :]
            probe = _numeric(
                _called(constraints, at, name, "constraints"),
                f"problem {name!r}: constraints(x) at x = {at[0].tolist()}",
            )
            probe = probe[:, None] if probe.ndim == 1 else probe
            if probe.ndim != 2 or probe.shape[0] != 1:
                raise InvalidInputError(
                    f"problem {name!r}: constraints(X) must return shape (k, m) for k points, got shape "
                    f"{probe.shape} for one point x = {at[0].tolist()}."
                )
            self.m = probe.shape[1]
        if self._f_fn is not None and not domain.is_finite:  # what the environment will call, once now
            _called(self._f_fn, domain.lower[None, :], name, "objective")
        if domain.is_finite:  # tabulate once: the environment then looks values up in O(1)
            if self.f_values is None:
                f = _called(self._f_fn, domain.candidates, name, "objective")
                self.f_values = _table(f, (domain.n,), "objective(candidates)")
            if self.g_values is None:
                g = _called(self._g_fn, domain.candidates, name, "constraints")
                g = _numeric(g, f"problem {name!r}: constraints(candidates)")
                self.g_values = _table(
                    g[:, None] if g.ndim == 1 else g, (domain.n, self.m), "constraints(candidates)"
                )
        self._optimum = optimum
        self._lp_value: float | None = None

    # ------------------------------------------------------------------ truth
    def evaluate(self, index: int, x: np.ndarray) -> tuple[float, np.ndarray]:
        """True ``(f(x), g(x))`` at an arm (``index >= 0``) or a point.

        Tables (finite domains, grids) were checked when built; a function on a continuous box is checked
        here, at every point it is evaluated: one finite objective value and ``m`` finite constraint values,
        else an :class:`InvalidInputError` naming the problem, the function and the point.
        """
        if index >= 0 and self.f_values is not None:
            return float(self.f_values[index]), self.g_values[index]
        X = x[None, :]
        fx = self._point_values(self._f_fn(X), 1, "objective", x)
        f = float(fx[0])
        if self.m == 0:
            return f, np.zeros(0)
        return f, self._point_values(self._g_fn(X), self.m, "constraints", x)

    def _point_values(self, out: Any, size: int, what: str, x: np.ndarray) -> np.ndarray:
        """``out``, what ``what(x[None, :])`` returned, as ``size`` finite floats (else a one-line error)."""
        try:
            values = np.asarray(out, dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"problem {self.name!r}: {what}(x) must be real numbers, got {short_repr(out, 60)} at x = "
                f"{np.asarray(x).tolist()}."
            ) from None
        if values.size != size:
            expected = (
                "one value, shape (1,)" if what == "objective" else f"m = {size} value(s), shape (1, {size})"
            )
            raise InvalidInputError(
                f"problem {self.name!r}: {what}(x) must return {expected} for one point x, got shape "
                f"{values.shape} at x = {np.asarray(x).tolist()}."
            )
        values = values.reshape(size)
        if not np.isfinite(values).all():
            shown = values[0] if what == "objective" else values.tolist()
            raise InvalidInputError(
                f"problem {self.name!r}: {what}(x) is {shown} at x = {np.asarray(x).tolist()}; the true "
                "functions must be finite."
            )
        return values

    @property
    def feasible(self) -> np.ndarray:
        """Boolean mask of feasible candidates."""
        if self.g_values is None:
            raise InvalidInputError("feasibility over candidates needs a finite domain or a grid.")
        return np.all(self.g_values <= 0.0, axis=1)

    @property
    def optimum(self) -> tuple[int, np.ndarray, float]:
        """``(index, x*, f*)``: the best feasible candidate (``index = -1`` when given explicitly)."""
        if self._optimum is not None:
            x, f = self._optimum
            return -1, np.asarray(x, dtype=float), float(f)
        if self.f_values is None:
            raise InvalidInputError(
                f"problem {self.name!r} is a continuous box without a grid: pass optimum=(x*, f*) to define regret."
            )
        feas = self.feasible
        if not np.any(feas):
            worst = float(np.min(np.max(self.g_values, axis=1)))
            raise InvalidInputError(
                f"problem {self.name!r} has no feasible candidate (smallest max_j g_j = {worst:.4g} > 0)."
            )
        u = np.where(feas, self.sign * self.f_values, -np.inf)
        i = int(np.argmax(u))
        return i, self.domain.candidates[i], float(self.f_values[i])

    @property
    def utility_star(self) -> float:
        return self.sign * self.optimum[2]

    @property
    def utility_star_randomized(self) -> float | None:
        r"""Best feasible *distribution* over candidates: :math:`\max_\pi \{E_\pi u : E_\pi g_j \le 0\ \forall j\}`.

        The baseline of the stronger regret :math:`R_+(T) = T E_{\pi^*}[u] - \sum_t u(x_t)` that the
        primal-dual papers' theorems bound (Sec. 2 of both Zhou & Ji (2022) and the CBO paper); a linear
        program over the simplex (HiGHS). ``None`` without candidates. Always >= :attr:`utility_star`.
        """
        if self.f_values is None:
            return None
        if self._lp_value is None:
            from scipy.optimize import linprog

            u = self.sign * self.f_values
            if self.m == 0:
                self._lp_value = float(np.max(u))
            else:
                n = u.shape[0]
                # the objective and each constraint row scaled by a power of two near its largest
                # magnitude (exact in floating point; the LP's solution is unchanged): HiGHS's tolerances
                # are absolute, so before, values near 1e15 failed ("Model error") and values near 1e-20
                # gave a wrong optimum without a word
                su, sg = power_of_two_scale(u), power_of_two_scale(self.g_values, axis=0)
                res = linprog(
                    -u / su,
                    A_ub=(self.g_values / sg).T,
                    b_ub=np.zeros(self.m),
                    A_eq=np.ones((1, n)),
                    b_eq=[1.0],
                    bounds=(0, None),
                    method="highs",
                )
                if res.status == 2:
                    raise InvalidInputError(
                        f"problem {self.name!r}: no feasible distribution over the candidates ({res.message})."
                    )
                if res.status != 0:
                    raise InvalidInputError(
                        f"problem {self.name!r}: the best feasible distribution over the candidates could not be "
                        f"computed ({res.message}); its values of f reach {np.max(np.abs(u)):.3g} and of g "
                        f"{np.max(np.abs(self.g_values)):.3g}."
                    )
                self._lp_value = max(float(-res.fun) * su, self.utility_star)
        return self._lp_value

    def info(self) -> ProblemInfo:
        return ProblemInfo(self.name, self.domain, self.m, self.kernel, self.minimize, dict(self.hints))

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "domain": self.domain.to_dict(),
            "m": self.m,
            "minimize": self.minimize,
            "noise": self.noise.to_dict(),
            "kernel": None if self.kernel is None else self.kernel.to_dict(),
        }
        try:
            idx, x, f = self.optimum
            out["optimum"] = {"index": idx, "x": np.asarray(x).tolist(), "f": f}
        except InvalidInputError as exc:
            out["optimum"] = str(exc)
        out.update(self.metadata)
        return out


def _numeric(values: Any, what: str) -> np.ndarray:
    """``values`` as a float array, or an :class:`InvalidInputError` saying ``what`` is not numeric."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{what} must be real numbers, got {short_repr(values, 60)}.") from None


def _check_parts(name: Any, domain: Any, noise: Any) -> None:
    """A problem's name (non-empty text), domain and observation model, else one line naming them."""
    if not isinstance(name, str) or not name:
        raise InvalidInputError(f"a problem's name must be a non-empty string, got {name!r}.")
    if not isinstance(domain, Domain):
        raise InvalidInputError(
            f"problem {name!r}: domain must be a ckb.problems.FiniteDomain or BoxDomain, got "
            f"{type(domain).__name__} ({short_repr(domain, 60)})."
        )
    if not (callable(getattr(noise, "sample", None)) and callable(getattr(noise, "to_dict", None))):
        raise InvalidInputError(
            f"problem {name!r}: noise must be a ckb.problems.ObservationModel (e.g. GaussianNoise(0.1, "
            f"0.1)), got {short_repr(noise, 60)} ({type(noise).__name__})."
        )


#: the hints policies read as bounds (B on |f|, G on |g|, R the noise level): finite numbers >= 0
_BOUND_HINTS = ("B", "G", "R")


def _checked_hints(hints: Any, name: str) -> dict[str, Any]:
    """The problem's public hints as a dict; the bounds :data:`_BOUND_HINTS` must be finite numbers >= 0
    (a hint of -1, NaN or "one" reached a policy, which named its own constant or ran on with it)."""
    if hints is None:
        return {}
    if not isinstance(hints, Mapping):
        raise InvalidInputError(
            f"problem {name!r}: hints must be a dict of name -> value, got {short_repr(hints, 60)}."
        )
    for key in _BOUND_HINTS:
        if key not in hints:
            continue
        v = hints[key]
        ok = isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
        if not ok:
            raise InvalidInputError(
                f"problem {name!r}: hints[{key!r}] must be a finite number >= 0 (a bound policies read), got "
                f"{short_repr(v, 40)}."
            )
    return dict(hints)


def _checked_kernel(kernel: Any, name: str) -> Kernel | None:
    """The problem's kernel: None, a :class:`~ckb.kernels.Kernel`, or a table such as ``{"type": "se",
    "lengthscale": 0.2}`` (as policies take; built here); anything else is one line naming the problem
    (it was taken, and a policy later said "kernel must be a ckb.kernels.Kernel", naming no problem)."""
    if kernel is None or isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, Mapping):
        from ckb.kernels import make_kernel

        try:
            return make_kernel(kernel)
        except CKBError as exc:
            raise InvalidInputError(f"problem {name!r}: kernel {short_repr(kernel, 60)}: {exc}") from None
    raise InvalidInputError(
        f"problem {name!r}: kernel must be a ckb.kernels.Kernel or a table such as {{'type': 'se', "
        f"'lengthscale': 0.2}}, got {short_repr(kernel, 60)} ({type(kernel).__name__})."
    )


def _called(fn, X: np.ndarray, name: str, what: str) -> Any:
    """``fn(X)`` for the problem's ``what`` function; an error it raises (not ckb's) is one line saying
    that the functions take k points at once (a function written for one point, ``x[1]`` on a (k, d)
    array, raised an IndexError from the user's code)."""
    try:
        return fn(X)
    except CKBError:
        raise
    except Exception as exc:
        raise InvalidInputError(
            f"problem {name!r}: {what}(X) raised {type(exc).__name__}: {one_line(exc)} for X of shape "
            f"{X.shape}; a problem's functions take an array of k points, shape (k, d), and return k values "
            f"(the constraints: shape (k, m)): e.g. lambda X: X[:, 0] - X[:, 1]."
        ) from None


def _table(values: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    arr = _numeric(values, name)
    if arr.shape != shape and not (
        len(shape) == 2 and shape[1] == -1 and arr.ndim == 2 and arr.shape[0] == shape[0]
    ):
        want = f"({shape[0]}, m), one row per candidate" if shape[1:] == (-1,) else str(shape)
        raise InvalidInputError(f"{name} must have shape {want}, got {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(
            f"{name} contain non-finite entries (first at {np.argwhere(~np.isfinite(arr))[0].tolist()})."
        )
    out = arr.copy()
    out.setflags(write=False)
    return out


def power_of_two_scale(values: np.ndarray, axis=None):
    """The power of two at or below the largest magnitude of ``values`` (per column with ``axis=0``; 1
    where all are zero): dividing by it is exact in floating point and brings the largest to [1, 2)."""
    top = np.max(np.abs(values), axis=axis)
    scale = np.exp2(np.floor(np.log2(np.where(top > 0, top, 1.0))))
    return float(scale) if axis is None else scale
