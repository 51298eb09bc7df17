r"""Engineering design problems for the constrained benchmark: welded beam, tension spring, speed reducer.

Three classic problems of the constrained-optimization literature, added to
:data:`~ckb.problems.constrained_benchmarks.CONSTRAINED_BENCHMARKS` with the same facts and conventions as
the toy problems there (a continuous box, :math:`g_j(x) \le 0` feasible, exact observations by default,
a known optimum :math:`(x^*, f^*)`). Unlike those, each has :math:`m \ge 4` constraints of disparate scales
(psi next to inches next to ratios), kept in their literature form and units, and a small feasible share
of its usual box (Monte Carlo with :math:`10^6` uniform points, seed 0, :math:`\pm` one standard error).
All three are minimized; every design variable is treated as continuous. ``docs/engineering-problems.md``
records how each fact was checked (``benchmarks/verify_engineering_optima.py``, run by hand).

``welded-beam`` — cost of a welded cantilever (Ragsdell & Phillips, *Optimal design of a class of welded
structures using geometric programming*, ASME J. Eng. Ind. 98(3), 1976), in the seven-constraint form and
box of Coello Coello, *Use of a self-adaptive penalty approach for engineering optimization problems*,
Computers in Industry 41(2), 2000. With :math:`x = (h, l, t, b)` (weld thickness, weld length, bar height,
bar thickness; inches), :math:`P = 6000` lb, :math:`L = 14` in, :math:`E = 30 \cdot 10^6` psi,
:math:`G = 12 \cdot 10^6` psi:

.. math::

    \min_{x \in [0.1, 2] \times [0.1, 10]^2 \times [0.1, 2]} f(x) = 1.10471\, h^2 l + 0.04811\, t b\, (14 + l)

    g_1 = \tau(x) - 13600,\quad g_2 = \sigma(x) - 30000,\quad g_3 = h - b,\quad
    g_4 = 0.10471\, h^2 + 0.04811\, t b\, (14 + l) - 5,

    g_5 = 0.125 - h,\quad g_6 = \delta(x) - 0.25,\quad g_7 = P - P_c(x),

    \tau = \sqrt{\tau'^2 + 2 \tau' \tau'' \tfrac{l}{2R} + \tau''^2},\quad
    \tau' = \frac{P}{\sqrt2\, h l},\quad \tau'' = \frac{M R}{J},\quad M = P\,(L + \tfrac l2),\quad
    R = \sqrt{\tfrac{l^2}{4} + \bigl(\tfrac{h + t}{2}\bigr)^2},

    J = 2 \Bigl\{\sqrt2\, h l \Bigl[\frac{l^2}{12} + \Bigl(\frac{h + t}{2}\Bigr)^2\Bigr]\Bigr\},\quad
    \sigma = \frac{6 P L}{b t^2},\quad \delta = \frac{4 P L^3}{E t^3 b},\quad
    P_c = \frac{4.013\, E \sqrt{t^2 b^6 / 36}}{L^2} \Bigl(1 - \frac{t}{2L} \sqrt{\frac{E}{4G}}\Bigr).

d = 4, m = 7, feasible share 2.617% :math:`\pm` 0.016%. Optimum :math:`f^* = 1.7248523086` at
:math:`x^* = (0.2057296, 3.4704887, 9.0366239, 0.2057296)`, with :math:`g_1, g_2, g_3, g_7` active. The
best-known value 1.724852 quoted in the literature, at the rounded point (0.205730, 3.470489, 9.036624,
0.205730), agrees (:math:`3 \cdot 10^{-7}` below ours; that rounded point is feasible, with f = 1.7248557).
BoTorch's ``WeldedBeamSO`` (BoTorch 0.18) is a different problem: its buckling load has ``* 6 / L**2``
where :math:`\sqrt{t^2 b^6 / 36} = t b^3 / 6` needs ``/ 6``, so its :math:`P_c` is 36 times too large and
the buckling constraint nearly vanishes; it also drops :math:`g_5` (making :math:`h \ge 0.125` a bound)
and uses the box :math:`[0.125, 10] \times [0.1, 10]^3`. Its ``optimal_value`` 1.728226 is the GA result
of Coello Coello & Mezura-Montes (2002) (feasible here, 0.196% above :math:`f^*`), the optimum of neither
definition: SLSQP on BoTorch's own definition reaches 1.5870775 at (0.168, 4.067, 10, 0.168), 8% below
:math:`f^*`, a point that violates the true buckling constraint by 2516 lb.

``tension-spring`` — weight of a tension/compression coil spring (Arora, *Introduction to Optimum Design*,
McGraw-Hill, 1989; Belegundu, *A study of mathematical programming methods for structural optimization*,
PhD thesis, University of Iowa, 1982), in the form and box of Coello Coello (2000). With
:math:`x = (d, D, N)` (wire diameter, mean coil diameter, number of active coils):

.. math::

    \min_{x \in [0.05, 2] \times [0.25, 1.3] \times [2, 15]} f(x) = (N + 2)\, D\, d^2

    g_1 = 1 - \frac{D^3 N}{71785\, d^4},\quad
    g_2 = \frac{4 D^2 - d D}{12566\, (D d^3 - d^4)} + \frac{1}{5108\, d^2} - 1,\quad
    g_3 = 1 - \frac{140.45\, d}{D^2 N},\quad g_4 = \frac{D + d}{1.5} - 1 .

d = 3, m = 4, feasible share 0.750% :math:`\pm` 0.009%. :math:`g_2` has a pole on the plane :math:`d = D`,
inside the box (:math:`g_2 = +\infty` on it, :math:`g_2 \to -\infty` as :math:`d \downarrow D`, where
:math:`g_1 > 0` keeps the points infeasible): :math:`|g_2|` is unbounded on the box, so this problem
publishes no hint ``G``. Optimum :math:`f^* = 0.0126652328` at :math:`x^* = (0.0516891, 0.3567176,
11.28897)` (:math:`g_1, g_2` active; the valley is flat: runs agree on :math:`f^*` to :math:`7 \cdot 10^{-12}`
but on :math:`x^*` only to about six digits). The point often quoted with 0.012665, (0.051690, 0.356750,
11.287126), violates :math:`g_2` by :math:`2.2 \cdot 10^{-5}` (its f is :math:`1.5 \cdot 10^{-7}` below
:math:`f^*`). BoTorch's ``TensionCompressionString`` agrees with these formulas (it clamps each
:math:`g_j` at 100, which changes values, not feasibility) on another box, :math:`[0.01, 1]^2 \times
[0.01, 20]`, where the optimum is the same; its ``optimal_value`` 0.012681 (Coello Coello & Mezura-Montes
2002) is feasible and 0.12% above :math:`f^*`.

``speed-reducer`` — weight of a speed reducer (Golinski, *Optimal synthesis problems solved by means of
nonlinear programming and random methods*, J. Mechanisms 5(3), 1970), in the constraint form of
Lemonge et al., *Constrained optimization problems in mechanical engineering design using a real-coded
steady-state genetic algorithm*, Mecánica Computacional 29, 2010, which BoTorch's ``SpeedReducer``
implements (ours agrees with it term by term): shaft stresses against 1100 and 850, :math:`x_2 x_3`
against 40, :math:`x_1 / x_2` against 5 and 12, the other constraints as ratios minus one. With
:math:`x = (b, m, z, l_1, l_2, d_1, d_2)` (face width, tooth module, pinion teeth — an integer in the
original, continuous here —, shaft lengths and shaft diameters):

.. math::

    \min f(x) = 0.7854\, x_1 x_2^2 (3.3333\, x_3^2 + 14.9334\, x_3 - 43.0934)
      - 1.508\, x_1 (x_6^2 + x_7^2) + 7.4777\, (x_6^3 + x_7^3) + 0.7854\, (x_4 x_6^2 + x_5 x_7^2)

    g_1 = \frac{27}{x_1 x_2^2 x_3} - 1,\quad g_2 = \frac{397.5}{x_1 x_2^2 x_3^2} - 1,\quad
    g_3 = \frac{1.93\, x_4^3}{x_2 x_3 x_6^4} - 1,\quad g_4 = \frac{1.93\, x_5^3}{x_2 x_3 x_7^4} - 1,

    g_5 = \frac{\sqrt{(745\, x_4 / (x_2 x_3))^2 + 16.9 \cdot 10^6}}{0.1\, x_6^3} - 1100,\quad
    g_6 = \frac{\sqrt{(745\, x_5 / (x_2 x_3))^2 + 157.5 \cdot 10^6}}{0.1\, x_7^3} - 850,

    g_7 = x_2 x_3 - 40,\quad g_8 = 5 - \frac{x_1}{x_2},\quad g_9 = \frac{x_1}{x_2} - 12,\quad
    g_{10} = \frac{1.5\, x_6 + 1.9}{x_4} - 1,\quad g_{11} = \frac{1.1\, x_7 + 1.9}{x_5} - 1,

on the box :math:`[2.6, 3.6] \times [0.7, 0.8] \times [17, 28] \times [7.3, 8.3] \times [7.8, 8.3] \times
[2.9, 3.9] \times [5, 5.5]`. d = 7, m = 11, feasible share 0.183% :math:`\pm` 0.004%. Optimum
:math:`f^* = 2996.348164969` at :math:`x^* = (3.5, 0.7, 17, 7.3, 7.8, 3.3502147, 5.2866832)` (:math:`g_5,
g_6, g_8` and the lower bounds of :math:`x_2, \dots, x_5` active): the best-known 2996.348165 and
BoTorch's 2996.3482 agree; the point as usually printed (six decimals) violates :math:`g_6` by
:math:`1.1 \cdot 10^{-4}`. The value 2994.471066,
also widely quoted for this problem, is the optimum with Golinski's bound :math:`x_5 \ge 7.3`: its
:math:`x_5 = 7.71532` lies outside the box :math:`x_5 \ge 7.8` that the papers quoting it state.

The pressure vessel problem (Kannan & Kramer 1994) was considered and left out: 40% of its usual box
:math:`[0.0625, 6.1875]^2 \times [10, 200]^2` is feasible (17% of BoTorch's box, 76% of
:math:`[0, 99]^2 \times [10, 200]^2`), far above the benchmark's 5%.

Benchmark facts
---------------
- *Typical magnitude* :math:`s_j` of each constraint, the scale of the benchmark's scaled violation
  :math:`\sum_t [g_j(x_t)]^+ / s_j`: the **median of** :math:`|g_j|` over :math:`2^{16}` scrambled Sobol
  points of the box (``scipy.stats.qmc.Sobol(d, rng=np.random.default_rng(0))``), to three significant
  digits; :func:`constraint_magnitudes` recomputes it. The toy problems use the standard deviation of
  :math:`g_j` instead, which is useless here: infinite for the spring's :math:`g_2` (the pole) and, for
  the welded beam, set by the box's corners (the standard deviation of :math:`g_2 = \sigma - 30000` is
  about :math:`6.5 \cdot 10^6` psi where the median of :math:`|g_2|` is :math:`2.35 \cdot 10^4`) and too
  heavy-tailed for Monte Carlo estimates of it to settle.
- *Gap normaliser*: :math:`|f^*|` for all three (:class:`EngineeringBenchmark`). The toy problems' rule
  (the range of :math:`f` on the box when :math:`|f^*| < 0.1\,\text{range}`) would pick the range for the
  welded beam (:math:`f^* = 1.72`, range 67.3) and the spring (:math:`f^* = 0.0127`, range 88.4), ranges
  set by corners far from any feasible point; with them a 2% gap would call every feasible spring design
  "solved". These objectives are costs bounded away from zero, compared in the literature relative to
  :math:`f^*`. ``f_range`` is still the box's range: each objective increases in every variable on its
  box, so the range is :math:`f(\text{upper}) - f(\text{lower})`.
- Hints: ``B`` :math:`= \max |f|`, ``G`` :math:`= \max_j \sup |g_j|` (absent for the spring), and
  ``slater_margin`` :math:`= \max_x \min_j (-g_j(x))` in the constraints' raw units (found by SLSQP; it
  is set by the smallest-scale constraints).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ckb._validation import MAX_NOISE_SCALE, check_finite_array, check_noise_scale, check_scalar
from ckb.contract.domain import BoxDomain
from ckb.errors import InvalidInputError
from ckb.kernels import Matern
from ckb.problems.constrained_benchmarks import ConstrainedBenchmark, add_benchmarks
from ckb.problems.noise import GaussianNoise
from ckb.problems.problem import Problem
from ckb.problems.registry import PROBLEMS

# ---------------------------------------------------------------------------------------------- helpers


def _points(X: Any, d: int, what: str) -> tuple[np.ndarray, bool]:
    """``X`` as a finite ``(k, d)`` array, and whether it was a single point of shape ``(d,)``."""
    X = check_finite_array(X, f"{what}'s points")
    single = X.ndim == 1
    X2 = X[None, :] if single else X
    if X2.ndim != 2 or X2.shape[1] != d:
        raise InvalidInputError(
            f"{what} takes a point of shape ({d},) or points of shape (k, {d}), got shape {X.shape}."
        )
    return X2, single


def _out(values: np.ndarray, single: bool):
    return (float(values[0]) if values.ndim == 1 else values[0]) if single else values


# ---------------------------------------------------------------------------------------------- welded beam

WB_P, WB_L, WB_E, WB_G = 6000.0, 14.0, 30e6, 12e6  # load (lb), overhang (in), moduli (psi)
WB_TAU_MAX, WB_SIGMA_MAX, WB_DELTA_MAX = 13600.0, 30000.0, 0.25  # psi, psi, in


def welded_beam_f(X: Any) -> np.ndarray | float:
    """Cost :math:`1.10471 h^2 l + 0.04811 t b (14 + l)` at ``(k, 4)`` points (or one ``(4,)`` point)."""
    X, single = _points(X, 4, "welded_beam_f")
    h, l, t, b = X.T
    return _out(1.10471 * h**2 * l + 0.04811 * t * b * (14.0 + l), single)


def welded_beam_g(X: Any) -> np.ndarray:
    """The 7 constraints (shear, bending, h <= b, cost, h >= 0.125, deflection, buckling): ``(k, 7)``."""
    X, single = _points(X, 4, "welded_beam_g")
    h, l, t, b = X.T
    P, L, E, G = WB_P, WB_L, WB_E, WB_G
    tau1 = P / (math.sqrt(2.0) * h * l)
    M = P * (L + l / 2.0)
    R = np.sqrt(l**2 / 4.0 + ((h + t) / 2.0) ** 2)
    J = 2.0 * (math.sqrt(2.0) * h * l * (l**2 / 12.0 + ((h + t) / 2.0) ** 2))
    tau2 = M * R / J
    tau = np.sqrt(tau1**2 + 2.0 * tau1 * tau2 * l / (2.0 * R) + tau2**2)
    sigma = 6.0 * P * L / (b * t**2)
    delta = 4.0 * P * L**3 / (E * t**3 * b)
    Pc = 4.013 * E * np.sqrt(t**2 * b**6 / 36.0) / L**2 * (1.0 - t / (2.0 * L) * math.sqrt(E / (4.0 * G)))
    g = np.stack(
        [
            tau - WB_TAU_MAX,
            sigma - WB_SIGMA_MAX,
            h - b,
            0.10471 * h**2 + 0.04811 * t * b * (14.0 + l) - 5.0,
            0.125 - h,
            delta - WB_DELTA_MAX,
            P - Pc,
        ],
        axis=1,
    )
    return _out(g, single)


# ---------------------------------------------------------------------------------------------- spring


def tension_spring_f(X: Any) -> np.ndarray | float:
    """Weight :math:`(N + 2) D d^2` at ``(k, 3)`` points ``(d, D, N)`` (or one ``(3,)`` point)."""
    X, single = _points(X, 3, "tension_spring_f")
    d, D, N = X.T
    return _out((N + 2.0) * D * d**2, single)


def tension_spring_g(X: Any) -> np.ndarray:
    """The 4 constraints (deflection, shear stress, surge frequency, outer diameter): ``(k, 4)``.

    :math:`g_2` is :math:`+\\infty` where ``d == D`` exactly (its pole; no warning is raised).
    """
    X, single = _points(X, 3, "tension_spring_g")
    d, D, N = X.T
    with np.errstate(divide="ignore"):
        g2 = (4.0 * D**2 - d * D) / (12566.0 * (D * d**3 - d**4)) + 1.0 / (5108.0 * d**2) - 1.0
    g = np.stack(
        [
            1.0 - D**3 * N / (71785.0 * d**4),
            g2,
            1.0 - 140.45 * d / (D**2 * N),
            (D + d) / 1.5 - 1.0,
        ],
        axis=1,
    )
    return _out(g, single)


# ---------------------------------------------------------------------------------------------- speed reducer


def speed_reducer_f(X: Any) -> np.ndarray | float:
    """Weight of the speed reducer at ``(k, 7)`` points (or one ``(7,)`` point)."""
    X, single = _points(X, 7, "speed_reducer_f")
    x1, x2, x3, x4, x5, x6, x7 = X.T
    f = (
        0.7854 * x1 * x2**2 * (3.3333 * x3**2 + 14.9334 * x3 - 43.0934)
        - 1.508 * x1 * (x6**2 + x7**2)
        + 7.4777 * (x6**3 + x7**3)
        + 0.7854 * (x4 * x6**2 + x5 * x7**2)
    )
    return _out(f, single)


def speed_reducer_g(X: Any) -> np.ndarray:
    """The 11 constraints (tooth bending and surface stress, shaft deflections and stresses, geometry)."""
    X, single = _points(X, 7, "speed_reducer_g")
    x1, x2, x3, x4, x5, x6, x7 = X.T
    g = np.stack(
        [
            27.0 / (x1 * x2**2 * x3) - 1.0,
            397.5 / (x1 * x2**2 * x3**2) - 1.0,
            1.93 * x4**3 / (x2 * x3 * x6**4) - 1.0,
            1.93 * x5**3 / (x2 * x3 * x7**4) - 1.0,
            np.sqrt((745.0 * x4 / (x2 * x3)) ** 2 + 16.9e6) / (0.1 * x6**3) - 1100.0,
            np.sqrt((745.0 * x5 / (x2 * x3)) ** 2 + 157.5e6) / (0.1 * x7**3) - 850.0,
            x2 * x3 - 40.0,
            5.0 - x1 / x2,
            x1 / x2 - 12.0,
            (1.5 * x6 + 1.9) / x4 - 1.0,
            (1.1 * x7 + 1.9) / x5 - 1.0,
        ],
        axis=1,
    )
    return _out(g, single)


# ---------------------------------------------------------------------------------------------- magnitudes


def constraint_magnitudes(g, lower, upper, n_log2: int = 16, seed: int = 0) -> np.ndarray:
    """The median of :math:`|g_j|` over :math:`2^{n\\_log2}` scrambled Sobol points of ``[lower, upper]``.

    The points are ``scipy.stats.qmc.Sobol(d, rng=np.random.default_rng(seed)).random_base2(n_log2)``
    scaled to the box; the stated magnitudes are this (defaults) to three significant digits.
    """
    from scipy.stats import qmc

    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    n_log2 = check_scalar(n_log2, "n_log2", low=1, high=24, integer=True)
    U = qmc.Sobol(lower.shape[0], scramble=True, rng=np.random.default_rng(seed)).random_base2(n_log2)
    return np.median(np.abs(np.asarray(g(qmc.scale(U, lower, upper)), dtype=float)), axis=0)


# ---------------------------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class EngineeringBenchmark(ConstrainedBenchmark):
    """A :class:`ConstrainedBenchmark` whose gap is always relative to :math:`|f^*|` and whose
    constraint magnitudes are median :math:`|g_j|` values (see the module docstring for both reasons)."""

    constraint_scale_rule: ClassVar[str] = (
        "median |g_j| over 2^16 scrambled Sobol points of the box (seed 0), 3 significant digits"
    )

    @property
    def gap_normaliser(self) -> str:
        return "|f*|"

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "constraint_scale_rule": self.constraint_scale_rule}


@dataclass(frozen=True)
class EngineeringSpec:
    """A problem's definition and checked facts besides those of its :class:`EngineeringBenchmark`."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    f: Any
    g: Any
    x_star: np.ndarray
    f_min: float  # min of f on the box (f_range = f_max - f_min)
    f_max: float
    feasible_share: tuple[float, float]  # (share, standard error): 10^6 uniform points, seed 0
    hints: dict[str, float]
    variables: tuple[str, ...]
    formulas: dict[str, Any]


