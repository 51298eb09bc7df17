"""A damaged ``fin.csv`` is a one-line DataFileError; a changed but valid one is noted once, in one line.

The fixtures are generated: a table with the published layout (Date + the 29 published tickers, 823 days
from 2016-01-04 to 2019-04-10, positive prices) and the small custom tables of ``test_data.py``.
"""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ckb.problems.data as data_mod
from ckb.errors import DataFileError
from ckb.problems import make_problem
from ckb.problems.data import ENV_VAR, FINANCE_FILE, load_finance
from tests.problems.test_data import write_finance

TICKERS = (
    "AAPL AXP BA CAT CSCO CVX DIS GE GS HD IBM INTC JNJ JPM KO MCD MMM MRK MSFT NKE PFE PG TRV UNH UTX V "
    "VZ WMT XOM"
).split()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    # the record of files already noted (inherited by worker processes) starts empty and is restored
    name = getattr(data_mod, "_NOTED_ENV", None)
    if name:
        monkeypatch.setenv(name, "")


def published_like_rows(n_days=823):
    """Header and rows with the published layout; synthetic positive prices."""
    rng = np.random.default_rng(0)
    days = np.busday_offset("2016-01-04", np.arange(n_days), roll="forward").astype(str).tolist()
    days[-1] = "2019-04-10"
    prices = 50.0 + 100.0 * rng.random((n_days, len(TICKERS)))
    header = ["Date", *TICKERS]
    return header, [[d, *(f"{v:.4f}" for v in row)] for d, row in zip(days, prices)]


def write_rows(directory, header, rows):
    text = "\n".join(",".join(r) for r in [header, *rows]) + "\n"
    return write_finance(directory, text)


def load_quietly(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_finance(path)


def test_published_layout_fixture_loads(tmp_path):
    data = load_quietly(write_rows(tmp_path, *published_like_rows()))
    assert data.prices.shape == (823, 29) and data.tickers == tuple(TICKERS)


@pytest.mark.parametrize("keep", [2, 4, 822])
def test_published_file_cut_short_is_an_error(tmp_path, keep):
    header, rows = published_like_rows()
    path = write_rows(tmp_path, header, rows[:keep])
    with pytest.raises(DataFileError) as err:
        load_quietly(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and "823" in msg, msg
    with pytest.raises(DataFileError, match="823"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_problem("finance", np.random.default_rng(0), data_dir=tmp_path)


@pytest.mark.parametrize("drop", [29, 1, 8])
def test_published_file_missing_a_ticker_is_an_error(tmp_path, drop):
    header, rows = published_like_rows()
    cut = lambda r: r[:drop] + r[drop + 1 :]
    path = write_rows(tmp_path, cut(header), [cut(r) for r in rows])
    with pytest.raises(DataFileError) as err:
        load_quietly(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and "29" in msg and repr(header[drop]) in msg, msg


def test_published_file_with_extra_or_reordered_tickers_is_an_error(tmp_path):
    header, rows = published_like_rows()
    swap = lambda r: [r[0], r[2], r[1], *r[3:]]
    with pytest.raises(DataFileError, match="in the published order"):
        load_quietly(write_rows(tmp_path, swap(header), [swap(r) for r in rows]))
    with pytest.raises(DataFileError, match=r"'ZZZ'"):
        load_quietly(write_rows(tmp_path, [*header, "ZZZ"], [[*r, "1.0"] for r in rows]))


@pytest.mark.parametrize("price", ["-3.5", "0", "-0.0"])
@pytest.mark.parametrize("layout", ["published", "custom"])
def test_non_positive_price_is_an_error(tmp_path, price, layout):
    if layout == "published":
        header, rows = published_like_rows()
        rows[100][5] = price
        path, where = write_rows(tmp_path, header, rows), f"line 102 ({rows[100][0]}), {header[5]}"
    else:
        path = write_finance(tmp_path, f"Date,A,B\n2016-01-04,1,2\n2016-01-05,3,{price}\n2016-01-06,4,5\n")
        where = "line 3 (2016-01-05), B"
    with pytest.raises(DataFileError) as err:
        load_quietly(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and where in msg and "positive" in msg, msg


def test_changed_valid_file_is_noted_once_in_one_line(tmp_path, capfd):
    header, rows = published_like_rows()
    path = write_rows(tmp_path, header, rows)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # no help from Python's own once-per-location filter
        load_finance(path)
        load_finance(path)
        make_problem("finance", np.random.default_rng(0), data_dir=tmp_path)
    assert len(caught) == 1, [str(w.message) for w in caught]
    w = caught[0]
    assert issubclass(w.category, UserWarning) and "not the published" in str(w.message)
    shown = warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
    assert shown.count("\n") == 1 and str(path) in shown, shown  # one line, no source line
    # a process started afterwards (a sweep's spawned workers) does not repeat it
    code = (
        "import warnings; warnings.simplefilter('always'); from ckb.problems.data import load_finance; "
        f"load_finance({str(path)!r})"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0 and "not the published" not in out.stderr, out.stderr
    # the file changed again: a new note
    path.write_text(path.read_text().replace(rows[3][4], "77.0"))
    with pytest.warns(UserWarning, match="not the published"):
        load_finance(path)


def test_custom_small_table_still_loads_with_a_note(tmp_path):
    path = write_finance(tmp_path)
    with pytest.warns(UserWarning, match="not the published"):
        data = load_finance(path)
    assert data.prices.shape == (6, 4)
    assert FINANCE_FILE == path.name


@pytest.mark.parametrize("price", ["1e308", "1e101"])
def test_absurdly_large_price_is_an_error(tmp_path, price):
    # finite, but its square (the statistics of the problem) overflows: the run used to fail much later
    header, rows = published_like_rows()
    rows[9][3] = price
    path = write_rows(tmp_path, header, rows)
    with pytest.raises(DataFileError) as err:
        load_quietly(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and f"line 11 ({rows[9][0]}), {header[3]}" in msg, msg
    assert "1e+100" in msg, msg
