"""Observation models: how a noisy reward ``y`` and constraint observations ``c`` arise from the truth.

``sample(rng, index, f, g)`` gets the true values at the played point (``index`` is the arm, or -1
on a continuous box) and returns ``(y, c)``. Three models cover the papers:

- :class:`GaussianNoise`: ``y = f + N(0, σ_f²)``, ``c_j = g_j + N(0, σ_g²)`` independently (σ = 0: exact);
- :class:`UniformNoise`: bounded noise ``U[-a, a]``;
- :class:`GaussianRewardNoise`: Gaussian reward noise with the constraint observed exactly, with
  Gaussian noise, or with bounded uniform noise (the experiments of Shi & Eryilmaz (2022), App. E.1.1,
  E.1.2 / E.2.2);
- :class:`ResampledReadings`: real data; a pull of arm ``i`` returns the reading of arm ``i`` on a
  uniformly random row of a recorded table (the light-sensor and finance set-ups of Chowdhury &
  Gopalan 2019 that the primal-dual papers follow). Constraint observations are either affine in the
  same reading (``c_j = a_j y + b_j``, e.g. ``c = h - y`` for ``g = -f + h``) or carry their own noise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ckb._validation import check_finite_array, check_noise_scale
from ckb.errors import InvalidInputError


class ObservationModel:
    def sample(
        self, rng: np.random.Generator, index: int, f: float, g: np.ndarray
    ) -> tuple[float, np.ndarray]:
        raise NotImplementedError  # pragma: no cover

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError  # pragma: no cover


class GaussianNoise(ObservationModel):
    """Independent Gaussian noise with standard deviations ``reward_std`` and ``constraint_std``."""

    def __init__(self, reward_std: float = 0.1, constraint_std: float | list[float] = 0.1) -> None:
        self.reward_std = check_noise_scale(reward_std, "reward_std")
        self.constraint_std = np.atleast_1d(check_finite_array(constraint_std, "constraint_std"))
        for s in self.constraint_std:
            check_noise_scale(float(s), "constraint_std")

    def sample(self, rng, index, f, g):
        y = f + self.reward_std * rng.standard_normal() if self.reward_std else f
        c = g + self.constraint_std * rng.standard_normal(g.shape[0]) if g.shape[0] else g.copy()
        return float(y), c

    def to_dict(self):
        cs = self.constraint_std.tolist()
        return {
            "type": "gaussian",
            "reward_std": self.reward_std,
            "constraint_std": cs[0] if len(cs) == 1 else cs,
        }


class UniformNoise(ObservationModel):
    """Bounded noise: ``y = f + U[-a_f, a_f]``, ``c_j = g_j + U[-a_g, a_g]``."""

    def __init__(self, reward_half_width: float = 0.1, constraint_half_width: float = 0.1) -> None:
        self.a_f = check_noise_scale(reward_half_width, "reward_half_width")
        self.a_g = check_noise_scale(constraint_half_width, "constraint_half_width")

    def sample(self, rng, index, f, g):
        y = f + rng.uniform(-self.a_f, self.a_f)
        c = g + rng.uniform(-self.a_g, self.a_g, g.shape[0])
        return float(y), c

    def to_dict(self):
        return {"type": "uniform", "reward_half_width": self.a_f, "constraint_half_width": self.a_g}


class GaussianRewardNoise(ObservationModel):
    """``y = f + N(0, reward_std²)``; ``c_j = g_j + ξ_j`` with ξ from ``constraint_noise``.

    ``constraint_noise``: ``"none"`` (exact constraint observations), ``"gaussian"`` (``N(0, s²)``) or
    ``"uniform"`` (``U[-s, s]``), with ``s = constraint_scale``.
    """

    KINDS = ("none", "gaussian", "uniform")

    def __init__(
        self, reward_std: float = 0.1, constraint_noise: str = "none", constraint_scale: float = 0.0
    ) -> None:
        self.reward_std = check_noise_scale(reward_std, "reward_std")
        if constraint_noise not in self.KINDS:
            raise InvalidInputError(
                f"constraint_noise must be one of {self.KINDS}, got {constraint_noise!r}."
            )
        self.kind = constraint_noise
        self.scale = check_noise_scale(constraint_scale, "constraint_scale")

    def sample(self, rng, index, f, g):
        y = f + self.reward_std * rng.standard_normal() if self.reward_std else f
        if self.kind == "none" or not g.shape[0]:
            return float(y), g.copy()
        if self.kind == "gaussian":
            return float(y), g + self.scale * rng.standard_normal(g.shape[0])
        return float(y), g + rng.uniform(-self.scale, self.scale, g.shape[0])

    def to_dict(self):
        return {
            "type": "gaussian-reward",
            "reward_std": self.reward_std,
            "constraint_noise": self.kind,
            "constraint_scale": self.scale,
        }


class ResampledReadings(ObservationModel):
    """Resample recorded data: ``y = readings[s, index]`` with ``s`` uniform over the rows.

    ``constraint_affine``: a list of ``(a_j, b_j)``, one per constraint, giving ``c_j = a_j y + b_j``
    (so ``c = -y + h`` observes ``g = -f + h`` through the same reading). If ``None``, constraints are
    observed as ``g_j + N(0, constraint_std²)``.
    """

    def __init__(
        self,
        readings: Any,
        constraint_affine: list[tuple[float, float]] | None = None,
        constraint_std: float = 0.0,
    ) -> None:
        self.readings = check_finite_array(readings, "readings", ndim=2)
        self.affine = (
            None if constraint_affine is None else np.asarray(constraint_affine, dtype=float).reshape(-1, 2)
        )
        self.constraint_std = check_noise_scale(constraint_std, "constraint_std")

    def sample(self, rng, index, f, g):
        if index < 0:
            raise InvalidInputError("ResampledReadings needs an arm index (a finite domain).")
        y = float(self.readings[rng.integers(self.readings.shape[0]), index])
        if self.affine is not None:
            if self.affine.shape[0] != g.shape[0]:
                raise InvalidInputError(
                    f"constraint_affine has {self.affine.shape[0]} rows but the problem has {g.shape[0]} constraints."
                )
            c = self.affine[:, 0] * y + self.affine[:, 1]
        else:
            c = g + self.constraint_std * rng.standard_normal(g.shape[0])
        return y, c

    def to_dict(self):
        return {
            "type": "resampled-readings",
            "rows": int(self.readings.shape[0]),
            "constraint_affine": None if self.affine is None else self.affine.tolist(),
            "constraint_std": self.constraint_std,
        }
