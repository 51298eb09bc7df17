"""Wall time per round of a multi-agent run against the number of agents N, in-process and on Ray.

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

import os
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_limits

from _args import Parser
from ckb._parallel import RaySession
from ckb.errors import CKBError
from ckb.multiagent import MultiAgentTrial, MultiAgentTrialConfig
from ckb.multiagent.coordinator import play_rounds
from ckb.multiagent.methods import build_setup
from ckb.multiagent.problems import make_multiagent_problem


def agent_counts(text: str) -> list[int]:
    """The ``--agents`` list: integers >= 1, each once; ``ValueError`` naming the bad item otherwise."""
    items = [v.strip() for v in text.split(",")]
    sizes = []
    for v in items:
        if not v:
            raise ValueError(f"--agents has an empty item in {text!r}; give comma-separated integers >= 1.")
        try:
            n = int(v)
        except ValueError:
            raise ValueError(
                f"--agents must be comma-separated integers >= 1, got {v!r} in {text!r}."
            ) from None
        if n < 1:
            raise ValueError(f"--agents must be comma-separated integers >= 1, got {n} in {text!r}.")
        if n in sizes:
            raise ValueError(f"--agents names {n} twice in {text!r}; name each number of agents once.")
        sizes.append(n)
    return sizes


def config(problem: str, n: int, rounds: int, grid_size: int | None) -> MultiAgentTrialConfig:
    params = {"n_agents": n}
    if problem == "gp-samples":
        params.update(m=1, grid_size=50)
    if grid_size is not None:
        params["grid_size"] = grid_size
    return MultiAgentTrialConfig(
        algorithm="dmabo",
        method="dmabo",
        problem=problem,
        horizon=rounds,
        seed=0,
        problem_params=params,
    )


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
    ap = Parser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default="1,2,4,8,16,32", help="comma-separated N values")
    ap.add_argument("--rounds", type=int, default=30, help="rounds T per run")
    ap.add_argument("--problem", default="power-allocation", choices=("power-allocation", "gp-samples"))
    ap.add_argument(
        "--grid-size", type=int, default=None, help="points per agent grid (default: the problem's)"
    )
    ap.add_argument("--address", default=None, help="Ray cluster address (default: a local instance)")
    ap.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray instance")
    args = ap.parse_args()
    # everything is checked before Ray starts: each configuration's problem and method are built here
    # (the in-process run builds them again), so a bad size fails now, not after the smaller N's rows
    try:
        sizes = agent_counts(args.agents)
    except ValueError as exc:
        ap.error(str(exc))
    for flag, value, low in (("--rounds", args.rounds, 1), ("--grid-size", args.grid_size, 2)):
        if value is not None and value < low:
            ap.error(f"{flag} must be an integer >= {low}, got {value}.")
    if args.num_cpus is not None and args.num_cpus < 1:
        ap.error(f"--num-cpus must be an integer >= 1, got {args.num_cpus}.")
    if args.address is not None and not args.address.strip():
        ap.error(
            f"--address must be a Ray address such as 'host:6379', 'auto' or 'ray://host:10001', "
            f"got {args.address!r}."
        )
    configs = []
    for n in sizes:
        cfg = config(args.problem, n, args.rounds, args.grid_size)
        try:
            problem = make_multiagent_problem(cfg.problem, cfg.rng(0), **cfg.problem_params)
            build_setup(cfg.method, problem, cfg.method_params, cfg.horizon, cfg.seed, cfg.trial)
        except CKBError as exc:
            ap.error(f"{args.problem} with {n} agent(s): {exc}")
        configs.append(cfg)

    start = time.perf_counter()
    try:
        session = RaySession(args.address, num_cpus=args.num_cpus, what="this benchmark")
        ray = session.start()  # an address with no cluster: an error naming it, before any run
    except CKBError as exc:
        ap.error(str(exc))
    ray_start = time.perf_counter() - start
    cpus = ray.cluster_resources().get("CPU", 0)
    print(
        f"Ray {ray.__version__}: {session.mode} session with {cpus:g} CPUs, started in {ray_start:.2f} s; "
        f"this machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
    )
    grid = f", grid {args.grid_size}" if args.grid_size is not None else ""
    print(f"DMABO on {args.problem}{grid}, T = {args.rounds}; seconds per round = median over rounds 2..T\n")
    header = f"{'N':>4} | {'in-process s/round':>18} | {'Ray s/round':>11} | {'Ray / in-process':>16} | "
    header += f"{'Ray start-up s':>14} | same decisions"
    print(header)
    print("-" * len(header))
    try:
        for n, cfg in zip(sizes, configs):
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
