"""The Sobol design silenced SciPy's "balance properties" warning with ``warnings.catch_warnings``, which
changes the process's warning filters and is not thread-safe: under ``optimize(n_jobs=2)`` the warning
leaked (seen once in the clean-clone CI). The design is now drawn as a power of 2 and cut, so there is no
warning to silence; its points are those of ``random(n)``, bit for bit."""

import warnings

import numpy as np
import pytest
from scipy.stats import qmc

from ckb.optimizer.space import _sobol_unit


def _forbidden(*args, **kwargs):
    raise AssertionError("the process's warning filters were changed (not thread-safe)")


@pytest.mark.parametrize("d, n, seed", [(2, 6, 0), (7, 16, 3), (6, 14, 5), (1, 1, 2), (3, 100, 9)])
def test_the_design_is_the_sequence_and_touches_no_warning_filter(d, n, seed, monkeypatch, recwarn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = qmc.Sobol(d, scramble=True, rng=np.random.default_rng(seed)).random(n)
    monkeypatch.setattr(warnings, "catch_warnings", _forbidden)
    got = _sobol_unit(d, n, seed)
    np.testing.assert_array_equal(got, expected)
    assert not [w for w in recwarn if "balance properties" in str(w.message)]
