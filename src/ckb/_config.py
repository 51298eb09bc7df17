"""Trial configurations: the seeded, hashable description of one run (single- or multi-agent).

Seeds are derived deterministically from ``(seed, trial)`` with numpy's ``SeedSequence``: stream ``k`` of
trial ``i`` is ``SeedSequence(seed, spawn_key=(i, k))``. A light module (numpy only), because the
multi-agent harness imports it in every Ray actor.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

import numpy as np

from ckb._validation import check_scalar
from ckb.io import _json_default


class SeededConfig:
    """Shared behaviour of trial configurations (dataclasses with ``horizon``, ``trial`` and ``seed``):
    validation, the configuration hash (everything but the fields in ``_hash_exclude``) and the seeded
    random streams (``SeedSequence(seed, spawn_key=(trial, stream))``, see the module docstring)."""

    _hash_exclude: tuple[str, ...] = ("trial",)

    def __post_init__(self) -> None:
        # a whole float (6.0, as TOML or JSON may give) is stored as the int it is: numpy's seeding and
        # array shapes refuse floats, and the hash of 6.0 would differ from that of 6
        for name, label, low in (("horizon", "horizon (T)", 1), ("trial", "trial", 0), ("seed", "seed", 0)):
            value = check_scalar(getattr(self, name), label, low=low, integer=True)
            object.__setattr__(self, name, int(value))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def config_hash(self) -> str:
        """Hash of what determines the numbers (not the trial index)."""
        d = self.to_dict()
        for key in self._hash_exclude:
            d.pop(key)
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=_exact).encode()).hexdigest()[:16]

    def rng(self, stream: int) -> np.random.Generator:
        return np.random.default_rng(
            np.random.SeedSequence(entropy=self.seed, spawn_key=(self.trial, stream))
        )


def _exact(obj: Any) -> Any:
    """How :meth:`SeededConfig.config_hash` writes what JSON does not know: a numpy array as its exact
    values (``str`` abbreviated arrays of more than 1,000 entries and rounded to 8 digits, so two different
    problems had one hash and a sweep reused the other's trace), a numpy scalar as the Python number (a
    ``np.int64(3)`` seed hashed as the text "3"), anything else as its text (a kernel)."""
    try:
        return _json_default(obj)  # numpy arrays and scalars, as every ckb JSON file writes them
    except TypeError:
        return str(obj)
