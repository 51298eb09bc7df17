"""With ``exact=True`` on a candidate set whose every candidate is evaluated, ``ask(k)`` repeats
evaluated candidates (allowed) but still gives k distinct points while k candidates allow it (it gave
the same candidate k times)."""

import warnings

import numpy as np
import pytest

import ckb

C = np.array([[0.1, 0.1], [0.2, 0.8], [0.5, 0.5], [0.9, 0.2], [0.7, 0.7]])


def _f(x):
    return float(np.sum((x - 0.5) ** 2)), [float(x[0] - 0.8)]


@pytest.mark.parametrize("policy", ["pcei", "cei", "ckb-ucb"])
def test_a_batch_on_evaluated_candidates_has_distinct_points(policy):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = ckb.Optimizer(
            [0, 0], [1, 1], m=1, budget=8, n_init=2, candidates=C, exact=True, seed=0, policy=policy
        )
        for _ in range(2):
            x = opt.ask()
            opt.tell(x, *_f(x))
        for x in opt.ask(3):
            opt.tell(x, *_f(x))
        assert len({tuple(h["x"]) for h in opt.history()}) == 5  # every candidate evaluated once
        batch = opt.ask(3)
    assert len({tuple(x) for x in batch}) == 3
