"""``ckb-ts``: the primal-dual rule with independent posterior sample paths of f and each g."""

from ckb.optimizer.policies._primal_dual import RULE_DOC, PrimalDual
from ckb.optimizer.policies.registry import OPTIMIZER_POLICIES


@OPTIMIZER_POLICIES.register("ckb-ts", aliases=("cbo-ts",))
class CKBTS(PrimalDual):
    __doc__ = (
        "CKB-TS: clipped sample paths (pathwise, random Fourier features + Matheron update; f and every g\n"
        "independent, one draw per round) widened by beta; the dual steps at ask.\n" + RULE_DOC
    )
    exploration = "ts"
    default_beta = 1.0

    def _estimator(self, ctx, bf, bg):
        import torch

        models = ctx.models
        path = models.sample_path()  # independent outputs: independent paths for f and each g
        w = torch.as_tensor([bf, *bg], dtype=torch.float64)

        def est(X):
            mu, _ = models.mean_std(X)
            h = mu + w * (path(X) - mu)
            return h[..., 0], h[..., 1:]

        return est
