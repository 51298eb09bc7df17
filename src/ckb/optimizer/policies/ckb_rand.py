"""``ckb-rand``: the primal-dual rule with RandGP-UCB (one random scalar per function and round)."""

from typing import Any

import numpy as np

from ckb.exploration.strategies import RandomShift
from ckb.optimizer.policies._primal_dual import RULE_DOC, PrimalDual
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES
from ckb.rules import named


@OPTIMIZER_POLICIES.register("ckb-rand", aliases=("cbo-rand",))
class CKBRand(PrimalDual):
    __doc__ = (
        "CKB-Rand (RandGP-UCB): mu + Z sigma with one scalar Z per function and round, Z ~ N(0, beta^2)\n"
        "(``distribution='uniform-discrete'``: the CBO paper, App. D.4, mirrored for g);\n"
        "the dual steps at ask.\n" + RULE_DOC
    )
    exploration = "rand"

    def __init__(
        self, m, horizon, *, distribution: str = "gaussian", n_points: int = 11, **kwargs: Any
    ) -> None:
        super().__init__(m, horizon, **kwargs)
        self.shift = RandomShift(distribution, n_points)

    def constants(self) -> dict[str, Any]:
        """The rule's constants and the shifts' ``distribution`` and ``n_points``."""
        return {
            **super().constants(),
            "distribution": self.shift.distribution,
            "n_points": self.shift.n_points,
        }

    def _estimator(self, ctx, bf, bg):
        import torch

        models = ctx.models
        zf = self.shift.draw(bf, ctx.rng, 1.0)
        zg = np.array([self.shift.draw(b, ctx.rng, -1.0) for b in bg])
        self._z = (zf, zg)
        z = torch.as_tensor([zf, *zg], dtype=torch.float64)

        def est(X):
            mu, sd = models.mean_std(X)
            h = mu + z * sd
            return h[..., 0], h[..., 1:]

        return est

    def decide(self, ctx):
        self._z = None  # no draw in the search for a first feasible point
        x, info = super().decide(ctx)
        if self._z is not None:
            info.update({"z": float(self._z[0]), **named("z_g", self._z[1])})
        return x, info
