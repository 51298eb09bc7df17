r"""Benchmark of the GP engine: per-observation update, per-round proposal, naive baseline, full IGP-UCB.

Run by hand (never as a timed test)::

    python benchmarks/bench_engine.py            # full grid, ~10 minutes on 2 cores
    python benchmarks/bench_engine.py --quick    # reduced grid, under a minute

Everything runs single-threaded (BLAS pinned to one thread with ``threadpoolctl``) so the numbers are
per-core numbers. Tables are printed as markdown and written as JSON (seconds) to
``benchmarks/results/engine.json`` (``engine-quick.json`` with ``--quick``; the directory is gitignored).

What is measured
----------------
1. ``ExactGP.update_arm`` (one observation) against the number of arms ``n`` and the number ``t`` of
   observations already in the model, for ``method="dense"``, ``"cholesky"`` and ``"auto"``: median and
   90th percentile over a window of consecutive updates starting at ``t``. Candidates are ``n`` uniform
   points of [0, 1]^2, SE kernel (lengthscale 0.2), noise λ = 1 (the IGP-UCB default); arms are uniform.
   The model at ``t`` is built directly (one dense factorization of the first ``t`` observations, loaded
   with ``ExactGP.load_state_dict``) instead of by ``t`` updates, which would take hours at large ``t n``;
   a few untimed warm-up updates precede each window (they absorb the one-off buffer growth after a
   load). In dense form the posterior is re-derived every ``refresh_every`` updates
   (``ExactGP.refresh``); a 50-update window never contains one, so its cost is measured separately and
   reported amortized. The one-off cost of ``auto``'s switch from Cholesky to dense (at ``t = n/2``) is
   measured separately too.
2. One round of "observation + proposal": ``update_arm``, then ``mean + beta * std`` over all arms
   (theory beta) and the argmax with random tie-breaking; the argmax is the next round's arm.
3. The naive baseline: every round rebuilds ``K_t + λI``, factorizes it with ``scipy.linalg.cho_factor``
   and computes mean and std at all ``n`` arms with ``cho_solve`` (O(t^3 + t^2 n)), then the same
   UCB argmax. A ``t`` whose predicted round time exceeds 6 s (1 s with ``--quick``) is skipped.
4. IGP-UCB for T = 10,000 rounds on the 100-arm ``rkhs-synthetic`` problem through ``ckb.runner.Trial``
   (wall clock of ``trial.run()``), next to a naive IGP-UCB loop (same problem, environment, random
   streams and beta schedule; posterior refactorized every round) run for as many rounds as the budget
   allows (2,000 rounds), plus single "probe" rounds at larger ``t`` (up to 10,000) on the observations
   of ckb's trial; its total for 10,000 rounds is the measured rounds plus the per-round cost
   interpolated (log-log) between the measured ones.
"""

from __future__ import annotations

import gc
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import scipy
from scipy.linalg import blas, cho_factor, cho_solve, solve_triangular
from threadpoolctl import threadpool_info, threadpool_limits

import ckb
from _args import Parser, out_file_problem
from ckb.exploration import argmax_random_tie, make_beta
from ckb.kernels import SquaredExponential
from ckb.runner.trial import Trial, TrialConfig
from ckb.surrogates import ExactGP, dense_posterior

LAMBDA = 1.0  # GP noise / regularizer (IGP-UCB default)
LENGTHSCALE = 0.2
BETA = dict(B=1.0, R=0.1, alpha=0.05)  # theory schedule, as IGP-UCB with B=1, R=0.1

FULL = dict(
    ns=(100, 300, 1000, 3000),
    ts=(100, 1000, 5000, 10000),
    window=50,
    warmup=3,
    naive_rounds=3,
    naive_limit=6.0,
    trials=3,
    horizon=10_000,
    naive_loop_rounds=2000,
    naive_loop_budget=240.0,
    report_ts=(100, 250, 500, 1000, 1500, 2000),
    probe_ts=(4000, 6000, 8000, 10_000),
)
QUICK = dict(
    ns=(100, 1000),
    ts=(100, 1000, 5000),
    window=20,
    warmup=2,
    naive_rounds=2,
    naive_limit=1.0,
    trials=1,
    horizon=10_000,
    naive_loop_rounds=400,
    naive_loop_budget=10.0,
    report_ts=(100, 200, 400),
    probe_ts=(1000, 2000),
)
CHOL_MEMORY_LIMIT = 2e9  # bytes of V = L^{-1} K_{X,C} (t n 8); combos above are skipped
CHOL_TIME_LIMIT = 60.0  # seconds (estimated build + timed updates); combos above are skipped

