"""Locating and loading the real data files (:mod:`ckb.problems.data`), on small generated fixtures.

The real files are never needed; the fixtures here are shared with ``tests/problems/test_real_data.py``.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.io

import ckb.problems.data
from ckb.errors import DataFileError
from ckb.problems import make_problem
from ckb.problems.data import (
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
    # layout: ROOT/checkout/src/ckb/problems/data.py and ROOT/shared/data
    shared = tmp_path / "root" / "shared" / "data"
    write_finance(shared)
    fake = tmp_path / "root" / "checkout" / "src" / "ckb" / "problems" / "data.py"
    monkeypatch.setattr(ckb.problems.data, "__file__", str(fake))
    monkeypatch.chdir(tmp_path)
    assert default_data_dir() == shared
    assert find_data_file(FINANCE_FILE) == shared / FINANCE_FILE


def test_default_dir_from_working_directory(tmp_path, monkeypatch):
    fake = tmp_path / "venv" / "site-packages" / "ckb" / "problems" / "data.py"
    monkeypatch.setattr(ckb.problems.data, "__file__", str(fake))
    # the walk up from the package also reaches tmp_path's ancestors (a stray /tmp/shared/data would win
    # there): keep the candidates inside tmp_path, in the order the function gives them
    candidates = ckb.problems.data._checkout_candidates
    monkeypatch.setattr(
        ckb.problems.data,
        "_checkout_candidates",
        lambda: [p for p in candidates() if p.is_relative_to(tmp_path)],
    )
    proj = tmp_path / "w" / "proj"
    (proj / "shared" / "data").mkdir(parents=True)
    monkeypatch.chdir(proj)
    assert default_data_dir() == proj / "shared" / "data"  # CWD/shared/data
    (tmp_path / "w" / "shared" / "data").mkdir(parents=True)
    assert default_data_dir() == tmp_path / "w" / "shared" / "data"  # CWD/../shared/data comes first


def test_no_data_dir_anywhere_lists_the_places_searched(tmp_path, monkeypatch):
    places = [tmp_path / "a" / "shared" / "data", tmp_path / "b" / "shared" / "data"]
    monkeypatch.setattr(ckb.problems.data, "_checkout_candidates", lambda: places)
    assert default_data_dir() is None
    with pytest.raises(DataFileError, match="no data directory was found; looked for") as err:
        make_problem("light-sensor", np.random.default_rng(0))
    assert all(str(p) in str(err.value) for p in places)
    assert SOURCE_REPOSITORY in str(err.value) and ENV_VAR in str(err.value)


# ------------------------------------------------------------------------------- inputs of a problem
def test_problem_inputs_are_the_digest_of_the_file_the_problem_reads(tmp_path, monkeypatch):
    from ckb.problems.data import problem_inputs

    path = write_finance(tmp_path / "a")
    assert problem_inputs("finance", {"data_dir": str(tmp_path / "a")}) == {FINANCE_FILE: sha256_of(path)}
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "a"))
    assert problem_inputs("finance", {}) == {FINANCE_FILE: sha256_of(path)}
    assert problem_inputs("rkhs-synthetic", {}) == {}  # no data files
    # a changed file (every price x 1.5) has another digest, even at the same path
    path.write_text(path.read_text().replace("99.5", "149.25"))
    assert problem_inputs("finance", {})[FINANCE_FILE] == sha256_of(path)
