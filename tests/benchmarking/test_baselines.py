"""The benchmark's baselines: Sobol search continues the shared design; qLogNEI is seeded and checked."""

import numpy as np
import pytest

from ckb.benchmarking.baselines import QLogNEI, SobolSearch
from ckb.errors import InvalidInputError
from ckb.optimizer import initial_design


def _drive(opt, n, fn):
    X = []
    for _ in range(n):
        x = opt.ask()
        opt.tell(x, *fn(x))
        X.append(x)
    return np.array(X)


def _toy(x):  # maximize -(x - 0.3)^2 s.t. x_1 - 0.6 <= 0
    return -float(np.sum((x - 0.3) ** 2)), [x[0] - 0.6]


def test_sobol_search_is_the_design_continued():
    lo, hi = [-1.0, 0.0, 2.0], [1.0, 5.0, 3.0]
    opt = SobolSearch(lo, hi, 1, budget=12, seed=3)
    assert opt.n_init == 8  # 2d + 2
    X = _drive(opt, 12, _toy)
    np.testing.assert_allclose(X, initial_design(lo, hi, 12, 3))
    np.testing.assert_allclose(X[:8], initial_design(lo, hi, 8, 3))  # the shared design comes first


def test_tell_checks_point_and_values():
    opt = SobolSearch([0, 0], [1, 1], 2, budget=4, seed=0)
    x = opt.ask()
    with pytest.raises(InvalidInputError, match="pending"):
        opt.ask()
    with pytest.raises(InvalidInputError, match="pending point"):
        opt.tell(1 - x, 0.0, [0.0, 0.0])
    with pytest.raises(InvalidInputError, match="m = 2"):
        opt.tell(x, 0.0, [0.0])
    with pytest.raises(InvalidInputError, match="finite"):
        opt.tell(x, float("nan"), [0.0, 0.0])
    opt.tell(x, 0.0, [0.0, 0.0])
    assert len(opt.y) == 1


def test_qlognei_is_seeded_and_proposes_inside_the_box():
    kw = {"budget": 8, "n_init": 4, "seed": 1, "num_restarts": 2, "raw_samples": 32, "mc_samples": 32}
    a = _drive(QLogNEI([0, 0], [1, 1], 1, **kw), 5, _toy)
    b = _drive(QLogNEI([0, 0], [1, 1], 1, **kw), 5, _toy)
    np.testing.assert_array_equal(a, b)  # the same seed gives the same points
    np.testing.assert_allclose(a[:4], initial_design([0, 0], [1, 1], 4, 1))
    assert np.all((a >= 0) & (a <= 1))
    assert not np.any(np.all(np.isclose(a[4:, None, :], a[None, :4, :]), axis=2))  # new points


def test_qlognei_exact_fixes_the_noise_at_the_exact_floor_of_the_standardized_targets():
    import torch
    from botorch.models import SingleTaskGP
    from botorch.models.transforms import Standardize

    from ckb.optimizer.core import EXACT_NOISE_FLOOR

    assert QLogNEI([0, 0], [1, 1], 1)._noise(torch.ones(3, 2)) is None  # fitted by default
    Y = torch.tensor([[0.0, 1e4], [3.0, -2e4], [1.0, 5e3], [-2.0, 0.0]], dtype=torch.float64)
    noise = QLogNEI([0, 0], [1, 1], 1, exact=True)._noise(Y)
    assert noise.shape == Y.shape
    # a hand computation: each output's variance times the floor; Standardize divides it by that variance
    np.testing.assert_allclose(noise[0].numpy(), EXACT_NOISE_FLOOR * Y.var(dim=0).numpy())
    model = SingleTaskGP(
        torch.rand(4, 2, dtype=torch.float64), Y, train_Yvar=noise, outcome_transform=Standardize(m=2)
    )
    np.testing.assert_allclose(model.likelihood.noise.detach().numpy(), EXACT_NOISE_FLOOR, rtol=1e-9)
    kw = {"budget": 6, "n_init": 4, "seed": 1, "num_restarts": 2, "raw_samples": 32, "mc_samples": 32}
    X = _drive(QLogNEI([0, 0], [1, 1], 1, exact=True, **kw), 6, _toy)
    assert np.all((X >= 0) & (X <= 1))


def test_qlognei_in_ckbs_units_models_the_targets_ckbs_policies_see():
    """``outcome_units``: the targets before Standardize are ckb's outcome units (here a constraint that
    crowds against 1 far from 0, as the tension spring's first: the log of its distance to the bound);
    without it, the objective in the maximization sense and the raw constraints."""
    from ckb.optimizer.models import OutcomeUnits

    rng = np.random.default_rng(0)
    y = rng.uniform(1.0, 2.0, 8)
    near_cap = 1.0 - np.array([1e-6, 2e-6, 3e-6, 5e-6, 1e-5, 0.5, 2e-6, 4e-6])  # a ratio spanning decades
    c = np.column_stack([near_cap, rng.normal(size=8)])
    plain, units = (
        QLogNEI([0], [1], 2, minimize=True),
        QLogNEI([0], [1], 2, minimize=True, outcome_units="auto"),
    )
    for opt in (plain, units):
        opt.y, opt.c, opt.n_init = list(y), list(c), 6
    np.testing.assert_array_equal(plain._targets(), np.column_stack([-y, c]))
    want = OutcomeUnits(y, c, minimize=True, m=2, transform="auto", reference=np.arange(8) < 6)
    assert want.c_kind[0] == "bound"  # the map this variant is for
    np.testing.assert_allclose(units._targets(), np.column_stack([want.y(y), want.c(c)]))
    with pytest.raises(InvalidInputError, match="outcome_units must be None or one of .*got 'log'"):
        QLogNEI([0], [1], 1, outcome_units="log")
