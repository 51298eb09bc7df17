"""What one evaluation costs where the constraints are unknown: the share of each benchmark problem's box
by the scaled violation of a single evaluation there (run by hand; results in
docs/results-constrained-benchmark.md, the violation budget's section).

    python benchmarks/box_violation.py [--points 16384] [--seed 7]

For each problem of the constrained benchmark, ``--points`` scrambled Sobol points (``--seed``) over its
box: the share where every constraint holds, and the shares where one evaluation's scaled violation
v = sum_j [g_j(x)]+ / s_j (s_j the benchmark's constraint scale, the unit of its violation budgets) lies in
(0, 0.25], (0.25, 1] and beyond 1, with the median v over the infeasible points. A violation budget of
b scales after a design that holds no feasible point is kept only if the search reaches the feasible
share before its evaluations outside it add up to b; where most of the box costs more than 1 in one
evaluation, a budget of 1 allows about one miss, and a budget of 0 none.
"""

from __future__ import annotations

import numpy as np

from _args import Parser
from ckb.benchmarking.constrained import CONSTRAINED_BENCHMARKS
from ckb.optimizer.space import _sobol_unit

#: the most ``--points``: they are held in memory (up to 7 coordinates and 11 constraint values each) and
#: evaluated one by one, so 2^22 (4,194,304) points already take a long time per problem
MAX_POINTS = 2**22


def shares(name: str, points: int, seed: int) -> dict[str, float]:
    """The shares of ``name``'s box by one evaluation's scaled violation (module docstring)."""
    bench = CONSTRAINED_BENCHMARKS[name]
    problem = bench.make()
    dom = problem.domain
    X = dom.lower + _sobol_unit(dom.d, points, seed) * (dom.upper - dom.lower)
    G = np.array([problem.evaluate(-1, x)[1] for x in X], dtype=float) / np.asarray(bench.constraint_scale)
    v = np.maximum(G, 0.0).sum(axis=1)
    return {
        "feasible": float(np.mean(v == 0.0)),
        "(0, 0.25]": float(np.mean((v > 0.0) & (v <= 0.25))),
        "(0.25, 1]": float(np.mean((v > 0.25) & (v <= 1.0))),
        "> 1": float(np.mean(v > 1.0)),
        "median v, infeasible": float(np.median(v[v > 0.0])) if np.any(v > 0.0) else 0.0,
    }


def main() -> None:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=2**14, help="Sobol points per problem (default 16384)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the scrambled Sobol points (default 7)")
    args = parser.parse_args()
    if not 1 <= args.points <= MAX_POINTS:
        parser.error(f"--points must be an integer in [1, {MAX_POINTS}], got {args.points}.")
    if args.seed < 0:
        parser.error(f"--seed must be an integer >= 0, got {args.seed}.")
    head = ["problem", "feasible", "(0, 0.25]", "(0.25, 1]", "> 1", "median v, infeasible"]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for name in CONSTRAINED_BENCHMARKS:
        row = shares(name, args.points, args.seed)
        cells = [f"{row[h]:.1%}" for h in head[1:-1]] + [f"{row[head[-1]]:.2f}"]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