# Verified optima (benchmarks/verify_engineering_optima.py; docs/engineering-problems.md): the best of
# 256 multi-start SLSQP runs, polished onto the feasible side (max_j g_j(x*) <= 0 exactly), stored to
# full precision; f* = f(x*) exactly. The best runs agree to 1e-13 (welded beam), 7e-12 (spring) and 3e-10
# (speed reducer) in f; stable digits: 1.7248523086, 0.0126652328, 2996.348164969.
WELDED_BEAM_X_STAR = np.array([0.20572963978607955, 3.470488665628001, 9.03662391035763, 0.20572963978607975])
WELDED_BEAM_F_STAR = 1.7248523085973666
TENSION_SPRING_X_STAR = np.array([0.05168905619129191, 0.35671762212351027, 11.288972650590129])
TENSION_SPRING_F_STAR = 0.012665232788319962
SPEED_REDUCER_X_STAR = np.array([3.5, 0.7, 17.0, 7.3, 7.8, 3.3502146660964476, 5.286683229757916])
SPEED_REDUCER_F_STAR = 2996.3481649685295

ENGINEERING_SPECS: dict[str, EngineeringSpec] = {
    "welded-beam": EngineeringSpec(
        (0.1, 0.1, 0.1, 0.1),
        (2.0, 10.0, 10.0, 2.0),
        welded_beam_f,
        welded_beam_g,
        WELDED_BEAM_X_STAR,
        0.00788822,  # f(0.1, 0.1, 0.1, 0.1)
        67.2812,  # f(2, 10, 10, 2)
        (0.026165, 0.00016),
        {"B": 67.2812, "G": 503970000.0, "slater_margin": 0.246548},  # G: sigma - 30000 at t = b = 0.1
        ("h", "l", "t", "b"),
        {
            "f": "1.10471 h^2 l + 0.04811 t b (14 + l)",
            "g": [
                "tau(x) - 13600",
                "sigma(x) - 30000",
                "h - b",
                "0.10471 h^2 + 0.04811 t b (14 + l) - 5",
                "0.125 - h",
                "delta(x) - 0.25",
                "P - P_c(x)",
            ],
        },
    ),
    "tension-spring": EngineeringSpec(
        (0.05, 0.25, 2.0),
        (2.0, 1.3, 15.0),
        tension_spring_f,
        tension_spring_g,
        TENSION_SPRING_X_STAR,
        0.0025,  # f(0.05, 0.25, 2)
        88.4,  # f(2, 1.3, 15)
        (0.007497, 0.000086),
        {"B": 88.4, "slater_margin": 0.507107},  # no G: |g_2| is unbounded (pole at d = D)
        ("d", "D", "N"),
        {
            "f": "(N + 2) D d^2",
            "g": [
                "1 - D^3 N / (71785 d^4)",
                "(4 D^2 - d D) / (12566 (D d^3 - d^4)) + 1 / (5108 d^2) - 1",
                "1 - 140.45 d / (D^2 N)",
                "(D + d) / 1.5 - 1",
            ],
        },
    ),
    "speed-reducer": EngineeringSpec(
        (2.6, 0.7, 17.0, 7.3, 7.8, 2.9, 5.0),
        (3.6, 0.8, 28.0, 8.3, 8.3, 3.9, 5.5),
        speed_reducer_f,
        speed_reducer_g,
        SPEED_REDUCER_X_STAR,
        2362.26534872076,  # f(lower): f increases in every variable on the box
        7144.825930798401,  # f(upper)
        (0.00183, 0.000043),
        {"B": 7144.825930798401, "G": 598.992, "slater_margin": 0.0705251},  # G: g_5 at a corner
        ("b", "m", "z", "l1", "l2", "d1", "d2"),
        {
            "f": "0.7854 x1 x2^2 (3.3333 x3^2 + 14.9334 x3 - 43.0934) - 1.508 x1 (x6^2 + x7^2) "
            "+ 7.4777 (x6^3 + x7^3) + 0.7854 (x4 x6^2 + x5 x7^2)",
            "g": [
                "27 / (x1 x2^2 x3) - 1",
                "397.5 / (x1 x2^2 x3^2) - 1",
                "1.93 x4^3 / (x2 x3 x6^4) - 1",
                "1.93 x5^3 / (x2 x3 x7^4) - 1",
                "sqrt((745 x4 / (x2 x3))^2 + 16.9e6) / (0.1 x6^3) - 1100",
                "sqrt((745 x5 / (x2 x3))^2 + 157.5e6) / (0.1 x7^3) - 850",
                "x2 x3 - 40",
                "5 - x1 / x2",
                "x1 / x2 - 12",
                "(1.5 x6 + 1.9) / x4 - 1",
                "(1.1 x7 + 1.9) / x5 - 1",
            ],
        },
    ),
}

