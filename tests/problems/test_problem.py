import numpy as np
import pytest

from ckb.errors import InvalidInputError
from ckb.problems import BoxDomain, FiniteDomain, GaussianNoise, Problem, ResampledReadings, UniformNoise


def _finite(f, g, minimize=False):
    return Problem(
        "p",
        FiniteDomain.arms(len(f)),
        np.array(f),
        None if g is None else np.array(g),
        GaussianNoise(0.0, 0.0),
        minimize=minimize,
    )


def test_optimum_is_best_feasible_arm():
    p = _finite([3.0, 5.0, 4.0], [-1.0, 0.5, 0.0])  # arm 1 infeasible, arm 2 feasible at the boundary
    idx, x, f = p.optimum
    assert (idx, f) == (2, 4.0)
    assert p.feasible.tolist() == [True, False, True]


def test_minimize_flips_the_sense():
    p = _finite([3.0, 5.0, 4.0], [-1.0, 0.5, 0.0], minimize=True)
    assert p.optimum[0] == 0 and p.utility_star == -3.0
    assert p.info().minimize


def test_infeasible_problem_has_a_clear_error():
    p = _finite([1.0, 2.0], [0.3, 0.1])
    with pytest.raises(InvalidInputError, match="no feasible candidate .* 0.1"):
        _ = p.optimum


def test_unconstrained_problem_has_m_zero():
    p = _finite([1.0, 2.0], None)
    assert p.m == 0 and p.optimum[0] == 1
    f, g = p.evaluate(0, p.domain.candidates[0])
    assert f == 1.0 and g.shape == (0,)


def test_tables_are_checked():
    with pytest.raises(InvalidInputError, match="shape"):
        _finite([1.0, 2.0], [[0.0], [0.0], [0.0]])
    with pytest.raises(InvalidInputError, match="non-finite"):
        _finite([1.0, np.nan], None)


def test_callables_on_a_grid_are_tabulated_and_multi_constraint():
    dom = BoxDomain([0.0], [1.0], grid=5)
    p = Problem(
        "q",
        dom,
        lambda X: X[:, 0],
        lambda X: np.column_stack([X[:, 0] - 0.5, -X[:, 0]]),
        GaussianNoise(0.0, 0.0),
    )
    assert p.m == 2
    assert p.optimum[2] == 0.5  # x <= 0.5 is feasible, maximize x
    np.testing.assert_allclose(p.g_values[:, 0], np.linspace(0, 1, 5) - 0.5)


def test_continuous_box_needs_a_given_optimum():
    p = Problem("c", BoxDomain([0.0], [1.0]), lambda X: -(X[:, 0] ** 2), None, GaussianNoise(0.1, 0.0))
    with pytest.raises(InvalidInputError, match="optimum"):
        _ = p.optimum
    p2 = Problem(
        "c",
        BoxDomain([0.0], [1.0]),
        lambda X: -(X[:, 0] ** 2),
        None,
        GaussianNoise(0.1, 0.0),
        optimum=(np.array([0.0]), 0.0),
    )
    assert p2.utility_star == 0.0
    f, _ = p2.evaluate(-1, np.array([0.5]))
    assert f == -0.25


def test_gaussian_noise_statistics(rng):
    noise = GaussianNoise(0.3, [0.1, 0.0])
    ys, cs = zip(*(noise.sample(rng, 0, 1.0, np.array([2.0, -1.0])) for _ in range(20000)))
    ys, cs = np.array(ys), np.array(cs)
    assert abs(ys.mean() - 1.0) < 5 * 0.3 / np.sqrt(ys.size)
    assert abs(ys.std() - 0.3) < 0.01
    assert abs(cs[:, 0].std() - 0.1) < 0.005
    assert np.all(cs[:, 1] == -1.0)  # std 0: exact


def test_uniform_noise_is_bounded(rng):
    noise = UniformNoise(0.2, 0.5)
    out = [noise.sample(rng, 0, 0.0, np.zeros(1)) for _ in range(5000)]
    ys = np.array([o[0] for o in out])
    cs = np.array([o[1][0] for o in out])
    assert ys.min() >= -0.2 and ys.max() <= 0.2 and cs.min() >= -0.5 and cs.max() <= 0.5


def test_resampled_readings_use_a_random_row_and_affine_constraint(rng):
    table = np.arange(12.0).reshape(4, 3)  # 4 samples, 3 arms
    noise = ResampledReadings(table, constraint_affine=[(-1.0, 100.0)])
    seen = set()
    for _ in range(400):
        y, c = noise.sample(rng, 1, 0.0, np.zeros(1))
        assert y in table[:, 1]
        assert c[0] == 100.0 - y
        seen.add(y)
    assert seen == set(table[:, 1])  # every row is reachable


def test_randomized_optimum_is_the_lp_over_distributions():
    # arm 0: f = 1, g = 1 (infeasible); arm 1: f = 0, g = -1. Mixing half-half: E g = 0, E f = 0.5
    p = _finite([1.0, 0.0], [1.0, -1.0])
    assert p.utility_star == 0.0
    assert p.utility_star_randomized == pytest.approx(0.5)
    # with a dominant feasible arm the LP equals the deterministic optimum
    q = _finite([1.0, 2.0], [1.0, -1.0])
    assert q.utility_star_randomized == pytest.approx(2.0)


@pytest.mark.parametrize("scale", [1e-300, 1e-20, 1e15, 1e20, 1e300])
def test_the_randomized_optimum_does_not_depend_on_the_units(scale):
    """A probe multiplied the light-sensor data by 1e20: the LP (HiGHS, absolute tolerances) failed with
    "Model error", reported as "no feasible distribution"; at 1e-20 it gave a wrong optimum silently. The
    objective and each constraint are now scaled by powers of two before the LP. A hand-solved case:
    E f over the mix of arms 0 and 1 with E g = 0 (weights 1/3, 2/3) is 4/3 + 1 = 7/3; arm 2 is worse."""
    f, g = np.array([3.0, 2.0, 0.5]), np.array([[2.0, 0.0], [-1.0, -1.0], [-1.0, -2.0]])
    p = _finite(f, g)
    assert p.utility_star_randomized == pytest.approx(7 / 3, rel=1e-12)
    q = _finite(f * scale, g * np.array([scale, 1.0]))  # the first constraint in other units too
    assert q.utility_star_randomized == pytest.approx(7 / 3 * scale, rel=1e-9)


def test_an_lp_that_fails_is_not_called_infeasible():
    f = np.array([1.0, 2.0])
    p = _finite(f, np.array([[-1.0], [1.0]]))
    assert p.utility_star_randomized == pytest.approx(1.5)
    with pytest.raises(InvalidInputError, match="no feasible distribution"):
        _finite(f, np.array([[1.0], [2.0]])).utility_star_randomized  # noqa: B018 (and no feasible arm)


def test_the_contract_is_reexported_where_it_used_to_live():
    import ckb.contract as contract
    import ckb.problems as problems
    from ckb.problems import domain, observation, problem, safety

    for name in ("BoxDomain", "Domain", "FiniteDomain", "Observation", "ProblemInfo"):
        assert getattr(problems, name) is getattr(contract, name), name
    assert (domain.BoxDomain, domain.Domain, domain.FiniteDomain) == (
        contract.BoxDomain,
        contract.Domain,
        contract.FiniteDomain,
    )
    assert observation.Observation is contract.Observation and problem.ProblemInfo is contract.ProblemInfo
    assert safety.kernel_distances is contract.kernel_distances
    assert safety.euclidean_distances is contract.euclidean_distances
