"""Verify the engineering benchmarks' stated facts independently (run by hand; results in
docs/engineering-problems.md).

    python benchmarks/verify_engineering_optima.py [--starts 256] [--scan 4000000] [--problems NAME ...]

For each problem of :mod:`ckb.problems.engineering_benchmarks`:

1. feasible share of the box: 10^6 uniform points (seed 0), with its standard error;
2. typical constraint magnitudes: median |g_j| over 2^16 scrambled Sobol points (seed 0);
3. multi-start SLSQP from ``--starts`` scrambled Sobol starts (seed 0) in the box (unit-cube
   coordinates, constraints divided by their magnitudes: a scaling that leaves the feasible set as it is);
   a run counts when its point satisfies every constraint to <= 1e-9 in the constraints' own units;
4. polish: if the best point violates a constraint (by <= 1e-9), the smallest step along the descent
   direction of the violated constraints that makes max_j g_j <= 0 exactly; the best run that is exactly
   feasible is kept instead when it is lower; the cost of that step is reported;
5. for d <= 4, a uniform random scan of the box (``--scan`` points, seed 1) and a dense scan of the
   box x* +- 2% of each width (10^6 points, seed 2): no feasible sample may beat f*;
6. the hints (box range of f, sup |g_j|, Slater margin max_x min_j -g_j) by bounded local searches from the
   box's corners and Sobol points;
7. published points and values, and BoTorch's implementations (if installed): agreement of the formulas
   and the optimum of BoTorch's own definition on its own box;
8. the pressure vessel (a rejected candidate): its feasible share in the usual boxes.

It ends with the stored facts as Python literals, to compare with (or paste into) the module.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
from rich.console import Console
from rich.progress import track
from scipy.optimize import minimize
from scipy.stats import qmc

from _args import Parser
from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS
from ckb.problems.engineering_benchmarks import (
    ENGINEERING_BENCHMARKS,
    ENGINEERING_SPECS,
    constraint_magnitudes,
)

console = Console(highlight=False, markup=False, soft_wrap=True)
FEAS_TOL = 1e-9
#: the most ``--starts``: a scrambled Sobol sequence of that many points is drawn up front (2^30 is
#: scipy's limit) and each start is one SLSQP run, so 2^20 starts already take hours per problem
MAX_STARTS = 2**20


def feasible_share(g, lo, hi, n=10**6, seed=0, chunk=200_000):
    rng = np.random.default_rng(seed)
    hits = 0
    for k in range(0, n, chunk):
        X = rng.uniform(lo, hi, (min(chunk, n - k), lo.size))
        with np.errstate(all="ignore"):
            hits += int(np.sum(np.all(g(X) <= 0.0, axis=1)))
    p = hits / n
    return p, math.sqrt(p * (1 - p) / n)


def slsqp(f, g, lo, hi, s, u0, fscale=1.0):
    """SLSQP in unit-cube coordinates with constraints g / s <= 0; the clipped end point, or ``None`` if the
    run broke down (a non-finite iterate)."""

    def tox(u):
        return np.clip(lo + u * (hi - lo), lo, hi)

    try:
        res = minimize(
            lambda u: f(tox(u)) / fscale,
            u0,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * lo.size,
            constraints=[{"type": "ineq", "fun": lambda u: -g(tox(u)) / s}],
            options={"ftol": 1e-14, "maxiter": 1000},
        )
    except ValueError:  # ckb's InvalidInputError for a non-finite iterate
        return None
    return tox(np.clip(res.x, 0.0, 1.0)) if np.all(np.isfinite(res.x)) else None


def multistart(f, g, lo, hi, s, n_starts, seed=0):
    """``(f, max_j g_j, x)`` of every run that did not break down."""
    U = qmc.Sobol(lo.size, scramble=True, rng=np.random.default_rng(seed)).random(n_starts)
    fscale = abs(f((lo + hi) / 2))
    runs = []
    for u0 in track(U, description="  SLSQP starts", console=console, transient=True):
        x = slsqp(f, g, lo, hi, s, u0, fscale=fscale)
        if x is not None:
            runs.append((f(x), float(np.max(g(x))), x))
    return runs


def polish(g, x, lo, hi):
    """Restore max_j g_j(x) <= 0 exactly by the smallest move along the descent direction of the violated
    constraints (central differences in unit-cube coordinates, projected onto the box's active bounds).

    Returns ``(point, steps)``; ``steps`` lists the step lengths taken (empty if ``x`` was feasible).
    """
    w = hi - lo
    u = (x - lo) / w
    steps = []

    def at(v):
        return np.clip(lo + np.clip(v, 0.0, 1.0) * w, lo, hi)

    for _ in range(20):
        gu = g(at(u))
        if np.max(gu) <= 0.0:
            return at(u), steps
        h = 1e-7
        grad = np.array(
            [(g(lo + (u + h * e) * w) - g(lo + (u - h * e) * w)) / (2 * h) for e in np.eye(u.size)]
        )
        viol = grad[:, gu > 0.0]
        v = -np.sum(viol / np.linalg.norm(viol, axis=0), axis=1)
        v[((u <= 0.0) & (v < 0.0)) | ((u >= 1.0) & (v > 0.0))] = 0.0
        v /= np.linalg.norm(v)

        def feasible(t, u=u, v=v):
            return np.max(g(at(u + t * v))) <= 0.0

        t_hi = next((10.0**k for k in range(-17, 1) if feasible(10.0**k)), None)
        if t_hi is None:  # no single step fixes everything: take the one that reduces the violation most
            t_hi = min((10.0**k for k in range(-17, 1)), key=lambda t: np.max(g(at(u + t * v))))
        else:
            t_lo = t_hi / 10.0
            for _ in range(60):
                mid = 0.5 * (t_lo + t_hi)
                t_lo, t_hi = (t_lo, mid) if feasible(mid) else (mid, t_hi)
        u = np.clip(u + t_hi * v, 0.0, 1.0)
        steps.append(t_hi)
    raise RuntimeError(
        f"could not restore feasibility near {x.tolist()} (max_j g_j = {np.max(g(at(u))):.3g})."
    )


def extreme(fun, lo, hi, n=64, seed=1):
    """max of fun over the box: corners, Sobol points and L-BFGS-B from each."""
    corners = np.array(list(itertools.product(*zip(lo, hi))))
    starts = np.vstack(
        [corners, qmc.scale(qmc.Sobol(lo.size, rng=np.random.default_rng(seed)).random(n), lo, hi)]
    )
    best = -np.inf
    with np.errstate(all="ignore"):
        for x0 in starts:
            best = max(best, fun(x0))
            r = minimize(lambda x: -fun(x), x0, method="L-BFGS-B", bounds=list(zip(lo, hi)))
            best = max(best, fun(np.clip(r.x, lo, hi)))
    return float(best)


def slater_point(g, lo, hi, n=64, seed=1):
    """``(margin, x)``: max_x min_j -g_j(x) (raw units) and its maximizer, by SLSQP on (x, t):
    max t s.t. g_j(x) + t <= 0."""
    starts = qmc.scale(qmc.Sobol(lo.size, rng=np.random.default_rng(seed)).random(n), lo, hi)
    best, best_x = -np.inf, None
    for x0 in starts:
        with np.errstate(all="ignore"):
            t0 = -float(np.max(g(x0)))
        if not math.isfinite(t0):
            continue
        r = minimize(
            lambda z: -z[-1],
            np.r_[x0, t0],
            method="SLSQP",
            bounds=[*zip(lo, hi), (None, None)],
            constraints=[{"type": "ineq", "fun": lambda z: -(g(z[:-1]) + z[-1])}],
            options={"ftol": 1e-14, "maxiter": 500},
        )
        if not np.all(np.isfinite(r.x)):
            continue
        x = np.clip(r.x[:-1], lo, hi)
        with np.errstate(all="ignore"):
            margin = -float(np.max(g(x)))
        if margin > best:
            best, best_x = margin, x
    return best, best_x


def scans(f, g, lo, hi, x_star, n_scan):
    rng = np.random.default_rng(1)
    best = np.inf
    for k in range(0, n_scan, 500_000):
        X = rng.uniform(lo, hi, (min(500_000, n_scan - k), lo.size))
        with np.errstate(all="ignore"):
            feas = np.all(g(X) <= 0.0, axis=1)
        if feas.any():
            best = min(best, float(f(X[feas]).min()))
    w = 0.02 * (hi - lo)
    X = np.random.default_rng(2).uniform(
        np.maximum(lo, x_star - w), np.minimum(hi, x_star + w), (10**6, lo.size)
    )
    feas = np.all(g(X) <= 0.0, axis=1)
    local = float(f(X[feas]).min()) if feas.any() else math.inf
    return best, local, int(feas.sum())


PUBLISHED = {
    "welded-beam": [
        ("best-known 1.724852 (rounded point)", [0.205730, 3.470489, 9.036624, 0.205730], 1.724852),
        ("Coello & Mezura-Montes 2002 (BoTorch's value)", [0.205986, 3.471328, 9.020224, 0.206480], 1.728226),
    ],
    "tension-spring": [
        ("often quoted 0.012665", [0.051690, 0.356750, 11.287126], 0.012665),
        ("Coello & Mezura-Montes 2002 (BoTorch's value)", [0.051989, 0.363965, 10.890522], 0.012681),
    ],
    "speed-reducer": [
        ("best-known 2996.348165 (6 decimals)", [3.5, 0.7, 17.0, 7.3, 7.8, 3.350215, 5.286683], 2996.348165),
        (
            "2994.471066 (x5 = 7.71532 < 7.8)",
            [3.5, 0.7, 17.0, 7.3, 7.715320, 3.350215, 5.286654],
            2994.471066,
        ),
    ],
}


def published(name, f, g, s):
    for label, x, stated in PUBLISHED[name]:
        x = np.asarray(x)
        gx = g(x)
        j = int(np.argmax(gx / s))
        console.print(
            f"  published {label}: stated {stated}, f = {f(x):.10g}, max_j g_j = {gx.max():.3g} "
            f"(g_{j + 1} = {gx[j]:.3g}, {gx[j] / s[j]:.2g} of s_{j + 1})"
        )


def botorch_check(name, f, g, lo, hi):
    try:
        import torch
        from botorch.test_functions import synthetic as syn
    except ImportError:  # pragma: no cover
        console.print("  (BoTorch not installed: skipped)")
        return
    tf = {
        "welded-beam": syn.WeldedBeamSO,
        "tension-spring": syn.TensionCompressionString,
        "speed-reducer": syn.SpeedReducer,
    }[name]()
    blo, bhi = (np.array(b, dtype=float) for b in zip(*tf._bounds))
    # the same formulas? compare on points of the intersection of the two boxes
    ilo, ihi = np.maximum(lo, blo), np.minimum(hi, bhi)
    X = np.random.default_rng(3).uniform(ilo, ihi, (2000, lo.size))
    T = torch.tensor(X, dtype=torch.float64)
    bf = tf.evaluate_true(T).numpy()
    bg = -tf.evaluate_slack_true(T).numpy()
    with np.errstate(all="ignore"):
        ours = g(X)
    cols = [0, 1, 2, 3, 5, 6] if name == "welded-beam" else list(range(ours.shape[1]))
    ours = ours[:, cols]
    ok = np.all(np.abs(ours) < 100, axis=1) if name == "tension-spring" else np.ones(len(X), bool)
    rel = np.max(np.abs(bg[ok] - ours[ok]) / np.maximum(np.abs(ours[ok]), 1e-300), axis=0)
    console.print(
        f"  BoTorch {type(tf).__name__}: box {tf._bounds}, m = {bg.shape[1]}; f agrees to "
        f"{np.max(np.abs(bf - f(X)) / np.abs(f(X))):.1e} (relative); per-constraint max relative "
        f"difference (ours {[c + 1 for c in cols]}): {np.array2string(rel, precision=2)}"
    )
    if name == "welded-beam":
        console.print(
            f"    BoTorch's P_c / ours = {np.median((bg[:, 5] - 6000.0) / (ours[:, 5] - 6000.0)):.6g}"
        )

    def bfn(x):
        return float(tf.evaluate_true(torch.tensor(x[None, :]))[0])

    def bgn(x):
        return -tf.evaluate_slack_true(torch.tensor(x[None, :]))[0].numpy()

    S = qmc.scale(qmc.Sobol(lo.size, rng=np.random.default_rng(4)).random(1024), blo, bhi)
    sb = np.median(np.abs(np.array([bgn(x) for x in S])), axis=0)
    best = (math.inf, None)
    for u0 in qmc.Sobol(lo.size, rng=np.random.default_rng(0)).random(64):
        x = slsqp(bfn, bgn, blo, bhi, sb, u0, fscale=abs(bfn((blo + bhi) / 2)))
        if x is not None and np.max(bgn(x)) <= 1e-6 and bfn(x) < best[0]:
            best = (bfn(x), x)
    x = best[1]
    inside = bool(np.all((x >= lo) & (x <= hi)))
    with np.errstate(all="ignore"):
        viol = float(np.max(g(x))) if inside else math.nan
    console.print(
        f"    BoTorch optimal_value {tf.optimal_value}; SLSQP (64 starts) on BoTorch's own definition: "
        f"{best[0]:.8g} at {np.array2string(x, precision=6)} (max_j of BoTorch's g_j there {np.max(bgn(x)):.2g}); "
        + (f"max_j g_j there (ours) = {viol:.4g}" if inside else "outside our box")
    )


def pressure_vessel():
    def g(X):
        x1, x2, x3, x4 = X.T
        return np.stack(
            [
                -x1 + 0.0193 * x3,
                -x2 + 0.00954 * x3,
                -math.pi * x3**2 * x4 - 4.0 / 3.0 * math.pi * x3**3 + 1296000.0,
                x4 - 240.0,
            ],
            axis=1,
        )

    for label, lo, hi in (
        (
            "[0.0625, 6.1875]^2 x [10, 200]^2 (1..99 x 0.0625 in)",
            [0.0625, 0.0625, 10, 10],
            [6.1875, 6.1875, 200, 200],
        ),
        ("[0, 99]^2 x [10, 200]^2", [0, 0, 10, 10], [99, 99, 200, 200]),
        ("BoTorch's [0, 10]^2 x [10, 50] x [150, 200]", [0, 0, 10, 150], [10, 10, 50, 200]),
    ):
        p, se = feasible_share(g, np.array(lo, float), np.array(hi, float))
        console.print(f"  pressure vessel, box {label}: feasible share {100 * p:.2f}% +- {100 * se:.2f}%")


def main() -> None:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--starts", type=int, default=256, help="SLSQP starts per problem (default 256)")
    ap.add_argument("--scan", type=int, default=4_000_000, help="random scan points for d <= 4")
    ap.add_argument("--problems", nargs="*", default=list(ENGINEERING_BENCHMARKS), help="default: all")
    args = ap.parse_args()
    if not 1 <= args.starts <= MAX_STARTS:
        ap.error(f"--starts must be an integer in [1, {MAX_STARTS}], got {args.starts}.")
    if args.scan < 1:
        ap.error(f"--scan must be an integer >= 1, got {args.scan}.")
    if not args.problems:
        ap.error(f"--problems needs at least one name; choose from {sorted(ENGINEERING_BENCHMARKS)}.")
    for k, name in enumerate(args.problems):
        if name not in ENGINEERING_BENCHMARKS:
            ap.error(f"unknown problem {name!r}; choose from {sorted(ENGINEERING_BENCHMARKS)}.")
        if name in args.problems[:k]:
            ap.error(f"--problems names {name!r} twice; name each problem once.")
    literals = {}
    for name in args.problems:
        t0 = time.perf_counter()
        spec, bench = ENGINEERING_SPECS[name], ENGINEERING_BENCHMARKS[name]
        assert CONSTRAINED_BENCHMARKS[name] is bench
        f, g = spec.f, spec.g
        lo, hi = np.array(spec.lower), np.array(spec.upper)
        d = lo.size
        console.print(f"{name} (d = {d}, m = {len(bench.constraint_scale)})", style="bold")
        p, se = feasible_share(g, lo, hi)
        console.print(f"  feasible share: {100 * p:.3f}% +- {100 * se:.3f}% (10^6 uniform points, seed 0)")
        s_raw = constraint_magnitudes(g, lo, hi)
        s = np.array(bench.constraint_scale)
        console.print(
            f"  median |g_j| (2^16 Sobol, seed 0): {[float(f'{v:.3g}') for v in s_raw]}; stated {s.tolist()}"
        )
        margin, x_in = slater_point(g, lo, hi)
        runs = multistart(f, g, lo, hi, s, args.starts)
        ok = [r for r in runs if r[1] <= FEAS_TOL]
        if not ok:
            console.print(
                f"  SLSQP: none of {args.starts} runs ends feasible to <= {FEAS_TOL:g}", style="red"
            )
            continue
        best = min(ok, key=lambda r: r[0])
        near = np.array([r[0] for r in ok if r[0] <= best[0] * (1 + 1e-6)])
        console.print(
            f"  SLSQP: {args.starts} starts ({args.starts - len(runs)} broke down), {len(ok)} end feasible to <= {FEAS_TOL:g} "
            f"(max_j g_j in the constraints' units), {near.size} of them within 1e-6 (relative) of the best; "
            f"best f = {best[0]!r} with max_j g_j = {best[1]:.3g}; those {near.size} values span "
            f"{float(near.max() - near.min()):.2e}"
        )
        x_pol, steps = polish(g, best[2], lo, hi)
        exact = [r for r in ok if r[1] <= 0.0]
        best_exact = min(exact, key=lambda r: r[0]) if exact else None
        if best_exact is not None and best_exact[0] < f(x_pol):
            x_pol = best_exact[2]
        f_pol, g_pol = f(x_pol), g(x_pol)
        console.print(
            f"  polish of the best run (steps {[f'{t:.1e}' for t in steps]} in unit-cube coordinates): "
            f"f = {f(polish(g, best[2], lo, hi)[0])!r}; best run with max_j g_j <= 0 exactly: "
            + (f"f = {best_exact[0]!r}" if best_exact is not None else "none")
            + f"; kept the lower: f* = {f_pol!r} ({f_pol - best[0]:+.2e} from the best run), max_j g_j = "
            f"{g_pol.max():.3g}, max_j g_j / s_j = {np.max(g_pol / s):.3g}"
        )
        console.print(f"  x* = {x_pol.tolist()!r}")
        console.print(f"  g(x*) = {np.array2string(g_pol, precision=4, max_line_width=200)}")
        x_stored, f_stored = spec.x_star, bench.f_star
        with np.errstate(all="ignore"):
            console.print(
                f"  stored: f* = {f_stored!r}, f(x*) - f* = {f(x_stored) - f_stored:.2e}, max_j g_j(x*) = "
                f"{np.max(g(x_stored)):.3g}; stored f* - polished f* now = {f_stored - f_pol:+.2e}"
            )
        if d <= 4:
            scan_best, local_best, n_local = scans(f, g, lo, hi, x_pol, args.scan)
            console.print(
                f"  random scan ({args.scan} points, seed 1): best feasible f = {scan_best:.8g} "
                f"({100 * (scan_best / f_pol - 1):.2f}% above f*); dense scan of x* +- 2% of the widths "
                f"(10^6 points, seed 2): {n_local} feasible, best f - f* = {local_best - f_pol:+.3e}"
            )
        f_min, f_max = -extreme(lambda x, f=f: -f(x), lo, hi), extreme(f, lo, hi)
        sup_g = [extreme(lambda x, g=g, j=j: abs(g(x)[j]), lo, hi) for j in range(s.size)]
        console.print(
            f"  f on the box: [{f_min!r}, {f_max!r}] (f(lower) = {f(lo)!r}, f(upper) = {f(hi)!r}); "
            f"sup |g_j| by local searches (the spring's g_2 is unbounded) = {[f'{v:.6g}' for v in sup_g]}; "
            f"Slater margin max_x min_j -g_j = {margin!r} at {x_in.tolist()!r}"
        )
        published(name, f, g, s)
        if name == "speed-reducer":  # the variant with Golinski's bound x5 >= 7.3 (the source of 2994.47)
            lo73 = lo.copy()
            lo73[4] = 7.3
            alt = [r for r in multistart(f, g, lo73, hi, s, 64) if r[1] <= FEAS_TOL]
            b73 = min(alt, key=lambda r: r[0])
            console.print(
                f"  with 7.3 <= x5 instead (64 starts): f = {b73[0]!r} at {np.array2string(b73[2], precision=6)}"
            )
        botorch_check(name, f, g, lo, hi)
        literals[name] = {
            "x_star": x_pol.tolist(),
            "f_star": f_pol,
            "feasible_share": (round(p, 6), round(se, 6)),
            "f_range": (f_min, f_max),
            "G": max(sup_g),
            "slater_margin": margin,
        }
        console.print(f"  ({time.perf_counter() - t0:.1f} s)")
    console.print("rejected candidate", style="bold")
    pressure_vessel()
    console.print("facts as literals", style="bold")
    for name, lit in literals.items():
        console.print(f"{name}: {lit!r}")


if __name__ == "__main__":
    main()
