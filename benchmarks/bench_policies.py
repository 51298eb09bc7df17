"""Per-round cost of every harness policy as the round t grows: is a round's cost flat in t?

The standard: a GP update must not cost O(t^3) per round, and a round should cost what its paper's rule
needs, no more. ``bench_ckb.py`` measures the cost against the number of arms at one t; this measures
it against t, for every registered policy that runs on the synthetic RKHS problem, in two GP forms:

- ``auto`` on 100 arms (the GP turns dense at t = 50: a round then costs O(n^2) whatever t);
- ``method="cholesky"`` on 200 arms (an update costs O(t n): the per-round cost grows linearly);

and under Guo, Zhu & Liu's Poisson(15) delays for the policies that take feedback late. A window of
``--window`` rounds is timed (median ask + tell, BLAS one thread) at each checkpoint t, and the growth
exponent between the first and the last checkpoint is the slope of log cost against log t: about 0 is
flat, 1 linear (the Cholesky form's O(t n)), 2 a round that re-solves all t observations.

Skipped, with the reason printed: the policies that need another problem or environment (SCGP-UCB: the
full-information queue; OCO and ADMMBO: a box; ADMMBO also refits hyperparameters every step, as its
paper's code does, and stops after its own budget).

Run by hand (not a test): ``python benchmarks/bench_policies.py [--quick] [--policies a,b]`` (about 1 minute;
--quick 20 s). Results in ``results/policies.json``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from _args import Parser, error, names
from ckb.errors import CKBError
from ckb.policies import POLICIES
from ckb.runner import Trial, TrialConfig

#: policies measured elsewhere or not on this problem, and why
SKIP = {
    "scgp-ucb": "needs the full-information queue problem",
    "oco": "a box method (O(d) per round)",
    "admmbo": "a box method that refits its GPs every step within its own budget",
}
#: the constants a policy needs on the synthetic problem beyond its defaults
PARAMS = {name: {"R": 0.1} for name in ("ckb-ucb", "ckb-ts", "ckb-rand", "ckb-restart-ucb")}


def cases(only: list[str] | None = None) -> list[tuple[str, str, dict, dict, str]]:
    """``(label, policy, policy params, problem params, environment)`` for every measured policy (those
    of ``only``, if given)."""
    out = []
    for name in POLICIES.names():
        if name in SKIP or name == "ckb" or (only and name not in only):  # "ckb": ckb-ucb's paper name
            continue
        base = dict(PARAMS.get(name, {}))
        out.append((f"{name} (auto, 100 arms)", name, base, {"n_grid": 100}, "basic"))
        out.append(
            (f"{name} (cholesky, 200 arms)", name, {**base, "method": "cholesky"}, {"n_grid": 200}, "basic")
        )
        if getattr(POLICIES.get(name), "accepts_partial_feedback", False):
            out.append((f"{name} (delays, 100 arms)", name, base, {"n_grid": 100}, "delayed"))
    return out


def per_round(policy: str, params: dict, problem: dict, env: str, ts: list[int], window: int) -> list[float]:
    """Median seconds of ask + tell over ``window`` rounds from each of ``ts``."""
    prob = {"constraint": "neg-f-plus-h", "h_fraction": 0.5, **problem}
    horizon = ts[-1] + window
    if policy == "stageopt":  # its first stage throughout, where it builds the safe set and expanders
        params = {**params, "T0": horizon}
    cfg = TrialConfig(policy, policy, "rkhs-synthetic", horizon, 0, 0, params, prob, env)
    trial = Trial(cfg)
    trial.run()
    sec = trial.trace.seconds
    return [float(np.median(sec[t : t + window])) for t in ts]


def main(argv: list[str] | None = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="checkpoints t = 200, 1000, 2000 (about 1 minute)")
    ap.add_argument("--window", type=int, default=100, help="rounds timed at each checkpoint (default 100)")
    ap.add_argument("--policies", help="comma-separated policies to measure (default: all)")
    args = ap.parse_args(argv)
    if args.window < 1:
        ap.error(f"--window must be >= 1, got {args.window}")
    try:
        only = names(args.policies, "--policies")
        for name in only or []:
            POLICIES.get(name)  # an unknown name: one line naming the known ones
    except CKBError as exc:
        return error(str(exc))
    ts = [200, 1000, 2000] if args.quick else [200, 1000, 2000, 4000]
    out = Path(__file__).resolve().parent / "results" / "policies.json"
    for name, why in SKIP.items():
        print(f"skipped {name}: {why}")
    rows, start = {}, time.perf_counter()
    with threadpool_limits(1):
        for label, policy, params, problem, env in cases(only):
            ms = [s * 1e3 for s in per_round(policy, params, problem, env, ts, args.window)]
            slope = float(np.log(ms[-1] / ms[0]) / np.log(ts[-1] / ts[0]))
            rows[label] = {"ms": ms, "exponent": slope}
            cells = " ".join(f"{v:8.3f}" for v in ms)
            print(
                f"[{time.perf_counter() - start:6.1f}s] {label:40s} {cells} ms  exponent {slope:5.2f}",
                flush=True,
            )
    header = "| policy (GP form, arms) | " + " | ".join(f"t = {t:,}" for t in ts) + " | exponent |"
    lines = [header, "|---|" + "---:|" * (len(ts) + 1)]
    for label, r in rows.items():
        lines.append(f"| {label} | " + " | ".join(f"{v:.3g}" for v in r["ms"]) + f" | {r['exponent']:.2f} |")
    print("\nMedian milliseconds per round (ask + tell); exponent: slope of log cost against log t\n")
    print("\n".join(lines))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"t": ts, "window": args.window, "rows": rows}, indent=2))
    print(f"\nTotal {time.perf_counter() - start:.0f} s; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
