"""Locating and loading the real data sets of the primal-dual papers' experiments.

Two files, both from the public code repository of Chowdhury & Gopalan (NeurIPS 2019, "Bayesian
Optimization under Heavy-tailed Payoffs"), ``sayakrc/Bayesian-Optimization-under-Heavy-tailed-Payoffs``
on GitHub, which the primal-dual CKB papers (Zhou & Ji (2022) and the CBO paper) follow. That repository
has no licence file, so ckb never ships the data: it reads them from a directory.

- ``iw_data_all.mat``: light-sensor readings of the CMU Intelligent Workplace (Nov 2005, A. Krause);
  ``data.train.sensordata`` 601 x 41, ``data.test.sensordata`` 192 x 41, ``data.coords`` 41 x 2.
- ``fin.csv``: adjusted daily close of 29 Dow Jones stocks, 823 trading days (2016-01-04 .. 2019-04-10);
  columns ``Date`` and the 29 tickers.

Where the data are looked for (:func:`find_data_file`), first match wins:

1. an explicit ``data_dir`` argument (e.g. ``make_problem("finance", rng, data_dir="/data/ckb")``, or
   ``data_dir = "..."`` in an experiment spec's ``[problem]`` table);
2. the environment variable ``CKB_DATA_DIR``;
3. ``shared/data`` beside the project checkout (:func:`default_data_dir`).

A ``data_dir`` that is not a path (``3``, ``""``) is an :class:`~ckb.errors.InvalidInputError` naming it.
A missing file raises :class:`~ckb.errors.DataFileError` saying what the file is, where it comes from,
where it was looked for and how to point ckb at it; a file in the wrong format, with missing fields,
wrong shapes or non-finite values raises the same error saying what was expected. For ``fin.csv``: every
price must be positive (and at most 1e100), and a table that is recognizably the published one (its
header is the published Date + 29 tickers, or its days run from 2016-01-04 to 2019-04-10) must be all of
it, the 29 tickers in the published order and the 823 days (a cut or a lost column is an error, not a
smaller data set); other price tables (e.g. a few stocks of one's own) are loaded as they are. A file
whose SHA-256 differs from the published one (``../shared/data/README.md``) is loaded with a one-line
warning, given once per file content (also across the worker processes a sweep starts afterwards): it
may be a legitimate copy re-saved by another tool, but results will not be comparable with the papers'.
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
import reprlib
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ckb.errors import DataFileError, InvalidInputError

#: environment variable naming the data directory
ENV_VAR = "CKB_DATA_DIR"
#: the public repository both files come from
SOURCE_REPOSITORY = "sayakrc/Bayesian-Optimization-under-Heavy-tailed-Payoffs"

LIGHT_SENSOR_FILE = "iw_data_all.mat"
FINANCE_FILE = "fin.csv"

#: SHA-256 of the files as published (data README)
EXPECTED_SHA256 = {
    LIGHT_SENSOR_FILE: "3d87e03ae8bc9e3f0a4abeb57c64933c7d3dee7476ac5c4f6ca28b4efc357c15",
    FINANCE_FILE: "e9f7d7c3a0ad4ada75e5b8fa3830c77ed0579232b45837438c671d83b1818199",
}

#: the published ``fin.csv``: its tickers (in order), number of trading days, first and last day
FINANCE_TICKERS = tuple(
    "AAPL AXP BA CAT CSCO CVX DIS GE GS HD IBM INTC JNJ JPM KO MCD MMM MRK MSFT NKE PFE PG TRV UNH UTX V VZ "
    "WMT XOM".split()
)
FINANCE_DAYS = 823
FINANCE_FIRST_DAY, FINANCE_LAST_DAY = "2016-01-04", "2019-04-10"
#: no price is larger (the problem squares prices for its statistics: 1e308 overflowed much later)
_MAX_PRICE = 1e100

_DESCRIPTION = {
    LIGHT_SENSOR_FILE: (
        "the light-sensor readings of the CMU Intelligent Workplace (Nov 2005; MATLAB v5 file with "
        "data.train.sensordata 601x41 and data.test.sensordata 192x41)"
    ),
    FINANCE_FILE: (
        "the adjusted daily close of 29 Dow Jones stocks, 2016-01-04 to 2019-04-10 (CSV: Date + 29 tickers, "
        "823 rows)"
    ),
}


# ---------------------------------------------------------------------------------------- locating
def _checkout_candidates() -> list[Path]:
    """``shared/data`` beside the checkout: walking up from the package, then from the working directory."""
    package = Path(__file__).resolve().parents[1]  # the ckb package: this file is ckb/problems/data.py
    out: list[Path] = []
    for parent in (package, *package.parents):
        # an editable install lives in CHECKOUT/src/ckb: CHECKOUT/../shared/data is the shared directory
        out.append(parent.parent / "shared" / "data")
    cwd = Path.cwd()
    out += [cwd.parent / "shared" / "data", cwd / "shared" / "data"]
    return list(dict.fromkeys(out))  # drop repeats, keep the order


def default_data_dir() -> Path | None:
    """The data directory used when no ``data_dir`` is given, or ``None`` if there is none.

    ``$CKB_DATA_DIR`` if set and non-empty (returned even if it does not exist, so that a mistyped
    setting is reported rather than silently bypassed); otherwise the first existing directory among
    ``PARENT/../shared/data`` for each parent of the installed package (the editable install of a
    checkout ``X`` lives in ``X/src/ckb``, so this finds ``X/../shared/data``), ``CWD/../shared/data`` and
    ``CWD/shared/data``.
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    for candidate in _checkout_candidates():
        if candidate.is_dir():
            return candidate
    return None


