"""Per-round cost against the number of arms |X| at a fixed number of observations t.

The primal-dual papers claim CKB's per-round cost is linear in |X| (the cost of unconstrained GP-UCB) while
StageOpt's is quadratic (its safe-set construction). This measures, on the synthetic RKHS problem with
|X| grid points, after t = 200 rounds of the policy itself:

- ``ckb-ucb``, ``ckb-ts``, ``ckb-rand`` with the GP's Cholesky form (``method="cholesky"``: O(t |X|) per
  update, the engine's cheaper path at t < |X|/2), and with ``auto``;
- ``stageopt`` in its first stage (``T0`` past the timed rounds, so the safe set and expanders are
  built every round; before, the default ``T0`` = 10% of the horizon timed stage 2, which builds
  neither): with the Lipschitz rule (``safe_set="lipschitz"``: incremental safe sets, exactly the
  definition's sets, O(m |X|) in rounds where nothing grows), with the GP rule (the default, as the
  reference SafeOpt code: O(t |S| |U|) per round for the safe x uncertified covariance block), and the
  definition's O(m |X|^2) Lipschitz safe-set + expander computation alone (``reference_safe_set`` +
  ``reference_expanders``), which is what the papers' claim refers to;
- the fitted growth exponent of each column (slope of log cost against log |X|).

Run by hand (not a test): ``python benchmarks/bench_ckb.py [--quick]``. BLAS is pinned to one thread.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from _args import Parser
from ckb.policies.safe_bo import reference_expanders, reference_safe_set
from ckb.runner import Trial, TrialConfig


def per_round(policy: str, n: int, t_fixed: int, rounds: int, params: dict) -> float:
    """Median seconds of ask + tell per round after ``t_fixed`` rounds of the policy."""
    cfg = TrialConfig(
        policy,
        policy,
        "rkhs-synthetic",
        t_fixed + rounds,
        0,
        0,
        {"R": 0.1, "beta_scale": 0.2, **params},
        {"n_grid": n, "constraint": "neg-f-plus-h", "h_fraction": 0.5},
    )
    trial = Trial(cfg)
    trial.run(until=t_fixed)
    trial.run()
    return float(np.median(trial.trace.seconds[t_fixed:]))


def reference_stageopt_sets(n: int, reps: int = 3) -> float:
    """Seconds of one safe-set + expander computation from the definition at |X| = n (m = 1)."""
    rng = np.random.default_rng(0)
    x = np.linspace(0, 1, n)
    d = np.abs(x[:, None] - x[None, :])
    lower = -np.abs(rng.normal(size=(1, n))) + 0.3
    upper = lower + 0.5
    safe = np.zeros(n, dtype=bool)
    safe[n // 2] = True
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        s, cert = reference_safe_set(safe, lower, np.array([2.0]), d)
        reference_expanders(s, cert, upper, np.array([2.0]), d)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def slope(ns, ys) -> float:
    return float(np.polyfit(np.log(ns), np.log(ys), 1)[0])


def main() -> None:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller grid (about 30 s)")
    args = ap.parse_args()
    out = Path(__file__).parent / "results" / ("ckb-quick.json" if args.quick else "ckb.json")
    if not out.parent.is_dir() and (out.parent.exists() or out.parent.is_symlink()):
        ap.error(f"{out.parent} is not a directory; the results are written to {out}.")
    ns = [100, 300, 1000, 3000] if args.quick else [100, 300, 1000, 3000, 10000]
    t_fixed, rounds = 200, 30
    columns = {
        "ckb-ucb (cholesky)": ("ckb-ucb", {"method": "cholesky"}),
        "ckb-ts (cholesky)": ("ckb-ts", {"method": "cholesky"}),
        "ckb-rand (cholesky)": ("ckb-rand", {"method": "cholesky"}),
        "ckb-ucb (auto)": ("ckb-ucb", {}),
        "stageopt stage 1 (lipschitz sets)": ("stageopt", {"method": "cholesky", "safe_set": "lipschitz"}),
        "stageopt stage 1 (gp sets)": ("stageopt", {"method": "cholesky", "safe_set": "gp"}),
    }
    res: dict[str, list[float]] = {k: [] for k in columns}
    res["stageopt safe set + expanders, definition"] = []
    start = time.perf_counter()
    with threadpool_limits(1):
        for n in ns:
            for label, (policy, params) in columns.items():
                if policy == "ckb-ts" and n > 3000:  # the n x n prior factor (eigh) alone is minutes at 10^4
                    res[label].append(float("nan"))
                    continue
                if params.get("safe_set") == "gp" and n > 3000:  # the |S| x |U| blocks: seconds per round
                    res[label].append(float("nan"))
                    continue
                if policy == "stageopt":  # every timed round in the first stage, where the sets are built
                    params = {**params, "T0": t_fixed + rounds}
                res[label].append(per_round(policy, n, t_fixed, rounds, params))
                print(
                    f"[{time.perf_counter() - start:7.1f}s] n={n:>6} {label:32s} {res[label][-1] * 1e3:9.3f} ms"
                )
            res["stageopt safe set + expanders, definition"].append(reference_stageopt_sets(n))
    header = "| algorithm (t = 200) | " + " | ".join(f"n = {n:,}" for n in ns) + " | growth exponent |"
    lines = [header, "|---|" + "---:|" * (len(ns) + 1)]
    for label, ys in res.items():
        ok = [(n, y) for n, y in zip(ns, ys) if np.isfinite(y)]
        exp = slope([n for n, _ in ok[1:]], [y for _, y in ok[1:]]) if len(ok) > 2 else float("nan")
        cells = " | ".join("—" if not np.isfinite(y) else f"{y * 1e3:.3g}" for y in ys)
        lines.append(f"| {label} | {cells} | {exp:.2f} |")
    table = "\n".join(lines)
    print("\nMedian milliseconds per round (ask + tell) at t = 200; exponent fitted over n >= 300:\n")
    print(table)
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"ns": ns, "t": t_fixed, "seconds": res, "table": table}, indent=2))
    print(f"\nTotal {time.perf_counter() - start:.0f} s; wrote {out}")


if __name__ == "__main__":
    main()
