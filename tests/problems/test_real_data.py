"""Real-data problems (light sensors, finance), on small generated fixtures.

The real files are never needed: only ``test_real_data_facts`` uses them, and is skipped when absent. The
loaders and the search for the data directory are tested in ``tests/problems/test_data.py``.
"""

import warnings

import numpy as np
import pytest

from ckb.errors import DataFileError, InvalidInputError
from ckb.problems import make_problem
from ckb.problems.data import (
    ENV_VAR,
    FINANCE_FILE,
    LIGHT_SENSOR_FILE,
    find_data_file,
    load_light_sensor,
    sha256_of,
)
from ckb.problems.real_data import correlation_matrix
from ckb.runner import Trial, TrialConfig
from tests.problems.test_data import PRICES, TICKERS, light_tables, write_finance, write_light

# fixtures are not the published files: their checksum warning is expected (tested once explicitly)
pytestmark = pytest.mark.filterwarnings("ignore:.*not the published.*:UserWarning")


@pytest.fixture(autouse=True)
def no_env(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)


def zscore_cov_reference(X):
    Z = (X - X.mean(0)) / X.std(0, ddof=1)
    return np.cov(Z, rowvar=False, ddof=1)


# ------------------------------------------------------------------------------------------ problems
def test_light_sensor_problem_from_fixture(tmp_path):
    train, test = light_tables()
    write_light(tmp_path, train, test)
    p = make_problem("light-sensor", np.random.default_rng(1), data_dir=tmp_path)
    f = test.astype(float).mean(0)
    B = f.max()
    np.testing.assert_allclose(p.f_values, f)
    K = p.kernel(p.domain.candidates)
    np.testing.assert_allclose(K, zscore_cov_reference(train.astype(float)), atol=1e-12)
    np.testing.assert_allclose(K, np.corrcoef(train.astype(float), rowvar=False), atol=1e-12)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    np.testing.assert_allclose(p.g_values[:, 0], -f + B / 2)
    assert p.domain.n == 5 and p.domain.d == 1 and p.m == 1
    R = np.max(np.abs(test - f))
    assert p.hints["B"] == pytest.approx(B) and p.hints["R"] == pytest.approx(R)
    assert p.hints["G"] == pytest.approx(np.max(np.abs(-f + B / 2)))
    assert p.hints["slater_margin"] == pytest.approx(B / 2)
    assert p.g_values[p.hints["safe_seed"], 0] < 0 and p.hints["lipschitz"] > 0
    md = p.metadata
    assert md["h"] == pytest.approx(B / 2) and md["n_feasible"] == int(np.sum(f >= B / 2))
    assert md["data_sha256"] == sha256_of(tmp_path / LIGHT_SENSOR_FILE)
    assert md["kernel_min_eigenvalue"] == pytest.approx(np.linalg.eigvalsh(K)[0], abs=1e-12)
    assert (md["n_train_rows"], md["n_test_rows"]) == (9, 6)
    assert p.optimum[0] == int(np.argmax(f))


def test_light_sensor_h_fraction_and_jitter(tmp_path):
    write_light(tmp_path)
    p = make_problem(
        "light-sensor", np.random.default_rng(0), data_dir=tmp_path, h_fraction=0.25, jitter=1e-3
    )
    B = p.f_values.max()
    np.testing.assert_allclose(p.g_values[:, 0], -p.f_values + B / 4)
    np.testing.assert_allclose(np.diag(p.kernel(p.domain.candidates)), 1.001)
    with pytest.raises(InvalidInputError, match="h_fraction must be <"):
        make_problem("light-sensor", np.random.default_rng(0), data_dir=tmp_path, h_fraction=1.0)


def test_instance_does_not_depend_on_rng_except_safe_seed(tmp_path):
    write_light(tmp_path)
    a = make_problem("light-sensor", np.random.default_rng(0), data_dir=tmp_path)
    b = make_problem("light-sensor", np.random.default_rng(99), data_dir=tmp_path)
    np.testing.assert_array_equal(a.f_values, b.f_values)
    np.testing.assert_array_equal(a.g_values, b.g_values)
    np.testing.assert_array_equal(a.kernel.matrix, b.kernel.matrix)
    assert {k: v for k, v in a.hints.items() if k != "safe_seed"} == {
        k: v for k, v in b.hints.items() if k != "safe_seed"
    }


