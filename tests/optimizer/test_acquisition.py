"""The maximizer of the optimizer's policies."""

import numpy as np
import pytest
import torch

from ckb.errors import InvalidInputError
from ckb.optimizer.acquisition import Maximizer

T = lambda a: torch.as_tensor(np.asarray(a, dtype=float))


def test_moved_rule_math_is_a_deprecated_alias():
    import ckb.optimizer.acquisition as acq
    from ckb.rules.primal_dual import primal_dual_score

    with pytest.warns(DeprecationWarning, match="ckb.rules.primal_dual.primal_dual_score"):
        assert acq.ckb_score is primal_dual_score
    from ckb.rules.optimistic import CONFIG_FLOOR

    # every moved name warns: CONFIG_FLOOR had a stale copy here that shadowed its alias
    with pytest.warns(DeprecationWarning, match="ckb.rules.optimistic.CONFIG_FLOOR"):
        assert acq.CONFIG_FLOOR == CONFIG_FLOOR


def test_maximizer_finds_the_peak_of_a_smooth_score_and_skips_excluded_points():
    peak = np.array([0.3, 0.8])
    fn = lambda X: -((X - T(peak)) ** 2).sum(-1)
    maxi = Maximizer(2, np.random.default_rng(0), num_restarts=4, raw_samples=64)
    x, v = maxi(fn)
    np.testing.assert_allclose(x, peak, atol=1e-4)
    x2, _ = maxi(fn, exclude=x[None, :])
    assert np.max(np.abs(x2 - x)) > 1e-6


def test_maximizer_with_a_separation_leaves_the_excluded_ellipsoid_at_its_best_edge():
    # -||x - peak||^2 outside the ellipse of radii r around the peak is best on the ellipse, along the
    # shorter radius (0.1 in x_0), at -0.01: the hinge pushes the restarts to about 1.05 radii
    torch.manual_seed(
        0
    )  # optimize_acqf's choice of starts among the raw samples draws from torch's generator
    peak, r = np.array([0.5, 0.5]), np.array([0.1, 0.2])
    fn = lambda X: -((X - T(peak)) ** 2).sum(-1)
    x, v = Maximizer(2, np.random.default_rng(0), num_restarts=4, raw_samples=64)(
        fn, exclude=peak[None, :], separation=r
    )
    scaled = np.linalg.norm((x - peak) / r)
    assert 1.0 <= scaled <= 1.1  # outside, near the hinge's edge (L-BFGS-B stops near the kink)
    # near the short axis: the best point 1.05 radii out along x_1 would score -(1.05 * 0.2)^2 = -0.044
    assert v >= -((1.1 * 0.1) ** 2) - 1e-9
    assert v == pytest.approx(float(fn(T(x[None, :]))[0]))  # the score itself, not the penalized one


def test_maximizer_separation_on_candidates_falls_back_to_exact_repeats():
    C = np.array([[0.0, 0.0], [0.05, 0.0], [1.0, 1.0]])
    fn = lambda X: -(X**2).sum(-1)  # best at the origin, then (0.05, 0)
    maxi = Maximizer(2, np.random.default_rng(0), candidates=C)
    x, _ = maxi(fn, exclude=C[:1], separation=np.array([0.1, 0.1]))
    np.testing.assert_array_equal(x, [1.0, 1.0])  # (0.05, 0) is inside the excluded disk
    x, _ = maxi(fn, exclude=C[:1], separation=np.array([0.01, 0.01]))
    np.testing.assert_array_equal(x, [0.05, 0.0])
    # every candidate within the separation: only the exact repeat is avoided
    x, _ = maxi(fn, exclude=C[:1], separation=np.array([5.0, 5.0]))
    np.testing.assert_array_equal(x, [0.05, 0.0])
    with pytest.raises(InvalidInputError, match="separation must be 2 positive radii"):
        maxi(fn, exclude=C[:1], separation=np.array([0.1, -1.0]))


def test_maximizer_enumerates_candidates_with_random_ties():
    C = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0], [0.5, 0.0]])
    fn = lambda X: -((X[:, :1] - 0.5) ** 2).sum(-1)  # ties between rows 1 and 3
    picks = {tuple(Maximizer(2, np.random.default_rng(s), candidates=C)(fn)[0]) for s in range(20)}
    assert picks == {(0.5, 0.5), (0.5, 0.0)}
    x, _ = Maximizer(2, np.random.default_rng(0), candidates=C)(
        fn, exclude=np.array([[0.5, 0.5], [0.5, 0.0]])
    )
    assert tuple(x) in {(0.0, 0.0), (1.0, 1.0)}


def test_few_line_search_steps_cut_evaluations_on_a_score_with_a_jump_and_find_its_edge():
    # pcei's score shape: a smooth peak outside the admissible disk (radius 0.3 around the centre), the
    # floor minus the excess outside it; the best admissible point is on the disk's edge toward the peak
    centre, peak = np.array([0.5, 0.5]), np.array([0.95, 0.5])

    def make():
        calls = [0]

        def fn(X):
            calls[0] += 1
            excess = (torch.linalg.vector_norm(X - T(centre), dim=-1) - 0.3).clamp_min(0.0)
            value = -((X - T(peak)) ** 2).sum(-1)
            return torch.where(excess <= 0.0, value, -1e6 - excess)

        return fn, calls

    found = {}
    for steps in (None, 5):
        fn, calls = make()
        torch.manual_seed(0)
        maxi = Maximizer(2, np.random.default_rng(0), num_restarts=6, raw_samples=64, max_line_search=steps)
        x, v = maxi(fn)
        found[steps] = (x, v, calls[0])
        assert np.linalg.norm(x - centre) <= 0.3 + 1e-12  # admissible
    (_, v20, n20), (x5, v5, n5) = found[None], found[5]
    assert n5 < n20  # fewer score evaluations
    edge = centre + np.array([0.3, 0.0])  # the best admissible point
    np.testing.assert_allclose(x5, edge, atol=0.02)
    best = -(0.15**2)  # the score at the edge point
    assert v20 <= best + 1e-12 and v5 <= best + 1e-12
    assert v5 >= best - 3e-3  # within 0.01 of the edge (fewer steps may stop a little short of it)


def test_a_score_marked_for_the_full_line_search_ignores_the_maximizers_shorter_one(monkeypatch):
    import botorch.optim

    from ckb.optimizer.acquisition import full_line_search

    seen = []
    optimize = botorch.optim.optimize_acqf

    def recording(*args, **kwargs):
        seen.append(kwargs["options"].get("maxls"))
        return optimize(*args, **kwargs)

    monkeypatch.setattr(botorch.optim, "optimize_acqf", recording)
    maxi = Maximizer(2, np.random.default_rng(0), num_restarts=2, raw_samples=16, max_line_search=5)
    fn = lambda X: -((X - 0.3) ** 2).sum(-1)
    maxi(fn)
    assert full_line_search(fn) is fn
    maxi(fn)
    assert seen == [5, None]  # None: SciPy's 20