T_START = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T_START:7.1f}s] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- machine
def machine_info() -> dict:
    try:
        cfg = np.show_config(mode="dicts")["Build Dependencies"]
        blas_name = f"{cfg['blas']['name']} {cfg['blas'].get('version', '')}".strip()
    except Exception:  # older numpy without mode="dicts"
        blas_name = "unknown"
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "ckb": getattr(ckb, "__version__", "?"),
        "numpy_blas": blas_name,
        "blas_threads": [
            {"api": i.get("internal_api"), "threads": i.get("num_threads"), "lib": Path(i["filepath"]).name}
            for i in threadpool_info()
        ],
    }


# --------------------------------------------------------------------------- model states
def observations(rng: np.random.Generator, C: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Uniform arms and noisy values of a smooth function at them."""
    arms = rng.integers(0, C.shape[0], count)
    x = C[arms]
    y = np.sin(3.0 * x[:, 0]) + np.cos(2.0 * x[:, 1]) + 0.1 * rng.standard_normal(count)
    return arms, y


def cholesky_state(kernel, C: np.ndarray, arms: np.ndarray, y: np.ndarray) -> dict:
    """The ``ExactGP`` Cholesky-form state after observing ``(C[arms], y)``, by one dense factorization."""
    t = arms.shape[0]
    X = C[arms]
    K = kernel(X)
    K[np.diag_indices(t)] += LAMBDA
    L, _ = cho_factor(K, lower=True, overwrite_a=True, check_finite=False)  # upper part is garbage
    del K
    alpha = solve_triangular(L, y, lower=True, check_finite=False)
    V = np.ascontiguousarray(solve_triangular(L, kernel(X, C), lower=True, check_finite=False))
    Lp = np.empty(t * (t + 1) // 2)
    for j in range(t):
        Lp[j * (j + 1) // 2 : (j + 1) * (j + 2) // 2] = L[j, : j + 1]
    # L_jj^2 = sigma^2_{j-1}(x_j) + lambda, so the accumulated information gain is sum ln(L_jj / sqrt(lambda))
    info_gain = float(np.sum(np.log(np.diagonal(L))) - 0.5 * t * math.log(LAMBDA))
    del L
    return {
        "t": t,
        "mode": "cholesky",
        "info_gain": info_gain,
        "since_refresh": 0,
        "X": X,
        "y": y.copy(),
        "arms": arms.copy(),
        "Lp": Lp,
        "alpha": alpha,
        "mean": V.T @ alpha,
        "var": kernel.diag(C) - np.einsum("ij,ij->j", V, V),
        "V": V,
    }


def dense_state(kernel, C: np.ndarray, arms: np.ndarray, y: np.ndarray) -> dict:
    """The dense-form state from sufficient statistics (as ``ExactGP.refresh``): O(n^3), independent of t.

    Information gain is order-free: ½ ln det(I + K_t/λ) = ½ ln det(λ D⁻¹ + K_AA) + ½ Σ ln m_a - ½|A| ln λ.
    """
    n = C.shape[0]
    K = kernel(C)
    counts = np.bincount(arms, minlength=n).astype(float)
    sums = np.bincount(arms, weights=y, minlength=n)
    A = np.flatnonzero(counts)
    m = counts[A]
    S = K[np.ix_(A, A)] + np.diag(LAMBDA / m)
    Lc, _ = cho_factor(S, lower=True, overwrite_a=True, check_finite=False)
    W = solve_triangular(Lc, K[A, :], lower=True, check_finite=False)
    cov = np.asfortranarray(K)
    cov -= W.T @ W
    mean = W.T @ solve_triangular(Lc, sums[A] / m, lower=True, check_finite=False)
    info_gain = float(
        np.sum(np.log(np.diagonal(Lc))) + 0.5 * np.sum(np.log(m)) - 0.5 * A.size * math.log(LAMBDA)
    )
    return {
        "t": arms.shape[0],
        "mode": "dense",
        "info_gain": info_gain,
        "since_refresh": 0,
        "X": C[arms],
        "y": y.copy(),
        "arms": arms.copy(),
        "mean": mean,
        "cov": cov,
    }


def loaded_gp(kernel, C: np.ndarray, method: str, state: dict) -> ExactGP:
    gp = ExactGP(kernel, LAMBDA, C, method=method)
    gp.load_state_dict(state)
    return gp


def self_check() -> None:
    """The built states must equal the incrementally updated model (guards the harness, not the engine)."""
    rng = np.random.default_rng(7)
    kernel = SquaredExponential(LENGTHSCALE)
    C = rng.random((40, 2))
    arms, y = observations(rng, C, 90)
    ref = ExactGP(kernel, LAMBDA, C, method="cholesky")
    for a, v in zip(arms, y):
        ref.update_arm(a, v)
    mean, cov = dense_posterior(kernel, LAMBDA, C[arms], y, C)
    for method, state in (
        ("cholesky", cholesky_state(kernel, C, arms, y)),
        ("dense", dense_state(kernel, C, arms, y)),
    ):
        gp = loaded_gp(kernel, C, method, state)
        ok = (
            np.allclose(gp.mean, mean, atol=1e-8)
            and np.allclose(gp.var, np.diagonal(cov), atol=1e-8)
            and math.isclose(gp.info_gain, ref.info_gain, rel_tol=1e-8)
        )
        if not ok:
            raise RuntimeError(f"benchmark harness: the built {method} state does not match the reference")


# --------------------------------------------------------------------------- timing helpers
def stats(samples) -> dict:
    a = np.asarray(samples, dtype=float)
    return {
        "median": float(np.median(a)),
        "p90": float(np.percentile(a, 90)),
        "mean": float(a.mean()),
        "max": float(a.max()),
        "count": int(a.size),
    }


def time_updates(gp: ExactGP, arms, ys, warmup: int, window: int) -> tuple[np.ndarray, int]:
    """Seconds of each of ``window`` consecutive ``update_arm`` calls after ``warmup`` untimed ones."""
    for i in range(warmup):
        gp.update_arm(arms[i], ys[i])
    t_start = gp.t
    out = np.empty(window)
    gc.disable()
    try:
        for i in range(window):
            a, v = arms[warmup + i], ys[warmup + i]
            t0 = time.perf_counter()
            gp.update_arm(a, v)
            out[i] = time.perf_counter() - t0
    finally:
        gc.enable()
    return out, t_start


def time_rounds(gp: ExactGP, first_arm: int, ys, warmup: int, window: int, rng) -> tuple[np.ndarray, int]:
    """Seconds of observation + UCB proposal rounds; the proposed arm is observed next round."""
    beta = make_beta("theory", **BETA)
    arm = int(first_arm)
    out = np.empty(warmup + window)
    t_start = gp.t + warmup
    gc.disable()
    try:
        for i in range(warmup + window):
            t0 = time.perf_counter()
            gp.update_arm(arm, ys[i])
            ucb = gp.mean + beta(gp.t + 1, gp) * gp.std
            arm = argmax_random_tie(ucb, rng)
            out[i] = time.perf_counter() - t0
    finally:
        gc.enable()
    return out[warmup:], t_start


def naive_posterior(kernel, X, y, C, kdiag):
    """Mean and std at all candidates from scratch; returns them and (factor, rest) seconds."""
    t0 = time.perf_counter()
    K = kernel(X)
    K[np.diag_indices(X.shape[0])] += LAMBDA
    cf = cho_factor(K, lower=True, overwrite_a=True, check_finite=False)
    t1 = time.perf_counter()
    Kc = kernel(X, C)
    mean = Kc.T @ cho_solve(cf, y, check_finite=False)
    sol = cho_solve(cf, Kc, check_finite=False)
    var = kdiag - np.einsum("ij,ij->j", Kc, sol)
    t2 = time.perf_counter()
    return mean, np.sqrt(np.maximum(var, 0.0)), t1 - t0, t2 - t1


def calibrate() -> dict:
    """Single-core rates used to predict the cost of a Cholesky combo before building it."""
    rng = np.random.default_rng(0)
    m = 1500
    A = rng.standard_normal((m, m))
    A = A @ A.T + m * np.eye(m)
    t0 = time.perf_counter()
    cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    flops = m**3 / 3 / (time.perf_counter() - t0)
    t = 3000
    Lp = np.ones(t * (t + 1) // 2)
    Lp[np.arange(t) * (np.arange(t) + 3) // 2] = 10.0 * t  # dominant diagonal
    b = rng.standard_normal(t)
    t0 = time.perf_counter()
    for _ in range(5):
        blas.dtpsv(t, Lp, b, lower=0, trans=1)
    bandwidth = 5 * 8 * Lp.size / (time.perf_counter() - t0)
    return {"flops_per_s": flops, "bytes_per_s": bandwidth}


def predict_cholesky_seconds(n: int, t: int, updates: int, rates: dict) -> float:
    build = (t**3 / 3 + t * t * n) / rates["flops_per_s"]
    per_update = 8 * (t * t / 2 + 2 * t * n) / rates["bytes_per_s"]
    return build + updates * per_update


# --------------------------------------------------------------------------- sections 1-3
def bench_gp(cfg: dict, rates: dict) -> dict:
    kernel = SquaredExponential(LENGTHSCALE)
    W, w0 = cfg["window"], cfg["warmup"]
    upd, rnd, naive, refresh, switch, skipped = [], [], [], [], [], []
    for n in cfg["ns"]:
        rng = np.random.default_rng(1000 + n)
        C = rng.random((n, 2))
        kdiag = kernel.diag(C)
        t_max = max(cfg["ts"])
        arms, ys = observations(rng, C, t_max + 2 * (w0 + W) + cfg["naive_rounds"])

        # one-off cost of auto's switch to the dense form (the update that makes 2 t reach n)
        ts = (n + 1) // 2
        st = cholesky_state(kernel, C, arms[: ts - 1], ys[: ts - 1])
        gp = loaded_gp(kernel, C, "auto", st)
        t0 = time.perf_counter()
        gp.update_arm(arms[ts - 1], ys[ts - 1])
        sw = time.perf_counter() - t0
        assert gp.mode == "dense"
        switch.append({"n": n, "seconds": sw})
        log(f"n={n}: auto switch at t=n/2 takes {sw * 1e3:.1f} ms")
        del st, gp

        prev_naive = None  # (t, factor seconds, rest seconds) of the last naive measurement
        for t in cfg["ts"]:
            t_build = t - w0  # the timed window starts at t
            a_b, y_b = arms[:t_build], ys[:t_build]
            a_w, y_w = arms[t_build:], ys[t_build:]
            dense = dense_state(kernel, C, a_b, y_b)
            chol = None
            mem = 8.0 * t * n
            est = predict_cholesky_seconds(n, t, 2 * (w0 + W), rates)
            if mem > CHOL_MEMORY_LIMIT or est > CHOL_TIME_LIMIT:
                reason = (
                    f"V needs {mem / 1e9:.1f} GB" if mem > CHOL_MEMORY_LIMIT else f"~{est:.0f} s predicted"
                )
                skipped.append({"section": "cholesky", "n": n, "t": t, "reason": reason})
                log(f"n={n} t={t}: cholesky skipped ({reason})")
            else:
                tb = time.perf_counter()
                chol = cholesky_state(kernel, C, a_b, y_b)
                log(f"n={n} t={t}: cholesky state built in {time.perf_counter() - tb:.1f} s")
            states = {"dense": dense, "cholesky": chol}
            auto_mode = "dense" if t_build >= n else "cholesky"
            states["auto"] = dense if auto_mode == "dense" else chol
            for method in ("dense", "cholesky", "auto"):
                state = states[method]
                if state is None:
                    continue
                gp = loaded_gp(kernel, C, method, state)
                s, ts = time_updates(gp, a_w, y_w, w0, W)
                upd.append({"n": n, "t": t, "t_start": ts, "method": method, "mode": gp.mode, **stats(s)})
                gp = loaded_gp(kernel, C, method, state)
                s, ts = time_rounds(gp, a_w[0], y_w, w0, W, np.random.default_rng(n + t))
                rnd.append({"n": n, "t": t, "t_start": ts, "method": method, "mode": gp.mode, **stats(s)})
                log(
                    f"n={n} t={t} {method:8s} ({gp.mode}): update {upd[-1]['median'] * 1e3:.3f} ms, "
                    f"round {rnd[-1]['median'] * 1e3:.3f} ms (median)"
                )
                del gp
            # dense refresh (every refresh_every updates), amortized
            gp = loaded_gp(kernel, C, "dense", dense)
            t0 = time.perf_counter()
            gp.refresh()
            rs = time.perf_counter() - t0
            refresh.append(
                {
                    "n": n,
                    "t": t,
                    "seconds": rs,
                    "every": gp.refresh_every,
                    "amortized": rs / gp.refresh_every,
                    "distinct_arms": int(np.unique(a_b).size),
                }
            )
            del gp, dense, chol, states

            # naive baseline: refactorize every round
            if prev_naive is not None:
                tp, fp, rp = prev_naive
                # factorization: cubic scaling of the last one, or the calibrated rate (small factorizations
                # run below peak, so scaling them overestimates); solves and kernel: t^2 n scaling
                factor = min(fp * (t / tp) ** 3, t**3 / 3 / rates["flops_per_s"])
                pred = factor + rp * (t / tp) ** 2
            else:
                pred = 0.0
            if pred > cfg["naive_limit"]:
                skipped.append(
                    {"section": "naive", "n": n, "t": t, "reason": f"~{pred:.0f} s per round predicted"}
                )
                log(f"n={n} t={t}: naive skipped (~{pred:.1f} s per round predicted)")
                continue
            k = cfg["naive_rounds"]
            X = np.empty((t + k, 2))
            X[:t] = C[arms[:t]]
            yv = np.empty(t + k)
            yv[:t] = ys[:t]
            beta = make_beta("theory", **BETA)(t + 1, SimpleNamespace(info_gain=0.0))
            nrng = np.random.default_rng(n * t)
            secs, fac, rest = [], [], []
            for r in range(k):
                m = t + r
                t0 = time.perf_counter()
                mean, std, f_s, r_s = naive_posterior(kernel, X[:m], yv[:m], C, kdiag)
                arm = argmax_random_tie(mean + beta * std, nrng)
                secs.append(time.perf_counter() - t0)
                fac.append(f_s)
                rest.append(r_s)
                X[m] = C[arm]
                yv[m] = ys[t + r]
            prev_naive = (t, float(np.median(fac)), float(np.median(rest)))
            naive.append(
                {
                    "n": n,
                    "t": t,
                    **stats(secs),
                    "factor_median": prev_naive[1],
                    "solve_median": prev_naive[2],
                }
            )
            log(f"n={n} t={t}: naive round {np.median(secs):.3f} s (median of {k})")
    return {
        "update": upd,
        "round": rnd,
        "naive": naive,
        "dense_refresh": refresh,
        "auto_switch": switch,
        "skipped": skipped,
    }


# --------------------------------------------------------------------------- section 4
def trial_config(k: int, horizon: int) -> TrialConfig:
    return TrialConfig(
        algorithm="igp-ucb",
        policy="igp-ucb",
        problem="rkhs-synthetic",
        horizon=horizon,
        trial=k,
        seed=0,
        policy_params={"B": 1.0, "R": 0.1},
        problem_params={"constraint": "neg-f-plus-h"},
    )


def bench_igp_ucb(cfg: dict) -> dict:
    T = cfg["horizon"]
    trials = []
    trace0 = y0 = None
    for k in range(cfg["trials"]):
        t0 = time.perf_counter()
        trial = Trial(trial_config(k, T))
        t1 = time.perf_counter()
        trace = trial.run()
        t2 = time.perf_counter()
        policy_s = trace.seconds
        trials.append(
            {
                "trial": k,
                "setup_seconds": t1 - t0,
                "run_seconds": t2 - t1,
                "seconds_per_round": (t2 - t1) / T,
                "policy_seconds": float(policy_s.sum()),
                "policy_round_median": float(np.median(policy_s)),
                "policy_round_p90": float(np.percentile(policy_s, 90)),
                "final_mode": trial.policy.gp.mode,
            }
        )
        if k == 0:
            trace0 = trace.index.copy()
            y0 = trial.problem.sign * trace.y  # the observations as the policy was told them
        log(f"IGP-UCB trial {k}: run() {t2 - t1:.3f} s for T={T} ({(t2 - t1) / T * 1e6:.1f} µs/round)")

    # naive IGP-UCB on the same problem, environment and random streams
    config = trial_config(0, T)
    trial = Trial(config)  # fresh problem instance and environment, identical to trial 0's
    env, info = trial.env, trial.problem.info()
    C, kernel = info.domain.candidates, info.kernel
    kdiag = kernel.diag(C)
    rng = config.rng(2)  # the policy's stream: same tie-breaking draws as IGPUCB
    schedule = make_beta("theory", **BETA)
    R = cfg["naive_loop_rounds"]
    X = np.empty((R, C.shape[1]))
    y = np.empty(R)
    gain = 0.0
    secs, arms = [], []
    start = time.perf_counter()
    for r in range(R):
        t0 = time.perf_counter()
        if r == 0:
            mean, std = np.zeros(C.shape[0]), np.sqrt(kdiag)
        else:
            mean, std, _, _ = naive_posterior(kernel, X[:r], y[:r], C, kdiag)
        beta = schedule(r + 1, SimpleNamespace(info_gain=gain))
        arm = argmax_random_tie(mean + beta * std, rng)
        outcome = env.step(arm)
        (obs,) = env.deliver(outcome)
        gain += 0.5 * math.log1p(std[arm] ** 2 / LAMBDA)
        X[r] = C[arm]
        y[r] = obs.y
        secs.append(time.perf_counter() - t0)
        arms.append(arm)
        if time.perf_counter() - start > cfg["naive_loop_budget"]:
            break
    done = len(secs)
    secs_a = np.asarray(secs)
    log(f"naive IGP-UCB: {done} rounds in {secs_a.sum():.1f} s")
    same = np.asarray(arms) == trace0[:done]
    first_diff = int(np.argmin(same)) + 1 if not same.all() else None
    at_t = []
    for t in cfg["report_ts"]:
        lo, hi = max(0, t - 10), min(done, t + 10)
        if hi - lo >= 5 and t <= done:
            at_t.append({"t": t, "seconds_per_round": float(np.median(secs_a[lo:hi]))})
    # probes: one naive round at larger t, on the data ckb's trial 0 observed (same arms as this loop)
    probes = []
    for t in cfg["probe_ts"]:
        if t <= done or t > T:
            continue
        t0 = time.perf_counter()
        mean, std, _, _ = naive_posterior(kernel, C[trace0[:t]], y0[:t], C, kdiag)
        argmax_random_tie(mean + schedule(t + 1, SimpleNamespace(info_gain=gain)) * std, rng)
        probes.append({"t": t, "seconds_per_round": time.perf_counter() - t0})
        log(f"naive IGP-UCB probe at t={t}: {probes[-1]['seconds_per_round']:.2f} s")
    # total for T rounds: measured rounds + log-log linear interpolation between anchors (medians of
    # 100-round bins of the loop, then the probes), extrapolated past the last anchor along its slope
    bins = [(b + 50, float(np.median(secs_a[b : b + 100]))) for b in range(100, done - 99, 100)]
    anchors = np.array(bins + [(p["t"], p["seconds_per_round"]) for p in probes])
    rest = np.arange(done, T, dtype=float)
    est = 0.0
    if rest.size and len(anchors) < 2:
        est = float("nan")
    elif rest.size:
        lt, lc = np.log(anchors[:, 0]), np.log(anchors[:, 1])
        slope = (lc[-1] - lc[-2]) / (lt[-1] - lt[-2])
        lr = np.log(np.maximum(rest, 1.0))
        pred = np.interp(lr, lt, lc)
        beyond = lr > lt[-1]
        pred[beyond] = lc[-1] + slope * (lr[beyond] - lt[-1])
        est = float(np.exp(pred).sum())
    ckb_runs = [r["run_seconds"] for r in trials]
    return {
        "horizon": T,
        "trials": trials,
        "ckb_run_median": float(np.median(ckb_runs)),
        "naive": {
            "rounds": done,
            "seconds": float(secs_a.sum()),
            "per_round_at_t": at_t,
            "probes": probes,
            "estimated_total_seconds": float(secs_a.sum()) + est,
            "extrapolated_beyond_t": int(anchors[-1, 0]) if rest.size else None,
            "same_arms_as_ckb_trial0": int(same.sum()),
            "first_different_round": first_diff,
        },
    }


# --------------------------------------------------------------------------- tables
def ms(x: float) -> str:
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_s(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.3g} ms"
    return f"{x * 1e6:.3g} µs"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def gp_table(rows: list[dict], refresh: list[dict] | None, skipped: list[dict], cfg: dict) -> str:
    by = {(r["n"], r["t"], r["method"]): r for r in rows}
    ref = {(r["n"], r["t"]): r for r in refresh or []}
    header = ["n", "t", "dense", "cholesky", "auto"]
    if refresh is not None:
        header.append("dense refresh, amortized")
    out = []
    for n in cfg["ns"]:
        for t in cfg["ts"]:
            row = [str(n), f"{t:,}"]
            for method in ("dense", "cholesky", "auto"):
                r = by.get((n, t, method))
                if r is None:
                    row.append("skipped")
                    continue
                cell = f"{ms(r['median'] * 1e3)} / {ms(r['p90'] * 1e3)}"
                if method == "auto":
                    cell += f" ({r['mode']})"
                row.append(cell)
            if refresh is not None:
                f = ref[(n, t)]
                row.append(f"{ms(f['amortized'] * 1e3)} ({fmt_s(f['seconds'])} every {f['every']:,})")
            out.append(row)
    return md_table(header, out)


def report(res: dict, cfg: dict) -> str:
    g, ig = res["gp"], res["igp_ucb"]
    W = cfg["window"]
    parts = []
    m = res["machine"]
    parts.append(
        f"Machine: {m['cpu']}, {m['cpu_count']} CPUs; numpy {m['numpy']} / scipy {m['scipy']}, "
        f"BLAS {m['numpy_blas']}, pinned to 1 thread; Python {m['python']}."
    )
    parts.append(
        f"\n**1. Per-observation update** (`ExactGP.update_arm`), milliseconds, median / p90 over {W} "
        "consecutive updates starting at t (SE kernel, n uniform points of [0,1]^2, λ = 1). "
        "Last column: the dense form's periodic `refresh()` cost spread over its period.\n"
    )
    parts.append(gp_table(g["update"], g["dense_refresh"], g["skipped"], cfg))
    parts.append(
        f"\n**2. Observation + proposal per round** (update, `mean + beta * std`, argmax), milliseconds, "
        f"median / p90 over {W} rounds.\n"
    )
    parts.append(gp_table(g["round"], None, g["skipped"], cfg))
    parts.append("\n`auto`'s one-off switch to the dense form (the update at which t reaches n/2):\n")
    parts.append(md_table(["n", "switch"], [[str(s["n"]), fmt_s(s["seconds"])] for s in g["auto_switch"]]))
    parts.append(
        "\n**3. Naive baseline**: refactorize `K_t + λI` (`cho_factor`) and `cho_solve` for mean/std at all "
        f"n arms every round, median of {cfg['naive_rounds']} rounds, next to `auto`'s round (table 2).\n"
    )
    auto_round = {(r["n"], r["t"]): r for r in g["round"] if r["method"] == "auto"}
    naive_by = {(r["n"], r["t"]): r for r in g["naive"]}
    rows = []
    for n in cfg["ns"]:
        for t in cfg["ts"]:
            r = naive_by.get((n, t))
            a = auto_round.get((n, t))
            if r is None:
                rows.append([str(n), f"{t:,}", "skipped", "", "", fmt_s(a["median"]) if a else "", ""])
                continue
            rows.append(
                [
                    str(n),
                    f"{t:,}",
                    fmt_s(r["median"]),
                    fmt_s(r["factor_median"]),
                    fmt_s(r["solve_median"]),
                    fmt_s(a["median"]) if a else "",
                    f"{r['median'] / a['median']:,.0f}x" if a else "",
                ]
            )
    parts.append(
        md_table(
            ["n", "t", "naive round", "of which factor", "of which solves", "ckb auto round", "speed-up"],
            rows,
        )
    )
    sk = g["skipped"]
    parts.append(
        "\nSkipped: "
        + ("; ".join(f"{s['section']} n={s['n']} t={s['t']:,} ({s['reason']})" for s in sk) if sk else "none")
        + "."
    )
    T = ig["horizon"]
    parts.append(
        f"\n**4. IGP-UCB, T = {T:,} rounds, 100-arm `rkhs-synthetic`** (`Trial.run()` wall clock; policy = "
        "ask + tell time recorded by the trace).\n"
    )
    rows = [
        [
            str(r["trial"]),
            fmt_s(r["run_seconds"]),
            fmt_s(r["seconds_per_round"]),
            fmt_s(r["policy_seconds"]),
            fmt_s(r["policy_round_median"]),
            r["final_mode"],
        ]
        for r in ig["trials"]
    ]
    parts.append(
        md_table(
            ["trial", "run()", "per round", "policy total", "policy per round (median)", "GP form"], rows
        )
    )
    nv = ig["naive"]
    parts.append(
        f"\nNaive IGP-UCB (same problem, noise stream and tie-breaking stream; posterior refactorized "
        f"every round): {nv['rounds']:,} rounds in {fmt_s(nv['seconds'])}; it chose the same arm as ckb's "
        f"trial 0 in {nv['same_arms_as_ckb_trial0']:,} of them.\n"
    )
    ckb_round = ig["ckb_run_median"] / T
    rows = [
        [f"{p['t']:,}", fmt_s(p["seconds_per_round"]), f"{p['seconds_per_round'] / ckb_round:,.0f}x"]
        for p in nv["per_round_at_t"]
    ]
    parts.append(md_table(["t", "naive s/round", "vs ckb mean round"], rows))
    if nv["probes"]:
        parts.append("\nSingle naive rounds at larger t (on the observations of ckb's trial 0):\n")
        parts.append(
            md_table(
                ["t", "naive s/round", "vs ckb mean round"],
                [
                    [
                        f"{p['t']:,}",
                        fmt_s(p["seconds_per_round"]),
                        f"{p['seconds_per_round'] / ckb_round:,.0f}x",
                    ]
                    for p in nv["probes"]
                ],
            )
        )
    how = "measured rounds, then per-round cost interpolated (log-log) between 100-round bins and the probes"
    if nv["extrapolated_beyond_t"] is not None and nv["extrapolated_beyond_t"] < T - 1:
        how += f", extrapolated past t = {nv['extrapolated_beyond_t']:,}"
    parts.append(
        f"\nT = {T:,} total: ckb {fmt_s(ig['ckb_run_median'])} (median over {len(ig['trials'])} trials); "
        f"naive ≈ {fmt_s(nv['estimated_total_seconds'])} (= {nv['estimated_total_seconds'] / 3600:.1f} h; {how})."
    )
    return "\n".join(parts)


# --------------------------------------------------------------------------- main
def main(argv=None) -> None:
    parser = Parser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="reduced grid (under a minute)")
    parser.add_argument(
        "--output", type=Path, default=None, help="JSON path, a new file (default: benchmarks/results/)"
    )
    args = parser.parse_args(argv)
    cfg = dict(QUICK if args.quick else FULL)
    out = args.output or Path(__file__).resolve().parent / "results" / (
        "engine-quick.json" if args.quick else "engine.json"
    )
    problem = out_file_problem(
        out, "--output" if args.output is not None else "the output", args.output is not None
    )
    if problem is not None:
        parser.error(problem)
    with threadpool_limits(limits=1):
        res = {"config": {**cfg, "lambda": LAMBDA, "lengthscale": LENGTHSCALE, "quick": args.quick}}
        res["machine"] = machine_info()
        log(f"machine: {res['machine']}")
        self_check()
        rates = calibrate()
        res["calibration"] = rates
        log(f"calibration: {rates['flops_per_s'] / 1e9:.1f} GFLOP/s, {rates['bytes_per_s'] / 1e9:.1f} GB/s")
        res["gp"] = bench_gp(cfg, rates)
        res["igp_ucb"] = bench_igp_ucb(cfg)
    res["total_seconds"] = time.perf_counter() - T_START
    text = report(res, cfg)
    text += f"\n\nTotal benchmark time: {res['total_seconds']:.0f} s."
    res["markdown"] = text
    print(text)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
