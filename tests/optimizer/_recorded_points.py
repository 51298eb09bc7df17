"""Asked points of ``ckb.Optimizer`` recorded bit for bit, per numerical platform, so that refactors that
must not change what the optimizer asks are checked exactly.

The optimizer's maximizer (L-BFGS-B from many starts) amplifies last-bit differences between CPUs' linear
algebra kernels into differences of 1e-4 and more in the asked points, so a recording holds on the
platform it was made on. :func:`platform_key` fingerprints the platform (the bits of a small GP fit and
posterior); :data:`PLATFORMS` holds the recordings of known fingerprints, :data:`LEGACY` the first
recording, made on a platform whose fingerprint was not taken. :func:`check` compares exactly with the
platform's recording when the fingerprint is known; on an unknown platform it compares with the legacy
recording and skips, naming the fingerprint, when the points differ (a platform difference cannot be
told from a regression there). Record this platform on a commit known to be good with
``python -m tests.optimizer._recorded_points`` and add the printed entry to :data:`PLATFORMS`.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import ckb
from ckb.optimizer import initial_design
from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS

#: the first recording (float.hex): ``core/POLICY``, the policy picks after the 6-point Sobol design of
#: :func:`core_points` (recorded before the optimizer was split into a study object and the decision code);
#: ``benchmark/PROBLEM/POLICY``, the asks after the design of :func:`benchmark_points` (recorded before
#: outcome transforms, a violation budget, user designs, exact evaluations and numerics capture existed)
LEGACY = {
    "core/ckb-ucb": [
        ("0x1.0000000000000p+0", "0x1.971cc43fa5ca8p-3"),
        ("0x1.b7b9dd529c3d8p-3", "-0x1.c97371dcaa4d0p-5"),
        ("0x1.52b5144fef690p-3", "-0x1.ba4b7368b86f0p-4"),
        ("0x1.0e538c83830c0p-2", "-0x1.e15618505f900p-4"),
    ],
    "core/cei": [
        ("0x1.6780988684250p-2", "-0x1.65c0aee0aa230p-4"),
        ("0x1.eea96e6b83868p-3", "-0x1.965ee4b5758b0p-4"),
        ("0x1.87fd0226564b8p-2", "-0x1.e765ae853fe40p-5"),
        ("0x1.05cb29075828cp-2", "-0x1.b00888bdae690p-4"),
    ],
    "benchmark/gramacy/ckb-ucb": [
        ("0x0.0p+0", "0x0.0p+0"),
        ("0x0.0p+0", "0x0.0p+0"),
        ("0x1.cdd636486f586p-2", "0x0.0p+0"),
        ("0x0.0p+0", "0x0.0p+0"),
        ("0x1.261003f1d6527p-2", "0x1.0000000000000p+0"),
        ("0x0.0p+0", "0x0.0p+0"),
    ],
    "benchmark/gramacy/cei": [
        ("0x1.20849a60b4fb1p-2", "0x1.6da0a5ff82593p-4"),
        ("0x0.0p+0", "0x0.0p+0"),
        ("0x0.0p+0", "0x1.84854f73efde6p-2"),
        ("0x0.0p+0", "0x1.ce4a9289b9a0cp-2"),
        ("0x1.637efa389492cp-3", "0x1.8198ca9cdae9fp-2"),
        ("0x1.7fe2a29eba2b9p-3", "0x1.96b40e96be894p-2"),
    ],
    "benchmark/tension-spring/cei": [
        ("0x1.999999999999ap-5", "0x1.0000000000000p-2", "0x1.e000000000000p+3"),
        ("0x1.0000000000000p+1", "0x1.0000000000000p-2", "0x1.e000000000000p+3"),
        ("0x1.f1660b74b84c2p-1", "0x1.c2035bd5f11c9p-2", "0x1.0000000000000p+1"),
        ("0x1.999999999999ap-5", "0x1.4cccccccccccdp+0", "0x1.58721f4942ad1p+3"),
        ("0x1.0b6862a3fa43dp-1", "0x1.e2782e453e884p-2", "0x1.2d28ca7de89bcp+3"),
        ("0x1.fef6c5a7d2befp-2", "0x1.0962103a6bb71p-1", "0x1.30504ab2b15bcp+3"),
    ],
    "benchmark/welded-beam/ckb-ucb": [
        ("0x1.1cd793eb079f8p+0", "0x1.999999999999ap-4", "0x1.999999999999ap-4", "0x1.999999999999ap-4"),
        ("0x1.999999999999ap-4", "0x1.3f81044152041p+3", "0x1.999999999999ap-4", "0x1.0000000000000p+1"),
        ("0x1.2b4d8e4555ea4p+0", "0x1.999999999999ap-4", "0x1.4000000000000p+3", "0x1.999999999999ap-4"),
        ("0x1.999999999999ap-4", "0x1.999999999999ap-4", "0x1.999999999999ap-4", "0x1.0000000000000p+1"),
        ("0x1.999999999999ap-4", "0x1.26bc2a06a1241p+3", "0x1.999999999999ap-4", "0x1.ce7587c57fe77p-1"),
        ("0x1.999999999999ap-4", "0x1.61250c88602d2p+0", "0x1.4000000000000p+3", "0x1.999999999999ap-4"),
    ],
}

#: recordings of the same runs on other platforms, by :func:`platform_key` (each made on a commit whose
#: points equal the legacy recording on the legacy platform)
PLATFORMS: dict[str, dict[str, list[tuple[str, ...]]]] = {
    "6640843834283bf4": {  # AMD EPYC, numpy 2.4.6, scipy 1.17.1, torch 2.13.0, botorch 0.18.1
        "benchmark/gramacy/cei": [
            ("0x1.20849a60af404p-2", "0x1.6da0a5ff704a7p-4"),
            ("0x0.0p+0", "0x0.0p+0"),
            ("0x0.0p+0", "0x1.84854f3f925c5p-2"),
            ("0x0.0p+0", "0x1.ce4a92b5a59a5p-2"),
            ("0x1.637efa648494ap-3", "0x1.8198caa6fae81p-2"),
            ("0x1.7fe2a2b81a570p-3", "0x1.96b40e9237de9p-2"),
        ],
        "benchmark/gramacy/ckb-ucb": [
            ("0x0.0p+0", "0x0.0p+0"),
            ("0x0.0p+0", "0x0.0p+0"),
            ("0x1.cdd63633b0439p-2", "0x0.0p+0"),
            ("0x0.0p+0", "0x0.0p+0"),
            ("0x1.261003fe35f67p-2", "0x1.0000000000000p+0"),
            ("0x0.0p+0", "0x0.0p+0"),
        ],
        "benchmark/tension-spring/cei": [
            ("0x1.999999999999ap-5", "0x1.0000000000000p-2", "0x1.e000000000000p+3"),
            ("0x1.0000000000000p+1", "0x1.0000000000000p-2", "0x1.e000000000000p+3"),
            ("0x1.f1660b6fe4ef0p-1", "0x1.c2035847eae20p-2", "0x1.0000000000000p+1"),
            ("0x1.999999999999ap-5", "0x1.4cccccccccccdp+0", "0x1.587222f07896ep+3"),
            ("0x1.0b6979db864a2p-1", "0x1.e27bbcc50fa34p-2", "0x1.2d28b28861594p+3"),
            ("0x1.fefabee367bb2p-2", "0x1.096277f83ca88p-1", "0x1.304feaaa3e6aep+3"),
        ],
        "benchmark/welded-beam/ckb-ucb": [
            ("0x1.1cd7940d8f417p+0", "0x1.999999999999ap-4", "0x1.999999999999ap-4", "0x1.999999999999ap-4"),
            ("0x1.999999999999ap-4", "0x1.3f8048e061bd5p+3", "0x1.999999999999ap-4", "0x1.0000000000000p+1"),
            ("0x1.2b4e64edc0c4dp+0", "0x1.999999999999ap-4", "0x1.4000000000000p+3", "0x1.999999999999ap-4"),
            ("0x1.999999999999ap-4", "0x1.999999999999ap-4", "0x1.999999999999ap-4", "0x1.0000000000000p+1"),
            ("0x1.999999999999ap-4", "0x1.26b6ccfde9d36p+3", "0x1.999999999999ap-4", "0x1.ce7d216a0422dp-1"),
            ("0x1.999999999999ap-4", "0x1.614144528dc2dp+0", "0x1.4000000000000p+3", "0x1.999999999999ap-4"),
        ],
        "core/cei": [
            ("0x1.678097a432af0p-2", "-0x1.65c0ab79b83c8p-4"),
            ("0x1.eea96e8e989b8p-3", "-0x1.965ee5a74b048p-4"),
            ("0x1.87fcff1ea7780p-2", "-0x1.e765aa4675350p-5"),
            ("0x1.05cb283e96a8cp-2", "-0x1.b0088aca90100p-4"),
        ],
        "core/ckb-ucb": [
            ("0x1.0000000000000p+0", "0x1.971cc43fa5c98p-3"),
            ("0x1.b7b9dd529c498p-3", "-0x1.c97371dcaa590p-5"),
            ("0x1.52e25a3b51d80p-3", "-0x1.ba143a14c2148p-4"),
            ("0x1.0e491b8a63d38p-2", "-0x1.e170bc2375330p-4"),
        ],
    },
}

_KEY: str | None = None


def platform_key() -> str:
    """A fingerprint of the platform's floating point: the bits of a small fitted GP's posterior."""
    global _KEY
    if _KEY is None:
        import torch
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from gpytorch.mlls import ExactMarginalLogLikelihood

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as ckb.Optimizer's asks run (torch_threads = 1)
        g = torch.Generator().manual_seed(0)
        X = torch.rand(24, 3, generator=g, dtype=torch.float64)
        Y = torch.sin(6.0 * X).sum(-1, keepdim=True)
        with torch.random.fork_rng():
            torch.manual_seed(0)
            model = SingleTaskGP(X, (Y - Y.mean()) / Y.std())
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            with torch.no_grad():
                post = model.posterior(torch.rand(8, 3, generator=g, dtype=torch.float64))
                bits = torch.cat([post.mean.reshape(-1), post.variance.reshape(-1)]).numpy().tobytes()
        torch.set_num_threads(threads)
        _KEY = hashlib.sha256(bits).hexdigest()[:16]
    return _KEY


def _unhex(rows) -> np.ndarray:
    return np.array([[float.fromhex(v) for v in row] for row in rows])


def _hex(points) -> list[tuple[str, ...]]:
    return [tuple(float(v).hex() for v in row) for row in np.asarray(points)]


def check(key: str, points) -> None:
    """Assert ``points`` are the recorded ones of ``key`` on this platform (see the module docstring)."""
    points = np.asarray(points, dtype=float)
    here = platform_key()
    if here in PLATFORMS:
        np.testing.assert_array_equal(points, _unhex(PLATFORMS[here][key]))
        return
    want = _unhex(LEGACY[key])
    if not np.array_equal(points, want):
        pytest.skip(
            f"{key}: no recording for this platform (fingerprint {here}) and the legacy platform's points "
            f"differ by up to {np.max(np.abs(points - want)):.2g}; record it with "
            "`python -m tests.optimizer._recorded_points` on a known-good commit"
        )


def _f(x):
    return float(-((x[0] - 0.3) ** 2) - (x[1] + 0.2) ** 2), [
        float(x[0] + x[1] - 0.4),
        float(x[0] ** 2 + x[1] ** 2 - 0.6),
    ]


def core_points(path, policy: str) -> tuple[np.ndarray, list]:
    """Seed 3, budget 10 on a 2-constraint quadratic through a study file: 7 single asks, a batch of two
    (one told, one failed), one more ask. Returns all asked points and the history."""
    opt = ckb.Optimizer([-1, -1], [1, 1], m=2, policy=policy, budget=10, seed=3, storage=path, study_name="r")
    points = []
    for _ in range(7):
        x = opt.ask()
        points.append(x)
        opt.tell(x, *_f(x))
    X = opt.ask(2)
    points += list(X)
    opt.tell(X[0], *_f(X[0]))
    opt.tell(X[1], failed=True, note="crash")
    x = opt.ask()
    points.append(x)
    opt.tell(x, *_f(x))
    history = opt.history()
    opt.close()
    np.testing.assert_array_equal(np.stack(points[:6]), initial_design([-1, -1], [1, 1], 6, seed=3))
    return np.stack(points), history


#: the shipped benchmarks whose constraints ``auto`` log-transforms during a run
HEAVY_BENCHMARKS = ("welded-beam", "tension-spring")


def benchmark_points(name: str, policy: str) -> tuple[np.ndarray, ckb.Optimizer]:
    """Seed 0, budget 2d + 8 on a shipped benchmark problem: the design plus 4 single asks, then ask(2)
    (the welded beam and the tension spring in rms units: their constraints' values reach more than
    ``CONSTRAINT_LOG_RATIO`` robust scales of the design, where ``auto`` log-transforms them; the CKB
    policies without their search for a first feasible point, recorded before it became their default,
    which changes the welded beam's points since its design holds no feasible point). Returns the asks
    after the design and the optimizer."""
    problem = CONSTRAINED_BENCHMARKS[name].make()
    dom = problem.domain
    transform = "rms" if name in HEAVY_BENCHMARKS else "auto"
    params = {"feasibility_first": False} if policy.startswith("ckb-") else {}
    opt = ckb.Optimizer(
        dom.lower, dom.upper, problem.m, policy=policy, budget=2 * dom.d + 8,
        minimize=problem.minimize, seed=0, outcome_transform=transform, **params,
    )  # fmt: skip
    points = []
    for _ in range(opt.n_init + 4):
        x = opt.ask()
        points.append(x)
        opt.tell(x, *problem.evaluate(-1, x))
    points += list(opt.ask(2))
    np.testing.assert_array_equal(
        np.stack(points[: opt.n_init]), initial_design(dom.lower, dom.upper, opt.n_init, 0)
    )
    return np.stack(points[opt.n_init :]), opt


def record() -> dict[str, list[tuple[str, ...]]]:
    """Every recorded run on this platform (float.hex)."""
    import tempfile
    from pathlib import Path

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for key in LEGACY:
            kind, *rest = key.split("/")
            if kind == "core":
                points = core_points(Path(tmp) / f"{rest[0]}.db", rest[0])[0][6:]
            else:
                points = benchmark_points(*rest)[0]
            out[key] = _hex(points)
    return out


if __name__ == "__main__":  # pragma: no cover - a maintenance command
    import pprint

    print(f"# platform {platform_key()}")
    pprint.pprint({platform_key(): record()}, width=110)