def find_data_file(filename: str, data_dir: str | os.PathLike | None = None) -> Path:
    """Path of ``filename`` in ``data_dir`` (else :func:`default_data_dir`); :class:`DataFileError` if absent,
    :class:`InvalidInputError` if ``data_dir`` is not a path."""
    if data_dir is not None:
        directory, how = _data_dir_path(data_dir, filename), "the data_dir argument"
    elif os.environ.get(ENV_VAR, "").strip():
        directory, how = default_data_dir(), f"the environment variable {ENV_VAR}"
    else:
        directory, how = default_data_dir(), "the default: shared/data beside the project checkout"
    if directory is not None and directory.is_file():
        raise DataFileError(
            f"data_dir must be the directory that contains {filename!r}, got the file {directory} (from {how})."
        )
    if directory is not None and (directory / filename).is_file():
        return directory / filename
    if directory is not None and (directory / filename).exists():  # before: "not found", yet it is there
        raise DataFileError(
            f"data file {str(directory / filename)!r} is a directory or another non-file (from {how}), "
            "expected the file itself: put the file there, or point data_dir elsewhere."
        )
    if directory is None:
        searched = "no data directory was found; looked for " + ", ".join(
            str(p) for p in _checkout_candidates()
        )
    else:
        searched = f"looked in {directory} (from {how})"
    raise DataFileError(f"data file {filename!r} not found: {searched}. {_about(filename)}")


def _data_dir_path(data_dir, filename: str) -> Path:
    """``data_dir`` as a path: a non-empty string or an ``os.PathLike`` of one, else an error naming it."""
    text = os.fspath(data_dir) if isinstance(data_dir, os.PathLike) else data_dir
    if not isinstance(text, str) or not text.strip():
        raise InvalidInputError(
            f"data_dir must be a path (a non-empty string naming the directory that holds {filename!r}), "
            f"got {reprlib.repr(data_dir)} ({type(data_dir).__name__})."
        )
    return Path(text).expanduser()


def _about(filename: str) -> str:
    """What the file is, where it comes from and how to point ckb at it (for error messages)."""
    return (
        f"It is {_DESCRIPTION.get(filename, 'a ckb data file')}, from the public GitHub repository "
        f"{SOURCE_REPOSITORY} (see shared/data/README.md; ckb does not ship it because that repository has "
        f"no licence). Put {filename} in a directory and pass data_dir='/path/to/dir' (in a spec: data_dir "
        f"under [problem]) or set {ENV_VAR}=/path/to/dir."
    )


