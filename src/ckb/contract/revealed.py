"""The constraint sample an environment may reveal before a round (stochastic full information, the CBO
paper, Sec. 4).

It is an ``(n, m)`` array: the values :math:`g_t(x)` of the round's random constraint function at the ``n``
candidates, one column per constraint (a 1-D array is accepted for ``m = 1``). The environment that draws
it and the policy that receives it check it with the same :func:`check_revealed_constraints`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb.errors import InvalidInputError


def check_revealed_constraints(values: Any, shape: tuple[int, int], what: str) -> np.ndarray:
    """``values`` as a new float array of ``shape`` = (n candidates, m constraints), or a clear error
    naming ``what`` (who produced the sample), the shape found and the one expected, or the first
    non-finite entry."""
    g = np.array(values, dtype=float)
    if g.ndim == 1 and shape[1] == 1:
        g = g[:, None]
    if g.shape != shape:
        raise InvalidInputError(
            f"{what} has shape {g.shape}, expected shape {shape} (n candidates, m constraints)."
        )
    if not np.all(np.isfinite(g)):
        bad = np.argwhere(~np.isfinite(g))[0].tolist()
        raise InvalidInputError(f"{what} has a non-finite value at {bad}.")
    return g
