r"""Fitted GP models of the practical optimizer (BoTorch/GPyTorch), in the policies' units.

**Units** (:class:`OutcomeUnits`; ``outcome_transform`` of :class:`ckb.Optimizer`). Policies always
maximize :math:`u = s\,y` (``s = -1`` when minimizing), and see each constraint scaled but not shifted,
so that 0 stays the feasibility threshold:

- ``rms``: :math:`\tilde f = (u - \bar u)/\mathrm{sd}(u)`, :math:`\tilde g_j = c_j / r_j` with
  :math:`r_j` the root mean square of the observed values (the units of every study before outcome
  transforms existed, bit for bit);
- ``bilog``: :math:`\tilde g_j = B(c_j / s_j)`, :math:`B(v) = \mathrm{sign}(v)\log(1 + |v|)` (BoTorch's
  Bilog), :math:`s_j` the median of the distinct nonzero :math:`|c_j|` over the initial design (a value
  repeated by a capped simulator counts once); applied twice, :math:`B(B(c_j/s_j))`, when
  :math:`\max|c_j|/s_j > 10^3`; the objective by the normal scores of its ranks,
  :math:`\tilde f = \Phi^{-1}((r - \tfrac12)/n)`;
- ``auto`` (the default): per constraint, first the map of the distance to a bound its values crowd
  against (below); otherwise, per target, ``rms`` unless heavy-tailed (moments that overflow, or a
  largest magnitude beyond 30 robust scales of the design's values for a constraint, :math:`10^3` for
  the objective), then ``bilog``'s map;
- ``auto-no-bounds``: ``auto`` without the bound map, the default before it (a study stored by
  that version resumes with it: :func:`stored_transform`);
- ``auto-log-objective``: ``auto``, but a minimized objective whose observed values are all positive
  and span more than :data:`LOG_OBJECTIVE_SPAN` (two decades) by its log, standardized,
  :math:`\tilde f = (-\log y - m)/s`; what ``auto`` means for ``slack-cei`` (its ``objective_log``),
  whose cumulative regret weighs every evaluation's objective (measured in
  :mod:`ckb.optimizer.policies.slack_cei`). A maximized objective keeps ``auto``'s map: its log would
  crowd the best values together;
- ``bilog-constraints``: each constraint by ``bilog``'s map, the objective as ``auto``. Measured with
  ``pcei`` at 20 seeds on six benchmark problems (variant ``pcei-bilog-constraints``;
  ``docs/results-constrained-benchmark.md``): on the tension/compression spring, whose first
  constraint stays close to its upper bound 1 over most of the box, it found a feasible point in 20
  of 20 seeds (18 in ``auto`` units), solved 2 and made a median 24.5 violating evaluations after the
  design against 41.5 (scaled violation 13 against 25); on Branin-disk 5 against 3, with a scaled
  violation of 3.6 against 1.4; under violation budgets of 1 and 5 scales it kept them in 79 and 95
  of 100 runs outside the spring against 81 and 98. Not the default.
- *the bound map* (``auto``, for the policies that allow it): per constraint, the map of the
  distance to a bound its values crowd against (:func:`crowded_bound`, :func:`bound_log`):
  :math:`\tilde g_j = -\mathrm{sign}(b_j)\log(1 - c_j/b_j)`, with :math:`b_j` one robust scale of the
  design's distances past the largest value (a cap, :math:`b_j > 0`) or the smallest (a floor,
  :math:`b_j < 0`), chosen when the largest distance exceeds 30 such scales (the threshold of the
  constraints' log map) and that side lies more than 30 such scales from 0. Engineering constraints
  are mostly written :math:`1 - r(x)` or :math:`r(x) - 1` with a positive ratio :math:`r` spanning
  decades (a load over a capacity): near its cap, :math:`\tilde g_j \approx -\log r`, the ratio's
  decades evenly spaced, where ``rms`` and ``bilog`` see a near-constant with a few far values.
  *The far side*: a spike or a failure sentinel above values around 0 crowds them against their floor
  too, but there the double log models the constraint better (sign accuracy, 2-D, 5 seeds, 12 / 30
  Sobol points: 1e10 on 30% of the box 0.78 / 0.93 against 0.63 / 0.71 for the bound map; one value of
  1e6 0.76 / 0.89 against 0.61 / 0.77); ``auto-bounds`` (an option) takes the map wherever values
  crowd, near 0 too. *Policies*: a policy class with ``bound_map = False``
  (:attr:`ckb.optimizer.policies.OptimizerPolicy.bound_map`: the primal-dual, penalty and queue rules,
  whose scores weigh the signed constraint estimates together) sees ``auto-no-bounds`` under ``auto``.
  Measured with ``pcei`` at 20 seeds on the eight benchmark problems
  (``docs/results-constrained-benchmark.md``), against ``auto-no-bounds`` (the figures after
  "against"): the map is chosen on the spring (its first constraint :math:`1 - D^3N/(71785\,d^4)`,
  0.99-1 over most of the box, 4e3-6e4 scales from 0, from the design on; the second, floored near -1,
  in some runs) and late in one seed of Gardner 1 (values piling up at the constraint's floor);
  every other stored run of every optimizer policy is unchanged (checked at every ask).
  On the spring a feasible point in 20 of 20 seeds (18), 11.5 violating evaluations after the design
  against 28 (qLogNEI 45.5) and a scaled violation of 4.8 against 16 (qLogNEI 33), median final gap
  0.066 against 0.10 but none solved against 2. ``auto-bounds`` also took it on the welded beam (its
  stresses and deflection, floored at minus their limits 0.4-23 scales from 0): 7.5 against 8.5
  violating evaluations but a scaled violation of 7.6 against 4.1 (qLogNEI 4.7e3).

Measurements behind the choices (GPs of this module fitted on Sobol points, 5 seeds; sign accuracy:
the share of 400 test points where the posterior mean has the sign of the true constraint):

- *constraints*: one spike among 16 smooth O(1) values (2-D), the sign accuracy away from the spike
  for spike 1e3 / 1e4 / 1e6 / 1e8 / 1e10 / 1e30 / 1e155 / 1e300: raw 0.50 (every height), Bilog once
  0.86 / 0.84 / 0.80 / 0.76 / 0.74 / 0.59 / 0.51 / 0.50, Bilog twice 0.93 / 0.92 / 0.92 / 0.91 / 0.91
  / 0.89 / 0.86 / 0.86; values capped at 1e10 on 30% of the box: rms 0.59-0.62, once 0.79-0.83, twice
  0.94-0.96; smooth heavy tails (a power law, an exponential, the welded beam's bending stress; ratios
  8 to 2e12): rms 0.49-0.84, once and twice equal within 0.015 (0.84-1.00). So the heavy-tailed map is
  Bilog twice; ``bilog`` chosen by hand on well-behaved values applies it once;
- *objective*: Spearman correlation of the posterior mean with the truth on 500 test points and the
  share of seeds whose best predicted point is in the true top 5% (n = 12 / 30): a minimized objective
  returning DBL_MAX on 30% of the box -- standardized 0.64, 0.67 (0/5, 1/5), median/robust-scale
  Bilog 0.79, 0.87 (1/5, 0/5), rank normal scores 0.94, 0.97 (5/5, 5/5); exp(8 x) minimized -- 0.90,
  0.97, 0.985 (1/5, 2/5, 5/5 at n = 12); a Branin-like well-behaved objective: standardized 0.997 vs
  rank 0.975 at n = 30. So a heavy-tailed objective gets rank normal scores (only the order of the
  objective matters to the policies' incumbents, and the ranks keep it), a well-behaved one stays
  standardized;
- *the criterion*: over the 67 stored runs of the eight shipped benchmark problems (Sobol, CEI, CKB-UCB,
  CONFIG, qLogNEI, PCEI), the largest ratio of a target to its design's robust scale was 84
  (Hartmann-6's objective) and 52 (the tension spring's first constraint) outside the welded beam, whose deflection
  constraint reached 4.7e3: the threshold 1e3 left seven problems bit for bit in ``rms`` units. On all
  observations instead of the design, values crowding at an active constraint pushed the ratio to 7e3
  (Gardner 2, CEI), hence the design as reference. *The constraints' threshold* is 30 since then
  (``CONSTRAINT_LOG_RATIO``; 1e3 before, still the objective's and the threshold of the double map):
  over every stored 60-evaluation run of ``pcei``, ``pcei-exact``, ``pcei-leap``, ``slack-cei``,
  ``cei`` and ``queue-ucb`` (20 or 10 seeds each), the largest constraint ratio was 10.1 on Gardner 1,
  7.5 on Gramacy, 7.3 on Branin-disk, 3.3 on Gardner 2, 3.2 on Hartmann-6 and 2.8 on the speed
  reducer, but 72.5 and 127.6 on the spring's first and third constraints (in 17 of 20 ``pcei``
  runs beyond 30) and up to 2.5e4 on the welded beam (17 of 20). Between 10 and 72 the threshold
  separates the two problems whose RMS is set by a few values from the six whose runs stay bit for
  bit; 30 lies near the middle on a log scale. Measured with ``pcei`` at 20 seeds against the
  threshold 1e3: on the spring a median 28 violating evaluations after the design against 41.5
  (scaled violation 17 against 25; 16 before the first feasible point against 19.5), a feasible point
  in 18 of 20 seeds both ways, median final gap 0.11 against 0.52, 1 run solved against 0; on the
  welded beam the same median of 10 violating evaluations and scaled violation 4.2, median final gap
  0.21 against 0.35 (none solved either way). ``slack-cei`` on the spring (10 seeds) found a feasible
  point in 7 seeds against 8 (9 since its first step asks P(g <= 0) rather than P(g <= its debt's
  margin); ``docs/results-constrained-benchmark.md``).

Every map keeps the order, the constraints' keep 0 and the sign, and :meth:`OutcomeUnits.c_to_raw` is
the exact inverse (numpy or torch); nothing overflows for any finite value (:func:`bilog` takes logs
before dividing where :math:`|v|/s` is not finite, moments are scaled before squaring).

**Model.** One BoTorch ``SingleTaskGP`` with independent outputs (a batched model: one set of
hyperparameters per target, fitted together): inputs in the unit cube, RBF kernel with BoTorch's
dimension-scaled log-normal lengthscale prior, constant mean, Gaussian noise (BoTorch's LogNormal(-4, 1)
prior; floor 1e-4, or ``noise_floor``: ``exact=True`` uses 1e-6, measured at
:data:`ckb.optimizer.core.EXACT_NOISE_FLOOR`),
every target standardized once more for the fit (:math:`z = (v - a)/b` with its sample mean and
standard deviation; means and standard deviations are mapped back, :math:`\mu_v = a + b\mu_z`,
:math:`\sigma_v = b\sigma_z`). Hyperparameters maximize the marginal likelihood (``fit_gpytorch_mll``
per target, warm-started from the previous fit, then loaded into the batched model); between refits
(``refit_every``) the stored hyperparameters are reused with all current data. Double precision
throughout. :math:`\sigma` is the latent function's posterior standard deviation (without observation
noise).

**Numerics.** Warnings while building and fitting the models are recorded (:func:`capture_warnings`,
``Models.warnings``), not ignored, and a failed fit is reported (``Models.failures``, ``fit_ok``);
:class:`ckb.Optimizer` counts them per trial and raises :class:`NumericsError` on them with
``strict_numerics=True``.

**Pending points.** :meth:`Models.condition` adds points with fantasy observations equal to the
current posterior mean (kriging believer): the posterior mean is unchanged and only the variance
shrinks near the pending points, so parallel asks spread out.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ckb._validation import one_line
from ckb.errors import CKBError, InvalidInputError

#: each outcome transform of ckb.Optimizer (``outcome_transform=``) as its choice per target,
#: (objective, constraints): "auto" picks the robust map on heavy tails only, "plain" never, "robust" always
TRANSFORM_TARGETS = {
    "auto": ("auto", "far-bounds"),
    "rms": ("plain", "plain"),
    "bilog": ("robust", "robust"),
    "bilog-constraints": ("auto", "robust"),
    "auto-bounds": ("auto", "bounds"),
    "auto-no-bounds": ("auto", "auto"),
    "auto-log-objective": ("auto-log", "far-bounds"),
}
OUTCOME_TRANSFORMS = tuple(TRANSFORM_TARGETS)
#: the version of the ``auto`` units, stored with a study beside its ``outcome_transform``: 2 since the
#: bound map is part of ``auto``; a study stored without it (version 1) was decided by ``auto`` without
#: that map, ``auto-no-bounds`` today (:func:`stored_transform`)
UNITS_VERSION = 2


def stored_transform(spec: dict[str, Any], default: str = "auto") -> str:
    """The outcome transform a stored study's decisions were made with, by today's names: its stored
    ``outcome_transform`` (``default`` when it stores none), except that ``"auto"`` stored before
    :data:`UNITS_VERSION` 2 (no ``"units"`` entry) is ``"auto-no-bounds"``, so that a resumed study
    keeps its units."""
    name = spec.get("outcome_transform", default)
    if name == "auto" and int(spec.get("units", 1)) < 2:
        return "auto-no-bounds"
    return name


#: "auto" treats the objective as heavy-tailed when its largest deviation exceeds this many robust
#: scales; a constraint beyond it gets the log map twice
HEAVY_RATIO = 1e3
#: "auto" gives a constraint the log map once its largest magnitude exceeds this many robust scales
CONSTRAINT_LOG_RATIO = 30.0
#: "auto-log-objective" models a minimized positive objective by its log once its observed values span
#: more than this ratio (two decades)
LOG_OBJECTIVE_SPAN = 100.0
#: the largest finite double (what a simulator returns as DBL_MAX)
_MAX = float(np.finfo(float).max)
#: at most this many distinct warning messages are kept per trial (all are counted)
MAX_MESSAGES = 3


def _torch():
    import torch

    return torch


# ------------------------------------------------------------------------------------------ numerics
class NumericsError(CKBError, RuntimeError):
    """``strict_numerics=True``: fitting the GPs or maximizing the acquisition warned or failed; the
    ask was not recorded."""


#: warnings about library APIs, not numerics: passed on as usual instead of counted
_NOT_NUMERICS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning, ImportWarning)


@contextmanager
def capture_warnings() -> Iterator[list[str]]:
    """Record (not ignore) every warning raised in the block, as ``"Category: message"`` strings (one
    line each, at most 300 characters, in order, repeats included); the caller counts them. Warnings
    about library APIs (deprecations, e.g. on the first import of GPyTorch's modules) are not numerical
    trouble: they are passed on to the usual filters instead."""
    out: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield out
    for w in caught:
        if issubclass(w.category, _NOT_NUMERICS):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
            continue
        text = one_line(w.message)
        out.append(f"{w.category.__name__}: {text[:300]}")


def first_distinct(messages: list[str], k: int = MAX_MESSAGES) -> list[str]:
    """The first ``k`` distinct entries of ``messages``, in order."""
    return list(dict.fromkeys(messages))[:k]


# --------------------------------------------------------------------------------------- policy units
def robust_scale(v: Any) -> float:
    """The median of the distinct nonzero magnitudes of ``v`` (0.0 if there are none). Distinct: a value
    repeated by a simulator that caps its output (or returns a sentinel on failure) counts once."""
    a = np.unique(np.abs(np.asarray(v, dtype=float).reshape(-1)))
    a = a[a > 0]
    return float(np.median(a)) if a.size else 0.0


def bilog(v: Any, scale: float = 1.0, depth: int = 1) -> np.ndarray:
    r"""The sign-preserving log map :math:`B(v) = \mathrm{sign}(v)\log(1 + |v|)` (BoTorch's ``Bilog``)
    of ``v / scale``, applied ``depth`` (1 or 2) times; no overflow for any finite ``v`` and ``scale``
    > 0 (:math:`\log(1 + |v|/s)` is computed as :math:`\log|v| - \log s` where :math:`|v|/s` is
    not finite)."""
    v = np.asarray(v, dtype=float)
    a = np.abs(v)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        q = a / scale
        w = np.where(np.isfinite(q), np.log1p(q), np.log(a) - math.log(scale))
    if depth == 2:
        w = np.log1p(w)
    return np.sign(v) * w


def _is_torch(v: Any) -> bool:
    return type(v).__module__.split(".")[0] == "torch"


def bilog_inverse(w: Any, scale: Any = 1.0, depth: Any = 1):
    r"""The inverse of :func:`bilog` (numpy array or torch tensor; ``scale`` and ``depth`` broadcast
    over the last axis): :math:`v = s\,B^{-1}(w)`, :math:`B^{-1}(w) = \mathrm{sign}(w)(e^{|w|} - 1)`,
    after undoing the inner application for depth 2. Odd and smooth through 0 (its derivative there
    is ``scale``); computed as :math:`\mathrm{sign}(w)(e^{|w| + \log s} - s)` for :math:`|w| \ge 1`, so
    only a value past the float range overflows (it maps to +-DBL_MAX); no branch that is not taken
    overflows (finite gradients in torch)."""
    if _is_torch(w):
        torch = _torch()
        xp, s = torch, torch.as_tensor(scale, dtype=w.dtype)
        two = torch.as_tensor(np.asarray(depth) == 2)
    else:
        xp, w = np, np.asarray(w, dtype=float)
        s, two = np.asarray(scale, dtype=float), np.asarray(depth) == 2
    zero = xp.zeros_like(w)

    def odd_expm1(x):  # sign(x) (e^|x| - 1), smooth through 0
        return xp.where(x >= 0, xp.expm1(xp.where(x >= 0, x, zero)), -xp.expm1(xp.where(x < 0, -x, zero)))

    with np.errstate(over="ignore"):
        w = xp.where(two, odd_expm1(xp.where(two, w, zero)), w)
        a = xp.abs(w)
        small = a < 1.0
        near = s * odd_expm1(xp.where(small, w, zero))
        far = xp.sign(w) * (xp.exp(xp.where(small, zero + 1.0, a) + xp.log(s)) - s)
        raw = xp.where(small, near, far)
    return xp.clamp(raw, -_MAX, _MAX) if xp is not np else np.clip(raw, -_MAX, _MAX)


def _standardization(u: np.ndarray) -> tuple[float, float, bool]:
    """``(mean, sd, finite)``: the objective's mean and (ddof=1) standard deviation as ckb always
    computed them (sd 1 for fewer than two values or a constant objective); ``finite`` False when the
    plain formulas overflowed (then mean and sd come from :func:`_mean_sd`'s scaled computation)."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = float(u.mean()) if u.size else 0.0
        sd = float(u.std(ddof=1)) if u.size > 1 else 1.0
    finite = math.isfinite(mean) and math.isfinite(sd)
    if not finite:
        m, d = _mean_sd(u.reshape(-1, 1))
        mean, sd = float(m[0]), float(d[0])
    sd = sd if sd > 1e-12 * max(1.0, abs(mean)) else 1.0
    return mean, sd, finite


def crowded_bound(v: Any, reference: Any = None, offset: float | None = None) -> float | None:
    r"""The bound :math:`b` of the map :func:`bound_log` for values ``v`` that crowd against one side,
    or None. For the top (a cap), the distances :math:`z_i = \max v - v_i`; the values crowd there
    when :math:`\max z` exceeds ``CONSTRAINT_LOG_RATIO`` robust scales :math:`s` of the reference's
    distances (:func:`robust_scale`), and then :math:`b = \max v + s`, provided :math:`b > 0`; the
    bottom likewise (:math:`z_i = v_i - \min v`, :math:`b = \min v - s < 0`). With ``offset``, a
    side counts only if its extreme lies more than ``offset`` such scales from 0 (:math:`|\max v| >
    \mathrm{offset}\cdot s` for the top). The side with the larger ratio wins. A constraint written as
    :math:`1 - r(x)` or :math:`r(x) - 1` with a positive ratio :math:`r` spanning decades is the case:
    its values pile up just below 1 (or above -1), thousands of their scales from 0."""
    v = np.asarray(v, dtype=float).reshape(-1)
    if v.size < 3 or not np.all(np.isfinite(v)):
        return None
    ref = np.ones(v.size, dtype=bool) if reference is None else np.asarray(reference, dtype=bool)
    best, out = CONSTRAINT_LOG_RATIO, None
    for side, ext in ((1.0, float(v.max())), (-1.0, float(v.min()))):
        z = side * (ext - v)
        s = robust_scale(z[ref]) or robust_scale(z)
        if s <= 0 or (offset is not None and not abs(ext) > offset * s):
            continue
        b = ext + side * s
        ratio = float(z.max()) / s
        if side * b > 0 and ratio > best and math.isfinite(b):
            best, out = ratio, b
    return out


def bound_log(v: Any, b: float) -> np.ndarray:
    r"""The log map of the distance to a bound :math:`b \ne 0`: :math:`L_b(v) = -\mathrm{sign}(b)
    \log(1 - v/b)`, increasing, :math:`L_b(0) = 0`, slope :math:`1/|b|` at 0; for a cap (:math:`b > 0`)
    :math:`L_b(1 - r) \approx -\log r` near the cap, for a floor (:math:`b < 0`) the log of the
    distance above it. Computed as :math:`\mp\mathrm{log1p}(-v/b)` (exact signs for tiny values), as
    :math:`\mp(\log|v| - \log|b|)` where :math:`v/b` overflows; values at or past the bound (never
    among the fitted ones) map as the last double before it."""
    v = np.asarray(v, dtype=float)
    edge = np.nextafter(-1.0, 0.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        q = -v / b
        near = np.log1p(np.maximum(np.where(np.isfinite(q), q, 0.0), edge))
        far = np.log(np.abs(v)) - math.log(abs(b))
        out = np.where(q == np.inf, far, np.where(q == -np.inf, np.log1p(edge), near))
    return -math.copysign(1.0, b) * out


#: the inverse of the bound map switches to its log form past this exponent (where expm1 nears overflow)
_BOUND_EXP = 700.0
_LOG_MAX = math.log(_MAX)


def bound_log_inverse(w: Any, b: Any, xp: Any = np):
    r"""The inverse of :func:`bound_log`: :math:`v = b\,(1 - e^{e})`, :math:`e = -\mathrm{sign}(b)\,w`
    (numpy or torch): :math:`-b\,\mathrm{expm1}(e)` up to :math:`e = 700`, beyond it
    :math:`-\mathrm{sign}(b)(e^{e + \log|b|} - |b|)` with the exponent capped at :math:`\log` DBL_MAX
    (a value past the float range maps to about DBL_MAX). No branch overflows to inf, taken or not, so
    torch's gradients stay finite."""
    if xp is np:
        sign, e = np.sign(b), -np.sign(b) * np.asarray(w, dtype=float)
        small = e <= _BOUND_EXP
        with np.errstate(over="ignore"):
            near = b * -np.expm1(np.minimum(e, _BOUND_EXP))
            far = -sign * (
                np.exp(np.minimum(np.where(small, 0.0, e) + np.log(np.abs(b)), _LOG_MAX)) - np.abs(b)
            )
        return np.where(small, near, far)
    sign = xp.sign(b)
    e = -sign * w
    small = e <= _BOUND_EXP
    near = b * -xp.expm1(e.clamp(max=_BOUND_EXP))
    far = -sign * (
        xp.exp((xp.where(small, xp.zeros_like(e), e) + xp.log(b.abs())).clamp(max=_LOG_MAX)) - b.abs()
    )
    return xp.where(small, near, far)


def violation_amounts(c: Any) -> list[int]:
    r"""The constraints (0-based) whose told values look like violation amounts :math:`\max(g, 0)`
    rather than signed values :math:`g`: none negative, at least two exactly 0 (every feasible point
    telling the same 0) and one positive. Such a constraint is flat wherever it holds, so no model
    sees the boundary from the feasible side (``docs/optimizer.md`` advises the signed value)."""
    c = np.asarray(c, dtype=float)
    c = c.reshape(len(c), -1)
    return [
        j
        for j in range(c.shape[1])
        if np.all(c[:, j] >= 0.0) and np.sum(c[:, j] == 0.0) >= 2 and np.any(c[:, j] > 0.0)
    ]


def violation_amounts_note(c: Any) -> str | None:
    """The warning for constraints told as violation amounts (:func:`violation_amounts`), or None."""
    c = np.asarray(c, dtype=float)
    flat = violation_amounts(c) if len(c) else []
    if not flat:
        return None
    which = "; ".join(
        f"constraint {j} has only values >= 0 ({int(np.sum(c[:, j] == 0.0))} of the {len(c)} results "
        "exactly 0)"
        for j in flat
    )
    return (
        f"{which}, as a violation amount max(g, 0) has: flat wherever the constraint holds, so the models "
        "cannot see the boundary from the feasible side. Tell the signed value g (negative inside) if the "
        "system has it."
    )


def _spans_decades(y: np.ndarray, minimize: bool) -> bool:
    """Whether a minimized objective's observed values are all finite and positive, at least three, and
    span more than :data:`LOG_OBJECTIVE_SPAN` (the ``"auto-log"`` choice's test)."""
    return bool(
        minimize
        and y.size >= 3
        and np.all(np.isfinite(y))
        and np.all(y > 0.0)
        and y.max() / y.min() > LOG_OBJECTIVE_SPAN
    )


def _robust(choice: str, heavy: bool) -> bool:
    """Whether a target gets the robust map, by its :data:`TRANSFORM_TARGETS` choice."""
    return choice == "robust" or (choice == "auto" and heavy)


class OutcomeUnits:
    r"""The map from observed outcomes to the policies' units, fitted on the complete observations.

    ``y`` (n,), ``c`` (n, m) raw observations; ``minimize``; ``transform`` ("auto", "rms", "bilog",
    "bilog-constraints": the constraints as "bilog", the objective as "auto"; "auto-no-bounds": "auto"
    without ``bound``; "auto-bounds": "auto" with ``bound`` wherever values crowd, near 0 too);
    ``reference``: a boolean mask of the observations the robust scales come from (the initial design;
    all observations when fewer than 3 are marked). Per target:

    - objective, ``standardize`` (``rms``, and ``auto`` unless heavy-tailed):
      :math:`\tilde f = (s\,y - \bar u)/\mathrm{sd}(u)`, :math:`u = s\,y`, ``s = -1`` when minimizing;
    - objective, ``rank`` (``bilog``, and ``auto`` when heavy-tailed): the normal score of its rank,
      :math:`\tilde f = \Phi^{-1}((r - \tfrac12)/n)` (average ranks for ties);
    - constraint j, ``rms``: :math:`\tilde g_j = c_j / \mathrm{rms}_j`;
    - constraint j, ``bilog``: :math:`\tilde g_j = B(c_j / s_j)` with :math:`s_j` the
      :func:`robust_scale` of the reference values, and ``bilog2``
      :math:`\tilde g_j = B(B(c_j / s_j))` when :math:`\max|c_j| / s_j > ` ``HEAVY_RATIO``;
    - constraint j, ``bound`` (``auto`` and ``auto-bounds``, before their other rules):
      :math:`\tilde g_j = L_{b_j}(c_j)` (:func:`bound_log`) when :func:`crowded_bound` finds a bound
      :math:`b_j` for the observations (reference: the initial design; ``auto``: a bound whose side
      lies more than ``CONSTRAINT_LOG_RATIO`` scales from 0).

    ``auto`` treats a target as heavy-tailed when its plain moments overflow, or when its largest
    magnitude exceeds a number of robust scales of the reference values: for a constraint,
    :math:`\max|c_j| / s_j >` ``CONSTRAINT_LOG_RATIO`` (30); for the objective,
    :math:`\max|u - \mathrm{median}|` over the reference's robust scale of :math:`|u - \mathrm{median}|`
    beyond ``HEAVY_RATIO`` (1e3). Every map keeps the order, and the constraints' keep 0 and the sign;
    :meth:`c_to_raw` is the exact inverse.
    """

    def __init__(
        self,
        y: Any,
        c: Any,
        *,
        minimize: bool,
        m: int,
        transform: str = "auto",
        reference: Any = None,
    ) -> None:
        if transform not in OUTCOME_TRANSFORMS:
            raise InvalidInputError(
                f"outcome_transform must be one of {', '.join(map(repr, OUTCOME_TRANSFORMS))}, got {transform!r}."
            )
        y = np.asarray(y, dtype=float).reshape(-1)
        n = y.size
        c = np.asarray(c, dtype=float).reshape(n, m) if n else np.zeros((0, m))
        self.m, self.minimize, self.transform = m, bool(minimize), transform
        ref = np.ones(n, dtype=bool) if reference is None else np.asarray(reference, dtype=bool).reshape(-1)
        if ref.shape != (n,) or ref.sum() < 3:
            ref = np.ones(n, dtype=bool)
        u = -y if minimize else y
        # objective
        self.y_mean, self.y_sd, finite = _standardization(u)
        center = float(np.median(u[ref])) if n else 0.0
        dev = np.abs(u - center)
        scale = robust_scale(dev[ref]) or robust_scale(dev)
        with np.errstate(over="ignore"):
            self.y_ratio = float(dev.max() / scale) if scale > 0 else 0.0
        heavy = not finite or self.y_ratio > HEAVY_RATIO
        y_choice, c_choice = TRANSFORM_TARGETS[transform]
        self.y_kind = "rank" if _robust(y_choice.removesuffix("-log"), heavy) else "standardize"
        if y_choice == "auto-log" and _spans_decades(y, minimize):
            lu = -np.log(y)
            self.y_mean, self.y_sd = float(lu.mean()), float(lu.std()) or 1.0
            self.y_kind = "log"
        self._u_sorted = np.sort(u)
        # constraints
        with np.errstate(over="ignore", under="ignore"):
            rms = np.sqrt(np.mean(c**2, axis=0)) if n else np.ones(m)
        big = np.max(np.abs(c), axis=0) if n else np.zeros(m)
        plain = np.isfinite(rms) & ~((rms == 0) & (big > 0))  # the moments neither overflowed nor underflowed
        for j in np.flatnonzero(~plain):  # scale before squaring
            rms[j] = big[j] * np.sqrt(np.mean((c[:, j] / big[j]) ** 2))
        self.c_rms = np.where(rms > 0, rms, 1.0)
        self.c_scale = np.ones(m)
        self.c_ratio = np.zeros(m)
        self.c_kind: list[str] = []
        self.c_bound = np.full(m, np.nan)
        for j in range(m):
            if c_choice in ("bounds", "far-bounds"):
                b = crowded_bound(c[:, j], ref, CONSTRAINT_LOG_RATIO if c_choice == "far-bounds" else None)
                if b is not None:
                    self.c_bound[j] = b
                    self.c_kind.append("bound")
                    continue
            sj = robust_scale(c[ref, j]) or robust_scale(c[:, j])
            with np.errstate(over="ignore"):
                self.c_ratio[j] = big[j] / sj if sj > 0 else 0.0
            self.c_scale[j] = sj if sj > 0 else 1.0
            heavy = not plain[j] or self.c_ratio[j] > CONSTRAINT_LOG_RATIO
            if _robust("auto" if c_choice.endswith("bounds") else c_choice, heavy):
                self.c_kind.append("bilog2" if self.c_ratio[j] > HEAVY_RATIO else "bilog")
            else:
                self.c_kind.append("rms")
        self._log = np.array([k.startswith("bilog") for k in self.c_kind])
        self._bounded = np.isfinite(self.c_bound)
        self._depth = np.array([2 if k == "bilog2" else 1 for k in self.c_kind])

    # ----------------------------------------------------------------------------------- maps
    def y(self, y: Any) -> np.ndarray:
        """Objective values (raw, any shape) in policy units."""
        u = np.asarray(y, dtype=float)
        if self.y_kind == "log":
            return (-np.log(u) - self.y_mean) / self.y_sd
        u = -u if self.minimize else u
        if self.y_kind == "standardize":
            return (u - self.y_mean) / self.y_sd
        from scipy.special import ndtri

        n = self._u_sorted.size
        lo = np.searchsorted(self._u_sorted, u, side="left")
        hi = np.searchsorted(self._u_sorted, u, side="right")
        p = (lo + (hi - lo + 1) / 2.0 - 0.5) / max(n, 1)
        return ndtri(np.clip(p, 0.5 / max(n, 1), 1.0 - 0.5 / max(n, 1)))

    def c(self, c: Any) -> np.ndarray:
        """Constraint values (raw, last axis m) in policy units."""
        c = np.asarray(c, dtype=float)
        if not (self._log.any() or self._bounded.any()):
            return c / self.c_rms
        out = c / np.where(self._log | self._bounded, 1.0, self.c_rms)
        for j in np.flatnonzero(self._log):
            out[..., j] = bilog(c[..., j], self.c_scale[j], int(self._depth[j]))
        for j in np.flatnonzero(self._bounded):
            out[..., j] = bound_log(c[..., j], float(self.c_bound[j]))
        return out

    def c_to_raw(self, v: Any):
        """Constraint values in policy units (numpy array or torch tensor, last axis m) in the constraints'
        own units: the exact inverse of :meth:`c` (monotone, 0 -> 0, same type as ``v``; a value whose
        raw value would lie past the float range maps to +-DBL_MAX)."""
        if _is_torch(v):
            torch = _torch()
            lin = (v * torch.as_tensor(self.c_rms, dtype=v.dtype)).clamp(-_MAX, _MAX)
            if self._log.any():
                lin = torch.where(
                    torch.as_tensor(self._log), bilog_inverse(v, self.c_scale, self._depth), lin
                )
            if self._bounded.any():
                b = torch.as_tensor(np.where(self._bounded, self.c_bound, 1.0), dtype=v.dtype)
                mask = torch.as_tensor(self._bounded)
                inner = torch.where(mask, v, torch.zeros_like(v))  # the branch not taken stays finite
                lin = torch.where(mask, bound_log_inverse(inner, b, torch).clamp(-_MAX, _MAX), lin)
            return lin
        v = np.asarray(v, dtype=float)
        with np.errstate(over="ignore"):
            lin = np.clip(v * self.c_rms, -_MAX, _MAX)
        if self._log.any():
            lin = np.where(self._log, bilog_inverse(v, self.c_scale, self._depth), lin)
        if self._bounded.any():  # bound_log_inverse silences its own overflow to inf
            b = np.where(self._bounded, self.c_bound, 1.0)
            lin = np.where(self._bounded, np.clip(bound_log_inverse(v, b), -_MAX, _MAX), lin)
        return lin

    def describe(self) -> dict[str, Any]:
        """The maps in use: ``{"objective": kind, "constraints": [kind, ...]}`` (JSON-able)."""
        return {"objective": self.y_kind, "constraints": list(self.c_kind)}

    @property
    def scales(self) -> dict[str, Any]:
        """``{"y_mean", "y_sd", "c_rms"}``: the standardization's constants (what ``policy_units`` returns)."""
        return {"y_mean": self.y_mean, "y_sd": self.y_sd, "c_rms": self.c_rms}


def _build(X, Z, noise_floor: float | None = None):
    """A SingleTaskGP on standardized targets Z (n, k), no transforms (inputs already in [0, 1]^d).

    ``noise_floor``: the smallest noise variance (on the standardized targets) the fit may reach; None:
    BoTorch's default likelihood (LogNormal(-4, 1) prior, floor ``MIN_INFERRED_NOISE_LEVEL`` = 1e-4); a
    number: the same likelihood with that floor. BoTorch's input-data warnings about standardization
    and scaling are benign here (the targets are standardized once per fit, the fantasies of a
    conditioned copy are not, by construction) and are not passed on; every other warning is."""
    from botorch.exceptions.warnings import InputDataWarning
    from botorch.models import SingleTaskGP

    likelihood = None
    if noise_floor is not None:
        likelihood = _likelihood(Z.shape[-1], noise_floor)
    with warnings.catch_warnings():
        for what in ("standardized", "scaled", "contained"):
            warnings.filterwarnings("ignore", message=f".*is not {what}.*", category=InputDataWarning)
        return SingleTaskGP(X, Z, likelihood=likelihood, outcome_transform=None)


def _likelihood(k: int, floor: float):
    """BoTorch's default Gaussian likelihood (``get_gaussian_likelihood_with_lognormal_prior``) for k
    outputs, with noise floor ``floor`` instead of 1e-4."""
    torch = _torch()
    from gpytorch.constraints import GreaterThan
    from gpytorch.likelihoods import GaussianLikelihood
    from gpytorch.priors import LogNormalPrior

    prior = LogNormalPrior(loc=-4.0, scale=1.0)
    return GaussianLikelihood(
        noise_prior=prior,
        batch_shape=torch.Size([k]) if k > 1 else torch.Size(),
        noise_constraint=GreaterThan(floor, transform=None, initial_value=prior.mode),
    )


def _hyper_of(model) -> dict[str, np.ndarray]:
    """The raw (unconstrained) hyperparameters: noise, constant mean, lengthscales."""
    return {k: v.detach().cpu().numpy().copy() for k, v in model.named_parameters()}


def _load_hyper(model, hyper: dict[str, np.ndarray]) -> bool:
    """Load stored raw hyperparameters if every name and shape matches; return whether it did."""
    torch = _torch()
    own = dict(model.named_parameters())
    if (
        not hyper
        or set(hyper) != set(own)
        or any(tuple(own[k].shape) != np.shape(v) for k, v in hyper.items())
    ):
        return False
    with torch.no_grad():
        for k, v in hyper.items():
            own[k].copy_(torch.as_tensor(np.asarray(v), dtype=own[k].dtype))
    return True


def _fit_one(model, tolerance: float | None = None) -> str | None:
    """Maximize the marginal likelihood of a single-output model; None if it worked, else why it failed.

    ``tolerance``: L-BFGS-B's ``ftol`` (stop when an iteration improves the marginal log likelihood per
    data point by less than this, relative); None: SciPy's default (2.2e-9).

    A fit fails when BoTorch's ``fit_gpytorch_mll`` gives up (``ModelFittingError`` once every retry
    from prior samples failed, or another error of the optimizer) or ends with non-finite
    hyperparameters. Its warnings (an attempt that did not converge and was retried, jitter added to a
    Cholesky factor) are not suppressed: :class:`Models` records them (:func:`capture_warnings`)."""
    torch = _torch()
    from botorch.exceptions import ModelFittingError
    from botorch.fit import fit_gpytorch_mll
    from gpytorch.mlls import ExactMarginalLogLikelihood

    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    try:
        kwargs = {} if tolerance is None else {"optimizer_kwargs": {"options": {"ftol": tolerance}}}
        fit_gpytorch_mll(mll, **kwargs)
    except (ModelFittingError, RuntimeError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    with torch.no_grad():
        if not all(bool(torch.all(torch.isfinite(p))) for p in model.parameters()):
            return "the fit ended with non-finite hyperparameters"
    return None


def _fit_outputs(
    X,
    Z,
    hyper: dict[str, np.ndarray] | None,
    noise_floor: float | None = None,
    names: list[str] | None = None,
    tolerance: float | None = None,
) -> tuple[dict[str, np.ndarray], list[str]]:
    """Fit one single-output GP per column of Z (warm-started from ``hyper``, the batched model's
    parameters) and stack their hyperparameters into the batched shapes. Separate fits are several
    times faster than fitting the batched model's joint likelihood, and give the same optimum (the
    outputs' likelihoods are independent). Returns the hyperparameters and the failures (one message
    per target whose fit failed; its previous hyperparameters are kept when there were any)."""
    k = Z.shape[1]
    out: dict[str, list[np.ndarray]] = {}
    failures = []
    for j in range(k):
        mj = _build(X, Z[:, j : j + 1], noise_floor)
        if hyper:
            _load_hyper(mj, hyper if k == 1 else {n: np.asarray(v)[j] for n, v in hyper.items()})
        why = _fit_one(mj, tolerance)
        if why is not None:
            failures.append(f"fit of {names[j] if names else j} failed: {why}")
            if hyper:  # keep the previous values rather than a failed fit
                _load_hyper(mj, hyper if k == 1 else {n: np.asarray(v)[j] for n, v in hyper.items()})
        for n, v in _hyper_of(mj).items():
            out.setdefault(n, []).append(v)
    return {n: (v[0] if k == 1 else np.stack(v)) for n, v in out.items()}, failures


def _mean_sd(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and (ddof=1) standard deviations of V (n, k) (sd 1 for n = 1), without overflow: the
    plain formulas where they are finite (bit for bit what they always gave), else computed on V
    divided by its largest magnitude and scaled back (values beyond 1e154 square to inf)."""
    with np.errstate(over="ignore", invalid="ignore"):
        mean = V.mean(axis=0)
        sd = V.std(axis=0, ddof=1) if V.shape[0] > 1 else np.ones(V.shape[1])
    bad = ~(np.isfinite(mean) & np.isfinite(sd))
    if np.any(bad):
        a = np.max(np.abs(V[:, bad]), axis=0)
        W = V[:, bad] / a
        mean[bad] = a * W.mean(axis=0)
        sd[bad] = a * (W.std(axis=0, ddof=1) if V.shape[0] > 1 else 1.0 / a)
    return mean, sd


class _View:
    """What a beta schedule (:mod:`ckb.exploration.beta`) reads from a GP: ``info_gain`` and ``noise``."""

    def __init__(self, info_gain: float, noise: float) -> None:
        self.info_gain = info_gain
        self.noise = noise


class Models:
    """Independent GPs for named targets over the same points; posteriors in the targets' units.

    ``X``: (n, d) points in the unit cube; ``targets``: name -> (n,) values; ``hyper``: stored raw
    hyperparameters to reuse (warm start when ``fit``); ``fit``: maximize the marginal likelihood now;
    ``noise_floor``: the smallest noise variance on the standardized targets (None: BoTorch's 1e-4);
    ``fit_tolerance``: the fits' relative tolerance (:func:`_fit_one`; None: SciPy's default).

    After construction: ``fit_ok`` (False if some target's fit failed), ``failures`` (why, one message
    per failed target) and ``warnings`` (:func:`capture_warnings` records of building and fitting).
    """

    def __init__(
        self,
        X: np.ndarray,
        targets: dict[str, np.ndarray],
        hyper: dict[str, np.ndarray] | None = None,
        fit: bool = True,
        *,
        noise_floor: float | None = None,
        fit_tolerance: float | None = None,
        _model: Any = None,
        _shift: np.ndarray | None = None,
        _scale: np.ndarray | None = None,
    ) -> None:
        torch = _torch()
        self.names = list(targets)
        if not self.names:
            raise InvalidInputError("Models needs at least one target.")
        V = np.column_stack([np.asarray(targets[k], dtype=float) for k in self.names])
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or V.shape[0] != X.shape[0] or X.shape[0] < 1:
            raise InvalidInputError(
                f"Models needs n >= 1 points and n targets, got X {X.shape}, targets {V.shape}."
            )
        if not np.all(np.isfinite(V)):
            raise InvalidInputError("Models needs finite target values (policy units are always finite).")
        self.X = X
        self.V = V
        self.noise_floor = noise_floor
        self.fit_ok = True
        self.failures: list[str] = []
        self.warnings: list[str] = []
        if _model is not None:  # a conditioned copy (see condition)
            self.shift, self.scale, self.model = _shift, _scale, _model
            return
        self.shift, sd = _mean_sd(V)
        self.scale = np.where(sd > 1e-12 * np.maximum(1.0, np.abs(self.shift)), sd, 1.0)
        Z = (V - self.shift) / self.scale
        Xt, Zt = torch.as_tensor(X), torch.as_tensor(Z)
        with capture_warnings() as self.warnings:
            self.model = _build(Xt, Zt, noise_floor)
            ok = _load_hyper(self.model, hyper or {})
            if fit:
                fitted, self.failures = _fit_outputs(
                    Xt, Zt, hyper if ok else None, noise_floor, self.names, fit_tolerance
                )
                self.fit_ok = not self.failures
                _load_hyper(self.model, fitted)
        self.model.eval()

    # ------------------------------------------------------------------------------ properties
    @property
    def hyper(self) -> dict[str, np.ndarray]:
        """The raw hyperparameters (exact numpy copies), to store in the policy state."""
        return _hyper_of(self.model)

    def lengthscales(self) -> np.ndarray:
        """The kernels' lengthscales in the unit cube, (k, d) (one row per target)."""
        torch = _torch()
        cov = self.model.covar_module
        cov = getattr(cov, "base_kernel", cov)
        d = self.X.shape[1]
        with torch.no_grad():
            return cov.lengthscale.detach().reshape(-1, d).expand(self.k, d).numpy().copy()

    @property
    def k(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        return self.names.index(name)

    def view(self, name: str) -> _View:
        """``info_gain`` (½ log det(I + K/σ²_n) on the training points) and ``noise`` σ²_n of a target,
        for the ``theory`` and ``log`` beta schedules."""
        torch = _torch()
        j = self.index(name)
        m = self.model
        with torch.no_grad():
            Xt = torch.as_tensor(self.X)
            K = m.covar_module(Xt).to_dense()
            noise = m.likelihood.noise.detach().reshape(-1)
            if K.dim() == 3:
                K = K[j]
            nj = float(noise[j] if noise.numel() > 1 else noise[0])
            M = torch.eye(K.shape[-1], dtype=K.dtype) + K / nj
            info = 0.5 * float(torch.linalg.slogdet(M)[1])
        return _View(info, nj)

    # ------------------------------------------------------------------------------- posterior
    def mean_std(self, X, *, zero_prior_mean: bool = False) -> tuple[Any, Any]:
        r"""Posterior mean and standard deviation at ``X`` (torch, (..., d)) -> two (..., k) tensors,
        differentiable in ``X``.

        ``zero_prior_mean``: the posterior mean under a prior mean of 0 in the targets' units instead of
        the fitted constant (same kernel hyperparameters and standard deviation):
        :math:`\mu_0(x) = \mu(x) + (c_0 - c)(1 - k(x, X)(K + \sigma^2 I)^{-1}\mathbf{1})`, with
        :math:`c_0 = -a/b` the standardized 0. Far from the data it reverts to 0 instead of the data's
        average, so a constraint that was mostly satisfied where it was evaluated is not presumed
        satisfied far away. Default model only (any other kernel: the fitted mean).

        For the default model (RBF kernel, constant mean, Gaussian noise) the exact posterior is computed
        here from one Cholesky factor per target, cached: the same numbers as GPyTorch's ``posterior``
        (tested to 1e-10) at a fraction of its per-call overhead, which dominates the acquisition
        maximization (hundreds of calls per ask). Any other kernel goes through ``posterior``.
        """
        torch = _torch()
        fast = self._fast if hasattr(self, "_fast") else self._prepare()
        if fast is None:
            post = self.model.posterior(X)
            mu, var = post.mean, post.variance
            if self.k == 1 and mu.shape[-1] != 1:  # defensive: single-output shapes
                mu, var = mu.unsqueeze(-1), var.unsqueeze(-1)
        else:
            Xt, ls, outscale, const, L, alpha, ones = fast
            shape = X.shape[:-1]
            Xf = X.reshape(-1, X.shape[-1])
            diff = (Xf[None, :, None, :] - Xt[None, None, :, :]) / ls[:, None, None, :]  # (k, b, n, d)
            Ks = outscale[:, None, None] * torch.exp(-0.5 * (diff**2).sum(-1))  # (k, b, n)
            mu = const[:, None] + (Ks @ alpha).squeeze(-1)  # (k, b)
            if zero_prior_mean:
                c0 = torch.as_tensor(-self.shift / self.scale, dtype=mu.dtype)
                mu = mu + (c0 - const)[:, None] * (1.0 - (Ks @ ones).squeeze(-1))
            v = torch.linalg.solve_triangular(L, Ks.transpose(-1, -2), upper=False)  # (k, n, b)
            var = outscale[:, None] - (v**2).sum(-2)
            mu, var = mu.T.reshape(*shape, self.k), var.T.reshape(*shape, self.k)
        shift = torch.as_tensor(self.shift, dtype=mu.dtype)
        scale = torch.as_tensor(self.scale, dtype=mu.dtype)
        return shift + scale * mu, scale * var.clamp_min(1e-18).sqrt()

    def _prepare(self):
        """Cache (train X, lengthscales, outputscales, means, Cholesky factors, weights) for the default
        RBF model; None for any other model."""
        torch = _torch()
        from gpytorch.kernels import RBFKernel, ScaleKernel

        m, k = self.model, self.k
        cov = m.covar_module
        with torch.no_grad():
            outscale = torch.ones(k, dtype=torch.float64)
            if isinstance(cov, ScaleKernel):
                outscale = cov.outputscale.detach().reshape(-1).expand(k).clone()
                cov = cov.base_kernel
            if type(cov) is not RBFKernel or getattr(cov, "active_dims", None) is not None:
                self._fast = None
                return None
            Xt = torch.as_tensor(self.X)
            d = Xt.shape[-1]
            ls = cov.lengthscale.detach().reshape(-1, d).expand(k, d).clone()
            noise = m.likelihood.noise.detach().reshape(-1).expand(k).clone()
            const = m.mean_module.constant.detach().reshape(-1).expand(k).clone()
            Z = torch.as_tensor((self.V - self.shift) / self.scale).T  # (k, n)
            diff = (Xt[None, :, None, :] - Xt[None, None, :, :]) / ls[:, None, None, :]
            K = outscale[:, None, None] * torch.exp(-0.5 * (diff**2).sum(-1))
            K = K + noise[:, None, None] * torch.eye(len(Xt), dtype=K.dtype)
            L, info = torch.linalg.cholesky_ex(K)
            jitter = 1e-9
            while bool(info.any()) and jitter < 1e-3:  # as psd_safe_cholesky: add jitter until it factors
                L, info = torch.linalg.cholesky_ex(K + jitter * torch.eye(len(Xt), dtype=K.dtype))
                jitter *= 10
            if bool(info.any()):
                self._fast = None
                return None
            alpha = torch.cholesky_solve((Z - const[:, None]).unsqueeze(-1), L)  # (k, n, 1)
            ones = torch.cholesky_solve(torch.ones_like(Z).unsqueeze(-1), L)  # (K + s^2 I)^-1 1
        self._fast = (Xt, ls, outscale, const, L, alpha, ones)
        return self._fast

    def sample_path(self) -> Callable:
        """One posterior sample path of every target (pathwise / Matheron sampling with random Fourier
        features; uses torch's random generator): a function ``X (..., d) -> (..., k)``, differentiable."""
        torch = _torch()
        from botorch.sampling.pathwise import draw_matheron_paths

        path = draw_matheron_paths(self.model, torch.Size([]))
        shift = torch.as_tensor(self.shift)
        scale = torch.as_tensor(self.scale)
        k = self.k

        def f(X):
            out = path(X)  # (k, ...) for a batched model, (...) for one output
            if k > 1:
                out = out.movedim(0, -1)
            else:
                out = out.unsqueeze(-1)
            return shift + scale * out

        return f

    # ---------------------------------------------------------------------------- conditioning
    def condition(self, Xp: np.ndarray) -> Models:
        """A copy conditioned on extra points ``Xp`` (p, d) with fantasy values at the posterior mean."""
        torch = _torch()
        Xp = np.asarray(Xp, dtype=float).reshape(-1, self.X.shape[1])
        if len(Xp) == 0:
            return self
        with torch.no_grad():
            mu, _ = self.mean_std(torch.as_tensor(Xp))
        Vp = mu.numpy().reshape(len(Xp), self.k)
        X = np.vstack([self.X, Xp])
        V = np.vstack([self.V, Vp])
        Z = (V - self.shift) / self.scale
        with capture_warnings() as caught:
            model = _build(torch.as_tensor(X), torch.as_tensor(Z), self.noise_floor)
        _load_hyper(model, self.hyper)
        model.eval()
        out = Models(
            X,
            {n: V[:, j] for j, n in enumerate(self.names)},
            noise_floor=self.noise_floor,
            _model=model,
            _shift=self.shift,
            _scale=self.scale,
        )
        out.warnings = caught
        return out
