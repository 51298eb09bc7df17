"""Seconds per ``ckb.Optimizer.ask`` of every optimizer policy, in 2 and 6 dimensions (run by hand).

Run by hand, never as a test::

    python benchmarks/bench_optimizer_ask.py                    # every policy, d = 2 and 6, about 1 min
    python benchmarks/bench_optimizer_ask.py --quick            # d = 2, budget 14: about 20 s
    python benchmarks/bench_optimizer_ask.py --policies pcei,cei --dims 2,4,6

Each (policy, d) runs one in-memory study of ``--budget`` evaluations (default 30) on a cheap problem of
the unit cube with m = 2 constraints (f = Σ (x_i - 0.3)^2 to minimize, g_1 = Σ x_i - d/2 and
g_2 = 0.25 - x_1, feasible where <= 0), each policy with its own defaults (``refit_every``: 2 for pcei
and slack-cei, 1 for the others; the table says which), one torch thread, seed ``--seed``. The times are
those of the asks after the 2d + 2 point design (the design's asks do no modelling): the median CPU
seconds of the process (``time.process_time``) and the median wall seconds per ask. The evaluation itself
costs nothing here, so the numbers are the optimizer's own cost. Prints a markdown table; a bad argument
is one line ``error: ...`` on stderr with exit code 2, before anything runs.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from _args import Parser, error, names


def _problem(x: np.ndarray) -> tuple[float, list[float]]:
    d = x.size
    return float(np.sum((x - 0.3) ** 2)), [float(np.sum(x) - d / 2), float(0.25 - x[0])]


def _ints(text: str, flag: str) -> list[int]:
    """Comma-separated whole numbers >= 1 (``--dims``), or an InvalidInputError naming the bad item."""
    from ckb.errors import InvalidInputError

    out = []
    for item in names(text, flag):
        try:
            value = int(item)
        except ValueError:
            raise InvalidInputError(f"{flag} expects whole numbers >= 1, got {item!r}.") from None
        if value < 1:
            raise InvalidInputError(f"{flag} expects whole numbers >= 1, got {value}.")
        out.append(value)
    return out


def time_asks(policy: str, d: int, budget: int, seed: int) -> dict[str, float]:
    """One in-memory study: the median CPU and wall seconds of the asks after the design."""
    import ckb

    opt = ckb.Optimizer(np.zeros(d), np.ones(d), m=2, policy=policy, budget=budget, minimize=True, seed=seed)
    cpu, wall = [], []
    for _ in range(budget):
        c0, w0 = time.process_time(), time.perf_counter()
        x = opt.ask()
        c1, w1 = time.process_time(), time.perf_counter()
        if opt.history()[-1]["source"] != "init":
            cpu.append(c1 - c0)
            wall.append(w1 - w0)
        opt.tell(x, *_problem(x))
    return {"cpu": float(np.median(cpu)), "wall": float(np.median(wall)), "asks": len(cpu)}


def main(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--policies", help="comma-separated optimizer policies (default: every one)")
    parser.add_argument("--dims", default="2,6", help="comma-separated dimensions (default 2,6)")
    parser.add_argument("--budget", type=int, default=30, help="evaluations per study (default 30)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="d = 2 and budget 14 (about 20 s)")
    args = parser.parse_args(argv)
    try:
        from ckb.errors import CKBError, InvalidInputError
        from ckb.optimizer.policies import OPTIMIZER_POLICIES
    except ImportError as exc:  # pragma: no cover - the botorch extra is missing
        return error(f"this benchmark needs ckb's botorch extra ({exc}); pip install -e '.[botorch]'.")
    try:
        policies = names(args.policies, "--policies") or sorted(OPTIMIZER_POLICIES.names())
        for p in policies:
            OPTIMIZER_POLICIES.get(p)  # an unknown name is one line, with the known ones
        dims = [2] if args.quick else _ints(args.dims, "--dims")
        budget = 14 if args.quick else args.budget
        if budget < 2 * max(dims) + 3:
            raise InvalidInputError(
                f"--budget {budget} leaves no ask after the design of 2d + 2 = {2 * max(dims) + 2} points "
                f"at d = {max(dims)}; give at least {2 * max(dims) + 3}."
            )
    except CKBError as exc:
        return error(str(exc))
    start = time.perf_counter()
    rows = []
    for p in policies:
        cells = []
        for d in dims:
            r = time_asks(p, d, budget, args.seed)
            cells.append(f"{r['cpu']:.2f} / {r['wall']:.2f}")
            print(f"  {p} d={d}: {r['asks']} asks, median {cells[-1]} s (CPU / wall)", file=sys.stderr)
        refit = OPTIMIZER_POLICIES.get(p).refit_every
        rows.append(f"| {p} | {refit} | " + " | ".join(cells) + " |")
    head = " | ".join(f"{d}-D" for d in dims)
    print(f"| policy | refit_every | {head} |")
    print("|---|---:|" + "---:|" * len(dims))
    print("\n".join(rows))
    print(f"\nbudget {budget}, m = 2, seed {args.seed}; {time.perf_counter() - start:.0f} s in all.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
