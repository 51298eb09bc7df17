"""Grid search of the OCO baseline's step size and exploration radius per experiment of Shi & Eryilmaz (AISTATS 2022).

001 (Shi & Eryilmaz, App. E) sets "the hyperparameters in the OCO method ... to achieve the best
performance" without giving them. This script makes that tuning explicit and repeatable, for policy
``oco`` (:mod:`ckb.policies.oco`, a reconstruction of Cao & Liu's bandit method) on the four settings:

- ``gardner`` with ``constraint_noise = "none"`` (E.1.1) and ``"gaussian"`` (E.1.2);
- ``rate-allocation`` with ``constraint_noise = "none"`` (E.2.1) and ``"uniform"`` (E.2.2).

Grid (stated, the same for every setting):

- ``eta`` (primal = dual step size): 1e-5, 3e-5, 1e-4, ..., 0.1, 0.3 (ten values over 4.5 orders of
  magnitude);
- ``delta_e`` (exploration radius): 2%, 5%, 10% and 20% of the box's side (the box is shrunk by it on
  each side), i.e. 0.12 / 0.3 / 0.6 / 1.2 on Gardner's [0, 6]^2 and 0.04 / 0.1 / 0.2 / 0.4 on rate
  allocation's [0, 2]^4;
- the other parameters at their defaults (``dual_reg = 0``, the variant from ``--variant``, default
  ``"one-point"``).

Score (lower is better), at the paper's horizon T = 350 and from the *true* f and g of the played points:

    score = R_T / T + V_T / T,   R_T = sum_t (f* - f(x_t)),   V_T = max(0, sum_t g(x_t))

(m = 1 for both problems, so V_T is 001's eq. (7)); f* is the problem's constrained optimum
(``gardner``: 1 - arcsin 0.95; ``rate-allocation``: the stand-in utilities' numerical optimum). The score
is the mean over ``--trials`` runs (default 10), each from its own uniform initial point and noise
stream. The runs use ``--seed`` (default 1000), not the experiments' seed 0, so the tuned values are not
fitted to the very runs they are then reported on. The chosen pair is the grid point of least mean score.
Regret and violation are added unweighted: each is an average per round in its function's own units.

Run by hand (not a test): ``python benchmarks/tune_oco.py [--trials 10] [--workers 2] [--variant ...]``.
About three minutes on the 2-core dev machine (a 350-round trial takes ~0.1 s). Prints one table per
setting and the chosen values, and writes them to ``benchmarks/results/tune-oco[-<variant>].json``.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from _args import Parser
from ckb.runner import Trial, TrialConfig, final_metrics
from ckb.runner.executors import get_executor

T = 350
ETAS = [1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1]
DELTA_FRACTIONS = [0.02, 0.05, 0.1, 0.2]
SETTINGS = [  # (label, problem, problem params, side of the box)
    ("gardner, exact g (E.1.1)", "gardner", {"constraint_noise": "none"}, 6.0),
    ("gardner, noisy g (E.1.2)", "gardner", {"constraint_noise": "gaussian"}, 6.0),
    ("rate-allocation, exact g (E.2.1)", "rate-allocation", {"constraint_noise": "none"}, 2.0),
    ("rate-allocation, noisy g (E.2.2)", "rate-allocation", {"constraint_noise": "uniform"}, 2.0),
]


def run_cell(task: tuple) -> list[tuple[float, float]]:
    """``(R_T / T, V_T / T)`` of each trial of one grid cell."""
    problem, pparams, eta, delta_e, variant, trials, seed = task
    out = []
    for k in range(trials):
        cfg = TrialConfig(
            "oco",
            "oco",
            problem,
            T,
            k,
            seed,
            {"eta": eta, "delta_e": delta_e, "variant": variant},
            dict(pparams),
        )
        m = final_metrics(Trial(cfg).run())
        out.append((m["regret"] / T, m["violation"] / T))
    return out


def main() -> None:
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10, help="runs per grid cell (default 10)")
    ap.add_argument("--seed", type=int, default=1000, help="seed of the tuning runs (default 1000)")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2: both cores)")
    ap.add_argument("--variant", default="one-point", choices=("one-point", "two-point"))
    args = ap.parse_args()
    # checked before any run: a bad value would otherwise fail in the workers (or, --trials 0, at the
    # table, after every cell ran), and --workers < 1 would quietly run serially
    if args.trials < 1:
        ap.error(f"--trials must be an integer >= 1, got {args.trials}.")
    cores = os.cpu_count() or 1  # one process per worker: more would only contend for the cores
    if not 1 <= args.workers <= cores:
        ap.error(f"--workers must be an integer in [1, {cores}] (this machine's cores), got {args.workers}.")
    if args.seed < 0:
        ap.error(f"--seed must be an integer >= 0, got {args.seed}.")
    out = (
        Path(__file__).parent
        / "results"
        / ("tune-oco.json" if args.variant == "one-point" else f"tune-oco-{args.variant}.json")
    )
    if not out.parent.is_dir() and (out.parent.exists() or out.parent.is_symlink()):
        ap.error(f"{out.parent} is not a directory; the results are written to {out}.")

    tasks = []
    for _, problem, pparams, side in SETTINGS:
        for eta in ETAS:
            for frac in DELTA_FRACTIONS:
                tasks.append(
                    (
                        problem,
                        tuple(pparams.items()),
                        eta,
                        round(frac * side, 10),
                        args.variant,
                        args.trials,
                        args.seed,
                    )
                )
    start = time.perf_counter()
    results: dict[tuple, list[tuple[float, float]]] = {}
    executor = get_executor("process" if args.workers > 1 else "serial", args.workers)
    try:
        from rich.progress import Progress

        progress = Progress(transient=True)
    except ImportError:  # pragma: no cover - rich is a dependency of the CLI
        progress = None
    if progress is not None:
        with progress:
            bar = progress.add_task(f"{len(tasks)} grid cells x {args.trials} trials", total=len(tasks))
            for task, res in executor.map_unordered(run_cell, tasks):
                results[task] = res
                progress.advance(bar)
    else:
        for task, res in executor.map_unordered(run_cell, tasks):
            results[task] = res

    report: dict[str, dict] = {}
    for label, problem, pparams, side in SETTINGS:
        deltas = [round(f * side, 10) for f in DELTA_FRACTIONS]
        cells = {}
        for eta in ETAS:
            for de in deltas:
                r = np.array(
                    results[(problem, tuple(pparams.items()), eta, de, args.variant, args.trials, args.seed)]
                )
                score = r.sum(axis=1)
                cells[(eta, de)] = {
                    "score": float(score.mean()),
                    "score_se": float(score.std(ddof=1) / np.sqrt(len(score))) if len(score) > 1 else 0.0,
                    "regret_avg": float(r[:, 0].mean()),
                    "violation_avg": float(r[:, 1].mean()),
                    "zero_violation_runs": int(np.sum(r[:, 1] == 0.0)),
                }
        best = min(cells, key=lambda c: cells[c]["score"])
        print(f"\n### {label}: {problem} {pparams}, variant {args.variant}, T = {T}, {args.trials} runs\n")
        print("mean score R_T/T + V_T/T (standard error); * = chosen\n")
        print("| eta | " + " | ".join(f"delta_e = {de:g}" for de in deltas) + " |")
        print("|---:|" + "---:|" * len(deltas))
        for eta in ETAS:
            row = []
            for de in deltas:
                c = cells[(eta, de)]
                mark = " *" if (eta, de) == best else ""
                row.append(f"{c['score']:.3f} ({c['score_se']:.3f}){mark}")
            print(f"| {eta:g} | " + " | ".join(row) + " |")
        b = cells[best]
        print(
            f"\nchosen: eta = {best[0]:g}, delta_e = {best[1]:g}: score {b['score']:.3f}, "
            f"R_T/T = {b['regret_avg']:.3f}, V_T/T = {b['violation_avg']:.3f}, "
            f"V_T = 0 in {b['zero_violation_runs']}/{args.trials} runs"
        )
        report[label] = {
            "problem": problem,
            "problem_params": pparams,
            "chosen": {"eta": best[0], "delta_e": best[1], **b},
            "grid": [{"eta": e, "delta_e": d, **c} for (e, d), c in cells.items()],
        }
    print(f"\nTotal {time.perf_counter() - start:.0f} s")
    out.parent.mkdir(exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "T": T,
                "trials": args.trials,
                "seed": args.seed,
                "variant": args.variant,
                "etas": ETAS,
                "delta_fractions": DELTA_FRACTIONS,
                "settings": report,
            },
            indent=2,
        )
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