def test_coupled_observations_resample_test_rows_uniformly(tmp_path):
    _, test = light_tables()
    write_light(tmp_path)
    p = make_problem("light-sensor", np.random.default_rng(0), data_dir=tmp_path)
    h = p.metadata["h"]
    rng = np.random.default_rng(7)
    arm = 2
    f, g = p.evaluate(arm, p.domain.candidates[arm])
    ys, cs = zip(*(p.noise.sample(rng, arm, f, g) for _ in range(6000)))
    ys, cs = np.array(ys), np.array(cs)[:, 0]
    np.testing.assert_array_equal(cs, h - ys)  # c = h - y, same reading
    column = test[:, arm].astype(float)
    rows = np.array([int(np.flatnonzero(column == y)[0]) for y in ys])  # every y is a test reading of the arm
    counts = np.bincount(rows, minlength=6)
    # uniform over the 6 rows: 1000 expected each, sd ~ 29; chi-square (5 dof) 99.9% quantile is 20.5
    chi2 = np.sum((counts - 1000.0) ** 2 / 1000.0)
    assert chi2 < 20.5, counts
    assert np.mean(ys) == pytest.approx(f, abs=4 * np.std(column) / np.sqrt(6000))


def test_independent_constraint_noise(tmp_path):
    _, test = light_tables()
    write_light(tmp_path)
    p = make_problem(
        "light-sensor", np.random.default_rng(0), data_dir=tmp_path, constraint_noise="independent"
    )
    resid = test - test.astype(float).mean(0)
    assert p.noise.constraint_std == pytest.approx(np.sqrt(np.mean(resid**2)))
    assert p.noise.affine is None and p.metadata["constraint_noise"] == "independent"
    rng = np.random.default_rng(3)
    f, g = p.evaluate(0, p.domain.candidates[0])
    obs = [p.noise.sample(rng, 0, f, g) for _ in range(4000)]
    ys, cs = np.array([o[0] for o in obs]), np.array([o[1][0] for o in obs])
    assert abs(np.corrcoef(ys, cs)[0, 1]) < 0.1  # coupled would give exactly -1
    assert np.std(cs) == pytest.approx(p.noise.constraint_std, rel=0.05)
    q = make_problem(
        "light-sensor",
        np.random.default_rng(0),
        data_dir=tmp_path,
        constraint_noise="independent",
        constraint_std=2.0,
    )
    assert q.noise.constraint_std == 2.0
    with pytest.raises(InvalidInputError, match="constraint_noise must be one of"):
        make_problem("light-sensor", np.random.default_rng(0), data_dir=tmp_path, constraint_noise="bogus")
    with pytest.raises(InvalidInputError, match="only with constraint_noise='independent'"):
        make_problem("light-sensor", np.random.default_rng(0), data_dir=tmp_path, constraint_std=1.0)


def test_finance_problem_from_fixture(tmp_path):
    write_finance(tmp_path)
    p = make_problem("finance", np.random.default_rng(0), data_dir=str(tmp_path))
    f = PRICES.mean(0)
    np.testing.assert_allclose(p.f_values, f)
    K = p.kernel(p.domain.candidates)
    np.testing.assert_allclose(K, zscore_cov_reference(PRICES), atol=1e-12)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    np.testing.assert_allclose(p.g_values[:, 0], -f + 100.0)
    assert p.feasible.tolist() == [True, False, True, False]
    assert p.hints["R"] == pytest.approx(np.max(np.abs(PRICES - f)))
    assert p.hints["B"] == pytest.approx(f.max()) and p.hints["slater_margin"] == pytest.approx(f.max() - 100)
    md = p.metadata
    assert md["tickers"] == TICKERS and md["best_ticker"] == "BA" and md["best_arm"] == 2
    assert (md["first_day"], md["last_day"], md["n_days"], md["n_feasible"]) == (
        "2016-01-04",
        "2016-01-09",
        6,
        2,
    )
    # a pull returns the stock's price on some day, and c = h - y
    rng = np.random.default_rng(0)
    for _ in range(50):
        y, c = p.noise.sample(rng, 3, *p.evaluate(3, p.domain.candidates[3]))
        assert y in PRICES[:, 3] and c[0] == 100.0 - y
    q = make_problem("finance", np.random.default_rng(0), data_dir=tmp_path, h=30.0)
    assert q.feasible.tolist() == [True, True, True, False]
    with pytest.raises(InvalidInputError, match="no strictly feasible arm"):
        make_problem("finance", np.random.default_rng(0), data_dir=tmp_path, h=float(f.max()))


