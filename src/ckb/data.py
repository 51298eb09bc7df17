"""Deprecated alias of :mod:`ckb.problems.data` (real-data loading serves only the problems).

``import ckb.data`` keeps working and warns once (``DeprecationWarning``); every name, public or not, is
the one of :mod:`ckb.problems.data`. Import from ``ckb.problems.data`` instead.
"""

from __future__ import annotations

import warnings
from typing import Any

from ckb.problems import data as _data
from ckb.problems.data import (
    ENV_VAR,
    EXPECTED_SHA256,
    FINANCE_FILE,
    LIGHT_SENSOR_FILE,
    SOURCE_REPOSITORY,
    FinanceData,
    LightSensorData,
    default_data_dir,
    find_data_file,
    load_finance,
    load_light_sensor,
    sha256_of,
)

__all__ = [
    "ENV_VAR",
    "EXPECTED_SHA256",
    "FINANCE_FILE",
    "LIGHT_SENSOR_FILE",
    "SOURCE_REPOSITORY",
    "FinanceData",
    "LightSensorData",
    "default_data_dir",
    "find_data_file",
    "load_finance",
    "load_light_sensor",
    "sha256_of",
]

warnings.warn(
    "ckb.data is deprecated and will be removed; import from ckb.problems.data instead.",
    DeprecationWarning,
    stacklevel=2,
)


def __getattr__(name: str) -> Any:
    """Any other name of :mod:`ckb.problems.data` (private helpers included)."""
    try:
        return getattr(_data, name)
    except AttributeError:
        raise AttributeError(f"module 'ckb.data' has no attribute {name!r}") from None
