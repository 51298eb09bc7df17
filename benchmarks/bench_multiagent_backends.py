"""Wall time per round of a multi-agent run against the number of agents N, in-process and on Ray (issue 6).

A round is what :func:`ckb.multiagent.coordinator.play_rounds` times: the coordinator's outgoing prices,
every agent's local step (primal step on its grid, evaluation, GP update), the replies collected and the
coordinator's dual update. In-process the agents run one after the other in this process; on Ray each
agent is an actor (its own process) and the N steps run concurrently on the available cores, at the cost
of 2N messages per round (pickled prices out, proposals back).

Measured, for each N: the median seconds per round over rounds 2..T (round 1 includes first-call
warm-up), the Ray backend's start-up (N actor processes, each importing ckb), and a check that both
backends made identical decisions. Default problem: DMABO on ``power-allocation`` (000 Sec. 5.2:
one affine budget constraint, 101-point grids, the scaling experiment's problem).

Run by hand (not a test): ``python benchmarks/bench_multiagent_backends.py [--agents 1,2,4,8,16,32]
[--rounds 30] [--problem power-allocation|gp-samples] [--grid-size G] [--address ADDR] [--num-cpus C]``.
A local Ray instance gets ``C`` CPUs (default: all cores). Numbers depend on the machine's load: note it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from ckb._parallel import RaySession
from ckb.multiagent import MultiAgentTrial, MultiAgentTrialConfig
from ckb.multiagent.coordinator import play_rounds


def run(cfg: MultiAgentTrialConfig, backend: str) -> dict:
    start = time.perf_counter()
    with MultiAgentTrial(cfg, backend=backend) as trial:
        built = time.perf_counter() - start
        seconds: list[float] = []
        play_rounds(trial.backend, trial.coordinator, cfg.horizon, lambda t, s, _: seconds.append(s))
        logs = trial.backend.call("environment_log", [None] * trial.n_agents)
    index = np.stack([lg.index for lg in logs], axis=1)
    return {"build": built, "per_round": statistics.median(seconds[1:] or seconds), "index": index}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default="1,2,4,8,16,32", help="comma-separated N values")
    ap.add_argument("--rounds", type=int, default=30, help="rounds T per run")
    ap.add_argument("--problem", default="power-allocation", choices=("power-allocation", "gp-samples"))
    ap.add_argument(
        "--grid-size", type=int, default=None, help="points per agent grid (default: the problem's)"
    )
    ap.add_argument("--address", default=None, help="Ray cluster address (default: a local instance)")
    ap.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance")
    args = ap.parse_args()
    sizes = [int(v) for v in args.agents.split(",") if v.strip()]

    session = RaySession(args.address, num_cpus=args.num_cpus, what="this benchmark")
    start = time.perf_counter()
    ray = session.start()
    ray_start = time.perf_counter() - start
    cpus = ray.cluster_resources().get("CPU", 0)
    print(
        f"Ray {ray.__version__}: {session.mode} session with {cpus:g} CPUs, started in {ray_start:.2f} s; "
        f"this machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
    )
    grid = f", grid {args.grid_size}" if args.grid_size else ""
    print(f"DMABO on {args.problem}{grid}, T = {args.rounds}; seconds per round = median over rounds 2..T\n")
    header = f"{'N':>4} | {'in-process s/round':>18} | {'Ray s/round':>11} | {'Ray / in-process':>16} | "
    header += f"{'Ray start-up s':>14} | same decisions"
    print(header)
    print("-" * len(header))
    try:
        for n in sizes:
            params = {"n_agents": n}
            if args.problem == "gp-samples":
                params.update(m=1, grid_size=50)
            if args.grid_size:
                params["grid_size"] = args.grid_size
            cfg = MultiAgentTrialConfig(
                algorithm="dmabo",
                method="dmabo",
                problem=args.problem,
                horizon=args.rounds,
                seed=0,
                problem_params=params,
            )
            with threadpool_limits(1):  # as each Ray actor: one BLAS thread
                local = run(cfg, "inprocess")
            remote = run(cfg, "ray")
            same = np.array_equal(local["index"], remote["index"])
            print(
                f"{n:>4} | {local['per_round']:>18.5f} | {remote['per_round']:>11.5f} | "
                f"{remote['per_round'] / local['per_round']:>16.2f} | {remote['build']:>14.2f} | {same}",
                flush=True,
            )
    finally:
        session.close()


if __name__ == "__main__":
    main()