ENGINEERING_BENCHMARKS: dict[str, EngineeringBenchmark] = add_benchmarks(
    EngineeringBenchmark(
        "welded-beam",
        "welded-beam",
        {},
        (10700.0, 23500.0, 0.556, 3.07, 0.925, 0.241, 353000.0),
        WELDED_BEAM_F_STAR,
        ENGINEERING_SPECS["welded-beam"].f_max - ENGINEERING_SPECS["welded-beam"].f_min,
        "Ragsdell & Phillips 1976 (welded beam), form of Coello Coello 2000",
    ),
    EngineeringBenchmark(
        "tension-spring",
        "tension-spring",
        {},
        (1.0, 1.0, 28.4, 0.347),
        TENSION_SPRING_F_STAR,
        ENGINEERING_SPECS["tension-spring"].f_max - ENGINEERING_SPECS["tension-spring"].f_min,
        "Arora 1989 / Belegundu 1982 (tension/compression spring), form of Coello Coello 2000",
    ),
    EngineeringBenchmark(
        "speed-reducer",
        "speed-reducer",
        {},
        (0.303, 0.545, 0.589, 0.921, 240.0, 60.1, 23.2, 0.867, 7.87, 0.103, 0.0466),
        SPEED_REDUCER_F_STAR,
        ENGINEERING_SPECS["speed-reducer"].f_max - ENGINEERING_SPECS["speed-reducer"].f_min,
        "Golinski 1970 (speed reducer), form of Lemonge et al. 2010",
    ),
)
"""The engineering benchmarks by name; each is also an entry of ``CONSTRAINED_BENCHMARKS``."""