def test_trial_on_finance_fixture_observes_real_prices(tmp_path):
    write_finance(tmp_path)
    cfg = TrialConfig(
        algorithm="igp-ucb",
        policy="igp-ucb",
        problem="finance",
        horizon=25,
        trial=0,
        seed=1,
        policy_params={"B": 131.0, "R": 10.0},
        problem_params={"data_dir": str(tmp_path)},
    )
    tr = Trial(cfg).run()
    assert all(y in PRICES[:, i] for i, y in zip(tr.index, tr.y))
    np.testing.assert_array_equal(tr.c[:, 0], 100.0 - tr.y)


@pytest.mark.parametrize("scale", [2.0**-990, 2.0**500, 1e-300, 1e152, 1e300])
def test_correlation_matrix_does_not_depend_on_the_units(scale):
    """A probe multiplied the light-sensor readings by 1e152 (numpy's overflow warning in the variance, a
    kernel of NaN) and by 1e-300 ("column 0 is constant": its spread underflowed)."""
    import warnings

    X = np.random.default_rng(0).normal(size=(7, 3)) + 5.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K = correlation_matrix(X * scale)
    if np.log2(scale).is_integer():
        np.testing.assert_array_equal(K, correlation_matrix(X))  # a power of two: exactly the same
    np.testing.assert_allclose(K, correlation_matrix(X), rtol=1e-12, atol=1e-12)


def test_correlation_matrix_ddof_and_constant_column():
    X = np.random.default_rng(0).normal(size=(7, 3))
    K = correlation_matrix(X)
    np.testing.assert_allclose(K, zscore_cov_reference(X), atol=1e-14)
    # numpy's default std (ddof=0) with np.cov (ddof=1) would give n/(n-1) on the diagonal
    bad = np.cov((X - X.mean(0)) / X.std(0), rowvar=False)
    assert np.allclose(np.diag(bad), 7 / 6)
    X[:, 1] = 3.0
    with pytest.raises(DataFileError, match="column 1 is constant over all 7 rows"):
        correlation_matrix(X)
    with pytest.raises(DataFileError, match="'B' is constant"):
        correlation_matrix(X, arm_names=["A", "B", "C"])


# ------------------------------------------------------------------------------------------ real data
def _real_file(name):
    try:
        return find_data_file(name)
    except DataFileError:
        return None


@pytest.mark.skipif(
    _real_file(LIGHT_SENSOR_FILE) is None or _real_file(FINANCE_FILE) is None,
    reason="real data files not found (see shared/data/README.md; set CKB_DATA_DIR)",
)
def test_real_data_facts():
    """The published facts of digest 002-003 §3.2, §3.3, §5.2.5-6, §5.3 on the real files."""
    data_dir = _real_file(LIGHT_SENSOR_FILE).parent
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checksums must match the published ones
        light = make_problem("light-sensor", np.random.default_rng(0), data_dir=data_dir)
        raw = load_light_sensor(data_dir / LIGHT_SENSOR_FILE)
    assert raw.train.shape == (601, 41) and raw.test.shape == (192, 41) and raw.coords.shape == (41, 2)
    f = light.f_values
    assert light.domain.n == 41
    assert round(f.min(), 1) == 164.2 and round(f.max(), 1) == 945.5
    assert light.metadata["n_feasible"] == 19 == int(np.sum(f >= f.max() / 2))
    assert light.metadata["kernel_min_eigenvalue"] == pytest.approx(5.7e-5, rel=0.01)
    assert light.hints["R"] == pytest.approx(835.28, abs=0.01)
    np.testing.assert_allclose(light.kernel.matrix, np.corrcoef(raw.train, rowvar=False), atol=1e-12)

    fin_dir = _real_file(FINANCE_FILE).parent
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fin = make_problem("finance", np.random.default_rng(0), data_dir=fin_dir)
    md, f = fin.metadata, fin.f_values
    assert fin.domain.n == 29 and md["n_days"] == 823
    assert (md["first_day"], md["last_day"]) == ("2016-01-04", "2019-04-10")
    assert md["tickers"][int(np.argmin(f))] == "GE" and round(f.min(), 2) == 20.04
    assert md["best_ticker"] == "BA" and round(f.max(), 2) == 237.33
    assert md["n_feasible"] == 15
    assert fin.hints["R"] == pytest.approx(203.29, abs=0.01)
    assert md["kernel_min_eigenvalue"] > 0
