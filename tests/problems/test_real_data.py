"""Real-data problems (light sensors, finance) and their loaders, on small generated fixtures.

The real files are never needed: only ``test_real_data_facts`` uses them, and is skipped when absent.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.io

import ckb
import ckb.data
from ckb.data import (
    ENV_VAR,
    FINANCE_FILE,
    LIGHT_SENSOR_FILE,
    SOURCE_REPOSITORY,
    default_data_dir,
    find_data_file,
    load_finance,
    load_light_sensor,
    sha256_of,
)
from ckb.errors import DataFileError, InvalidInputError
from ckb.problems import make_problem
from ckb.problems.real_data import correlation_matrix
from ckb.runner import Trial, TrialConfig

# fixtures are not the published files: their checksum warning is expected (tested once explicitly)
pytestmark = pytest.mark.filterwarnings("ignore:.*not the published.*:UserWarning")


# ------------------------------------------------------------------------------------------ fixtures
def light_tables(rng=None):
    rng = rng or np.random.default_rng(0)
    train = rng.integers(10, 900, size=(9, 5)).astype(np.uint16)
    # distinct values per test column, so a reading identifies its row
    test = (np.array([100, 300, 500, 700, 900]) + 7 * np.arange(6)[:, None] * np.arange(1, 6)).astype(
        np.uint16
    )
    return train, test


def write_light(directory: Path, train=None, test=None, **extra) -> Path:
    if train is None or test is None:
        train, test = light_tables()
    directory.mkdir(parents=True, exist_ok=True)
    data = {"train": {"sensordata": train}, "test": {"sensordata": test}, "note": "fixture"}
    data.update(extra)
    path = directory / LIGHT_SENSOR_FILE
    scipy.io.savemat(path, {"data": data})
    return path


PRICES = np.array(
    [
        [99.5, 63.8, 128.9, 20.5],
        [97.0, 62.9, 129.5, 21.0],
        [101.2, 61.0, 131.0, 20.2],
        [103.4, 65.5, 127.8, 19.9],
        [98.1, 64.2, 133.3, 22.4],
        [104.9, 66.0, 130.1, 21.7],
    ]
)
TICKERS = ["AAPL", "AXP", "BA", "GE"]


def write_finance(directory: Path, text: str | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    if text is None:
        lines = ["Date," + ",".join(TICKERS)]
        for d, row in enumerate(PRICES):
            lines.append(f"2016-01-{d + 4:02d}," + ",".join(repr(float(v)) for v in row))
        text = "\n".join(lines) + "\n"
    path = directory / FINANCE_FILE
    path.write_text(text)
    return path


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


# ------------------------------------------------------------------------------------------ loaders
def test_checksum_mismatch_warns_but_loads(tmp_path):
    path = write_finance(tmp_path)
    with pytest.warns(UserWarning, match="not the published e9f7d7c3"):
        data = load_finance(path)
    assert data.prices.shape == (6, 4) and data.tickers == tuple(TICKERS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_finance(path, expected_sha256=sha256_of(path))
        load_finance(path, expected_sha256=None)
    with pytest.warns(UserWarning, match="not the published 3d87e03a"):
        light = load_light_sensor(write_light(tmp_path))
    assert light.train.dtype == float and light.note == "fixture" and light.coords is None
    assert not light.test.flags.writeable


def test_missing_file_error_says_what_where_and_how(tmp_path):
    with pytest.raises(DataFileError) as err:
        make_problem("light-sensor", np.random.default_rng(0), data_dir=tmp_path)
    msg = str(err.value)
    for part in (
        LIGHT_SENSOR_FILE,
        str(tmp_path),
        "data_dir argument",
        SOURCE_REPOSITORY,
        "data_dir=",
        ENV_VAR,
        "light-sensor",
    ):
        assert part in msg, part
    assert isinstance(err.value, FileNotFoundError)
    with pytest.raises(DataFileError, match=r"fin\.csv.*29 Dow Jones"):
        find_data_file(FINANCE_FILE, tmp_path)
    with pytest.raises(DataFileError, match="does not exist.*CKB_DATA_DIR"):
        load_finance(tmp_path / "nope.csv")
    f = write_finance(tmp_path)
    with pytest.raises(DataFileError, match="must be the directory"):
        find_data_file(FINANCE_FILE, f)


@pytest.mark.parametrize(
    ("contents", "match"),
    [
        (b"this is not a MATLAB file at all", "not a readable MATLAB file"),
        (b"", "not a readable MATLAB file"),
    ],
)
def test_corrupt_mat_file(tmp_path, contents, match):
    (tmp_path / LIGHT_SENSOR_FILE).write_bytes(contents)
    with pytest.raises(DataFileError, match=match):
        make_problem("light-sensor", np.random.default_rng(0), data_dir=tmp_path)


def test_mat_structure_errors(tmp_path):
    train, test = light_tables()
    path = tmp_path / LIGHT_SENSOR_FILE
    scipy.io.savemat(path, {"other": np.eye(3)})
    with pytest.raises(DataFileError, match=r"no variable 'data' \(found \['other'\]\)"):
        load_light_sensor(path)
    scipy.io.savemat(path, {"data": {"train": {"sensordata": train}, "test": {"readings": test}}})
    with pytest.raises(DataFileError, match=r"field data\.test\.sensordata is missing"):
        load_light_sensor(path)
    write_light(tmp_path, train, test[:, :4])
    with pytest.raises(DataFileError, match=r"train\.sensordata has 5 sensors .*test\.sensordata has 4"):
        load_light_sensor(path)
    write_light(tmp_path, train, test[0])  # one row: 1-D after squeeze_me
    with pytest.raises(DataFileError, match=r"test\.sensordata must be a 2-D matrix .* got shape \(5,\)"):
        load_light_sensor(path)
    bad = train.astype(float)
    bad[4, 2] = np.nan
    write_light(tmp_path, bad, test)
    with pytest.raises(DataFileError, match=r"train\.sensordata must be finite .* row 4, column 2 is nan"):
        load_light_sensor(path)
    write_light(tmp_path, train, np.array([["a", "b"], ["c", "d"]]))
    with pytest.raises(DataFileError, match="must be a numeric matrix"):
        load_light_sensor(path)
    write_light(tmp_path, train, test, coords=np.ones((4, 2)))
    with pytest.raises(DataFileError, match=r"data\.coords must be a numeric 5 x 2 matrix"):
        load_light_sensor(path)
    write_light(tmp_path, train, test, coords=np.ones((5, 2)))
    assert load_light_sensor(path).coords.shape == (5, 2)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "is empty"),
        ("Day,A,B\n1,2,3\n4,5,6\n", "header must start with 'Date'"),
        ("Date,A,A\n1,2,3\n4,5,6\n", "non-empty and distinct"),
        ("Date,A,B\n2016-01-04,1,2\n", "has 1 row"),
        ("Date,A,B\n2016-01-04,1,2\n2016-01-05,3\n", "line 3: 2 fields, expected 3"),
        ("Date,A,B\n2016-01-04,1,2\n2016-01-05,3,abc\n", r"line 3 \(2016-01-05\), B: 'abc' is not a number"),
        ("Date,A,B\n2016-01-04,1,\n2016-01-05,3,4\n", r"line 2 \(2016-01-04\), B: '' is not a number"),
        ("Date,A,B\n2016-01-04,1,2\n2016-01-05,nan,4\n", r"A: price 'nan' is not finite"),
    ],
)
def test_corrupt_csv(tmp_path, text, match):
    write_finance(tmp_path, text)
    with pytest.raises(DataFileError, match=match):
        make_problem("finance", np.random.default_rng(0), data_dir=tmp_path)


def test_binary_csv_is_unreadable(tmp_path):
    (tmp_path / FINANCE_FILE).write_bytes(b"\xff\xfe\x00\x81garbage")
    with pytest.raises(DataFileError, match="not a readable CSV file"):
        load_finance(tmp_path / FINANCE_FILE)


def test_constant_stock_is_reported(tmp_path):
    write_finance(tmp_path, "Date,A,B,C\nd1,1,5,2\nd2,2,5,1\nd3,4,5,3\n")
    with pytest.raises(DataFileError, match="'B' is constant over all 3 rows"):
        make_problem("finance", np.random.default_rng(0), data_dir=tmp_path)


# ------------------------------------------------------------------------------------------ locating
def test_data_dir_argument_beats_env_var(tmp_path, monkeypatch):
    env_dir, arg_dir = tmp_path / "env", tmp_path / "arg"
    write_finance(env_dir, "Date,A,B\nd1,150,2\nd2,250,4\n")
    write_finance(arg_dir)
    monkeypatch.setenv(ENV_VAR, str(env_dir))
    assert default_data_dir() == env_dir
    assert find_data_file(FINANCE_FILE) == env_dir / FINANCE_FILE
    assert make_problem("finance", np.random.default_rng(0)).f_values.tolist() == [200.0, 3.0]
    assert find_data_file(FINANCE_FILE, arg_dir) == arg_dir / FINANCE_FILE
    np.testing.assert_allclose(
        make_problem("finance", np.random.default_rng(0), data_dir=arg_dir).f_values, PRICES.mean(0)
    )
    # a set but wrong CKB_DATA_DIR is reported, not silently bypassed
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(DataFileError, match=f"missing \\(from the environment variable {ENV_VAR}\\)"):
        find_data_file(FINANCE_FILE)


def test_default_dir_beside_an_editable_checkout(tmp_path, monkeypatch):
    # layout: ROOT/checkout/src/ckb/__init__.py and ROOT/shared/data
    shared = tmp_path / "root" / "shared" / "data"
    write_finance(shared)
    fake = tmp_path / "root" / "checkout" / "src" / "ckb" / "__init__.py"
    monkeypatch.setattr(ckb, "__file__", str(fake))
    monkeypatch.chdir(tmp_path)
    assert default_data_dir() == shared
    assert find_data_file(FINANCE_FILE) == shared / FINANCE_FILE


def test_default_dir_from_working_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(ckb, "__file__", str(tmp_path / "venv" / "site-packages" / "ckb" / "__init__.py"))
    # the walk up from the package also reaches tmp_path's ancestors (a stray /tmp/shared/data would win
    # there): keep the candidates inside tmp_path, in the order the function gives them
    candidates = ckb.data._checkout_candidates
    monkeypatch.setattr(
        ckb.data, "_checkout_candidates", lambda: [p for p in candidates() if p.is_relative_to(tmp_path)]
    )
    proj = tmp_path / "w" / "proj"
    (proj / "shared" / "data").mkdir(parents=True)
    monkeypatch.chdir(proj)
    assert default_data_dir() == proj / "shared" / "data"  # CWD/shared/data
    (tmp_path / "w" / "shared" / "data").mkdir(parents=True)
    assert default_data_dir() == tmp_path / "w" / "shared" / "data"  # CWD/../shared/data comes first


def test_no_data_dir_anywhere_lists_the_places_searched(tmp_path, monkeypatch):
    places = [tmp_path / "a" / "shared" / "data", tmp_path / "b" / "shared" / "data"]
    monkeypatch.setattr(ckb.data, "_checkout_candidates", lambda: places)
    assert default_data_dir() is None
    with pytest.raises(DataFileError, match="no data directory was found; looked for") as err:
        make_problem("light-sensor", np.random.default_rng(0))
    assert all(str(p) in str(err.value) for p in places)
    assert SOURCE_REPOSITORY in str(err.value) and ENV_VAR in str(err.value)


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