# ---------------------------------------------------------------------------------------------- factories


def _make(name: str, relative_noise: float) -> Problem:
    spec, bench = ENGINEERING_SPECS[name], ENGINEERING_BENCHMARKS[name]
    # the noise levels are relative_noise times |f*| and times each constraint's scale: all stay in range
    largest = max(abs(bench.f_star), *bench.constraint_scale, 1.0)
    relative_noise = check_noise_scale(relative_noise, "relative_noise", high=MAX_NOISE_SCALE / largest)
    domain = BoxDomain(spec.lower, spec.upper)
    reward_std = relative_noise * abs(bench.f_star)
    share, share_se = spec.feasible_share
    return Problem(
        name,
        domain,
        spec.f,
        spec.g,
        GaussianNoise(reward_std, [relative_noise * s for s in bench.constraint_scale]),
        kernel=Matern(0.25 * (domain.upper - domain.lower), nu=2.5),
        minimize=True,
        optimum=(spec.x_star.copy(), bench.f_star),
        hints={**spec.hints, "R": reward_std},
        metadata={
            **spec.formulas,
            "variables": list(spec.variables),
            "x_star": spec.x_star.tolist(),
            "f_star": bench.f_star,
            "constraint_scale": list(bench.constraint_scale),
            "constraint_scale_rule": bench.constraint_scale_rule,
            "f_range": bench.f_range,
            "gap_normaliser": bench.gap_normaliser,
            "feasible_share": share,
            "feasible_share_se": share_se,
            "relative_noise": relative_noise,
            "source": bench.source,
        },
    )