# ------------------------------------------------------------------------------ inputs of a problem
#: registered problem name -> the data files it reads (found by :func:`find_data_file` with the problem's
#: ``data_dir`` parameter). Their content digests are part of every trial's configuration
#: (:func:`problem_inputs`, ``TrialConfig.inputs``), so traces computed from other data are never reused.
DATA_FILES: dict[str, tuple[str, ...]] = {"light-sensor": (LIGHT_SENSOR_FILE,), "finance": (FINANCE_FILE,)}


def register_data_files(problem: str, *filenames: str) -> None:
    """Declare that the registered problem ``problem`` reads ``filenames`` (from its ``data_dir``, else
    ``$CKB_DATA_DIR``, else the default directory), so their digests enter its trials' configuration hash."""
    DATA_FILES[problem] = tuple(filenames)


def _canonical(problem: str) -> str:
    from ckb.errors import UnknownNameError
    from ckb.problems import PROBLEMS

    try:
        return PROBLEMS.canonical(problem)
    except UnknownNameError:
        return problem


def problem_inputs(problem: str, params: dict | None = None) -> dict[str, str]:
    """``{file name: SHA-256}`` of every data file the problem ``problem`` with parameters ``params`` reads
    (empty for a problem without data files); :class:`DataFileError` if one is missing."""
    files = DATA_FILES.get(_canonical(problem), ())
    data_dir = (params or {}).get("data_dir")
    return {name: _digest(find_data_file(name, data_dir)) for name in files}


_DIGESTS: dict[tuple[str, int, int], str] = {}


def _digest(path: Path) -> str:
    """SHA-256 of ``path``, cached per (path, size, modification time)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = sha256_of(path)
    return _DIGESTS[key]


def check_inputs(problem: str, params: dict | None, expected: dict[str, str]) -> None:
    """Raise :class:`DataFileError` if a data file of ``problem`` no longer has the digest ``expected``
    (it changed between planning a sweep and running a trial)."""
    now = problem_inputs(problem, params)
    for name, digest in expected.items():
        if now.get(name) != digest:
            path = find_data_file(name, (params or {}).get("data_dir"))
            raise DataFileError(
                f"data file {path} changed while the experiment ran (SHA-256 {now.get(name)}, expected "
                f"{digest}); re-run the command to plan with the current file."
            )


# ---------------------------------------------------------------------------------------- loading
def sha256_of(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: environment variable listing the changed data files already noted (hashes of path and content). Worker
#: processes inherit it, so a sweep notes a file once, not once per process.
_NOTED_ENV = "_CKB_DATA_FILES_NOTED"


def _check_sha256(path: Path, digest: str, expected: str | None) -> None:
    """Warn, in one line and once per file content, that ``path`` is not the published file."""
    if expected is None or digest == expected:
        return
    key = hashlib.sha256(f"{path.resolve()}\0{digest}".encode()).hexdigest()[:16]
    noted = [k for k in os.environ.get(_NOTED_ENV, "").split(",") if k]
    if key in noted:
        return
    os.environ[_NOTED_ENV] = ",".join([*noted, key])
    # attributed to the data file itself (line 0: no source line is printed under the message)
    warnings.warn_explicit(
        f"{path} has SHA-256 {digest}, not the published {expected} (shared/data/README.md); "
        "it is loaded, but results may not be comparable with the papers'.",
        UserWarning,
        str(path),
        0,
        module=__name__,
    )


@dataclass(frozen=True)
class LightSensorData:
    """Light-sensor readings: rows are samples (time steps), columns the sensors (arms)."""

    train: np.ndarray  # (n_train, n_sensors), float
    test: np.ndarray  # (n_test, n_sensors), float
    coords: np.ndarray | None  # (n_sensors, 2) sensor positions, if the file has them
    note: str
    path: Path
    sha256: str


@dataclass(frozen=True)
class FinanceData:
    """Daily prices: rows are trading days, columns the stocks (arms)."""

    dates: tuple[str, ...]
    tickers: tuple[str, ...]
    prices: np.ndarray  # (n_days, n_stocks), float
    path: Path
    sha256: str


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _numeric_table(value, where: str, path: Path, expected: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataFileError(f"{path}: {where} must be a numeric matrix ({expected}), got dtype {arr.dtype}.")
    if arr.ndim != 2 or arr.shape[0] < 2 or arr.shape[1] < 2:
        raise DataFileError(
            f"{path}: {where} must be a 2-D matrix with at least 2 rows and 2 columns ({expected}), "
            f"got shape {arr.shape}."
        )
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)):
        r, c = np.argwhere(~np.isfinite(arr))[0]
        raise DataFileError(
            f"{path}: {where} must be finite ({expected}), but row {r}, column {c} is {arr[r, c]}."
        )
    return arr


def _field(obj, dotted: str, path: Path):
    cur, done = obj, "data"
    for name in dotted.split(".")[1:]:
        if not hasattr(cur, name):
            raise DataFileError(
                f"{path}: field {done}.{name} is missing (expected the structure of {LIGHT_SENSOR_FILE}: "
                "data.train.sensordata and data.test.sensordata, samples x sensors)."
            )
        cur, done = getattr(cur, name), f"{done}.{name}"
    return cur


def load_light_sensor(
    path: str | os.PathLike, *, expected_sha256: str | None = EXPECTED_SHA256[LIGHT_SENSOR_FILE]
) -> LightSensorData:
    """Read ``iw_data_all.mat`` (``scipy.io.loadmat(squeeze_me=True, struct_as_record=False)``).

    Returns the train and test tables as float arrays (the file stores ``uint16``). The two tables must
    have the same number of sensors; ``expected_sha256=None`` skips the checksum comparison.
    """
    import scipy.io

    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"light-sensor data file {path} does not exist. {_about(LIGHT_SENSOR_FILE)}")
    try:
        digest = sha256_of(path)
        mat = scipy.io.loadmat(path, squeeze_me=True, struct_as_record=False)
    except Exception as exc:  # scipy raises ValueError, TypeError, MatReadError, ... on non-MAT input
        raise DataFileError(
            f"{path} is not a readable MATLAB file ({type(exc).__name__}: {exc}); expected "
            f"{_DESCRIPTION[LIGHT_SENSOR_FILE]}."
        ) from exc
    if "data" not in mat:
        found = sorted(k for k in mat if not k.startswith("__"))
        raise DataFileError(
            f"{path} has no variable 'data' (found {found}); expected the structure of {LIGHT_SENSOR_FILE}: "
            "data.train.sensordata and data.test.sensordata."
        )
    data = mat["data"]
    expect = "samples x sensors"
    train = _numeric_table(_field(data, "data.train.sensordata", path), "data.train.sensordata", path, expect)
    test = _numeric_table(_field(data, "data.test.sensordata", path), "data.test.sensordata", path, expect)
    if train.shape[1] != test.shape[1]:
        raise DataFileError(
            f"{path}: data.train.sensordata has {train.shape[1]} sensors (columns) but data.test.sensordata "
            f"has {test.shape[1]}; both must be samples x sensors with the same sensors."
        )
    coords = None
    if hasattr(data, "coords"):
        coords = np.asarray(data.coords)
        if coords.shape != (train.shape[1], 2) or not np.issubdtype(coords.dtype, np.number):
            raise DataFileError(
                f"{path}: data.coords must be a numeric {train.shape[1]} x 2 matrix (one position per sensor), "
                f"got shape {coords.shape} and dtype {coords.dtype}."
            )
        coords = _readonly(coords)
    note = getattr(data, "note", "")
    _check_sha256(path, digest, expected_sha256)
    return LightSensorData(
        _readonly(train), _readonly(test), coords, note if isinstance(note, str) else "", path, digest
    )


def load_finance(
    path: str | os.PathLike, *, expected_sha256: str | None = EXPECTED_SHA256[FINANCE_FILE]
) -> FinanceData:
    """Read ``fin.csv``: a header ``Date,TICKER,...`` and one row per trading day, no missing values.

    ``expected_sha256=None`` skips the checksum comparison.
    """
    path = Path(path)
    if not path.is_file():
        raise DataFileError(f"finance data file {path} does not exist. {_about(FINANCE_FILE)}")
    expected = "a CSV with a header Date,TICKER,... and one row of prices per day"
    try:
        digest = sha256_of(path)
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataFileError(
            f"{path} is not a readable CSV file ({type(exc).__name__}: {exc}); expected {expected}."
        ) from exc
    rows = [r for r in rows if any(cell.strip() for cell in r)]  # tolerate blank lines
    if not rows:
        raise DataFileError(f"{path} is empty; expected {expected}.")
    header = [c.strip() for c in rows[0]]
    if header[0].lstrip("\ufeff").lower() != "date" or len(header) < 3:
        raise DataFileError(
            f"{path}: the header must start with 'Date' and name at least 2 stocks ({expected}), "
            f"got {header[:5]}{'...' if len(header) > 5 else ''}."
        )
    tickers = header[1:]
    if any(not t for t in tickers) or len(set(tickers)) != len(tickers):
        raise DataFileError(
            f"{path}: ticker names in the header must be non-empty and distinct, got {tickers}."
        )
    if len(rows) < 3:
        raise DataFileError(f"{path} has {len(rows) - 1} row(s) of prices; expected at least 2 ({expected}).")
    dates: list[str] = []
    prices = np.empty((len(rows) - 1, len(tickers)))
    for i, row in enumerate(rows[1:]):
        line = i + 2  # 1-based, after the header
        if len(row) != len(header):
            raise DataFileError(
                f"{path}, line {line}: {len(row)} fields, expected {len(header)} (Date + {len(tickers)} prices)."
            )
        dates.append(row[0].strip())
        for j, cell in enumerate(row[1:]):
            try:
                v = float(cell)
            except ValueError:
                raise DataFileError(
                    f"{path}, line {line} ({row[0].strip()}), {tickers[j]}: {cell!r} is not a number "
                    "(prices must be numeric, no missing values)."
                ) from None
            if not math.isfinite(v):
                raise DataFileError(
                    f"{path}, line {line} ({row[0].strip()}), {tickers[j]}: price {cell!r} is not finite "
                    "(prices must be finite, no missing values)."
                )
            if not 0.0 < v <= _MAX_PRICE:
                raise DataFileError(
                    f"{path}, line {line} ({row[0].strip()}), {tickers[j]}: price {cell!r} is "
                    f"{'not positive' if v <= 0.0 else 'out of range'} (adjusted close prices must be > 0 "
                    f"and <= {_MAX_PRICE:g})."
                )
            prices[i, j] = v
    _check_finance_layout(path, tickers, dates)
    _check_sha256(path, digest, expected_sha256)
    return FinanceData(tuple(dates), tuple(tickers), _readonly(prices), path, digest)


def _check_finance_layout(path: Path, tickers: list[str], dates: list[str]) -> None:
    """A table that is recognizably the published ``fin.csv`` (its header, or its first and last day) must
    be all of it: the 29 tickers in the published order and the 823 days. Other tables pass."""
    published_header = tuple(tickers) == FINANCE_TICKERS
    published_span = (dates[0], dates[-1]) == (FINANCE_FIRST_DAY, FINANCE_LAST_DAY)
    if not (published_header or published_span):
        return
    expected = (
        f"expected the published table: Date + {len(FINANCE_TICKERS)} tickers ({FINANCE_TICKERS[0]} ... "
        f"{FINANCE_TICKERS[-1]}) and {FINANCE_DAYS} trading days from {FINANCE_FIRST_DAY} to {FINANCE_LAST_DAY}"
    )
    if not published_header:
        missing = [t for t in FINANCE_TICKERS if t not in tickers]
        extra = [t for t in tickers if t not in FINANCE_TICKERS]
        if not (missing or extra):
            raise DataFileError(
                f"{path}: the header names the {len(tickers)} published tickers, but not in the published "
                f"order; {expected}."
            )
        found = ", ".join(
            f"{label} {', '.join(repr(t) for t in names)}"
            for label, names in (("missing", missing), ("not published:", extra))
            if names
        )
        raise DataFileError(
            f"{path}: the header names {len(tickers)} stocks ({found}); {expected}. Restore the file from "
            f"{SOURCE_REPOSITORY}."
        )
    if len(dates) != FINANCE_DAYS or not published_span:
        raise DataFileError(
            f"{path} has {len(dates)} trading day(s), {dates[0]} to {dates[-1]}; {expected} (cut short?). "
            f"Restore the file from {SOURCE_REPOSITORY}."
        )