@PROBLEMS.register("welded-beam")
def welded_beam(rng: np.random.Generator, *, relative_noise: float = 0.0) -> Problem:
    """Welded beam design (Ragsdell & Phillips 1976; Coello 2000): d = 4, m = 7, min cost 1.7248523.

    Exact observations by default; ``relative_noise = r`` adds Gaussian noise of standard deviation
    ``r |f*|`` to f and ``r s_j`` to g_j (``s_j`` the constraint's typical magnitude).
    """
    return _make("welded-beam", relative_noise)


@PROBLEMS.register("tension-spring")
def tension_spring(rng: np.random.Generator, *, relative_noise: float = 0.0) -> Problem:
    """Tension/compression spring design (Arora 1989; Coello 2000): d = 3, m = 4, min weight 0.0126652.

    Exact observations by default; ``relative_noise = r`` adds Gaussian noise of standard deviation
    ``r |f*|`` to f and ``r s_j`` to g_j (``s_j`` the constraint's typical magnitude).
    """
    return _make("tension-spring", relative_noise)


@PROBLEMS.register("speed-reducer")
def speed_reducer(rng: np.random.Generator, *, relative_noise: float = 0.0) -> Problem:
    """Speed reducer design (Golinski 1970; Lemonge et al. 2010): d = 7, m = 11, min weight 2996.3482.

    Exact observations by default; ``relative_noise = r`` adds Gaussian noise of standard deviation
    ``r |f*|`` to f and ``r s_j`` to g_j (``s_j`` the constraint's typical magnitude).
    """
    return _make("speed-reducer", relative_noise)
