r"""The environment side of an agent: its local black box, and the ground-truth log metrics need.

Agent ``i`` owns a physical system (simulated here) with objective :math:`f_i` and constraints
:math:`g_i \in \mathbb R^m` on its grid :math:`\mathcal X^i`. Querying grid point ``k`` returns noisy readings
(Xu et al. (2023), eq. 2.2)

.. math:: y_{i,0} = f_i(x_k) + \nu_0, \qquad y_{i,j} = g_{i,j}(x_k) + \nu_j,

with independent :math:`\nu \sim \mathcal N(0, \sigma^2)` (``noise_std`` for f, ``constraint_noise_std`` for
g) from the system's own random stream. The readings go to the agent's model only.

**Ground truth stays apart.** The system also logs the *true* values :math:`f_i(x_k), g_i(x_k)` and the
point of every query in an :class:`EnvironmentLog`. That log is the experimenter's instrumentation: the
run harness (:mod:`ckb.multiagent.run`) collects it through the ``environment_log`` agent method to
compute regret and violations; no coordinator and no algorithm message ever carries it (tested).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ckb._validation import check_finite_array, check_scalar, is_count
from ckb.errors import InvalidInputError, OutOfDomainError


@dataclass(frozen=True)
class EnvironmentLog:
    """True values at agent ``agent``'s queried points, rounds ``1..t`` (environment side, not a message)."""

    agent: int
    index: np.ndarray  # (t,) grid indices
    x: np.ndarray  # (t, n_i) points
    f: np.ndarray  # (t,) true f_i
    g: np.ndarray  # (t, m) true g_i


def seed_sequence(seed: Any) -> np.random.SeedSequence:
    """A ``SeedSequence`` from an int, ``[entropy, *spawn_key]`` or ``{"entropy", "spawn_key"}``."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    try:
        if isinstance(seed, dict):
            parts = [seed["entropy"], *seed["spawn_key"]]
        elif isinstance(seed, (list, tuple)) and seed:
            parts = list(seed)
        else:
            parts = [seed]
        if not all(is_count(k) for k in parts):
            raise ValueError
        return np.random.SeedSequence(int(parts[0]), spawn_key=tuple(int(k) for k in parts[1:]))
    except (KeyError, TypeError, ValueError):
        raise InvalidInputError(
            "seed must be an int >= 0, [entropy, *spawn_key] or {'entropy', 'spawn_key'} of ints >= 0, got "
            f"{seed!r:.80}."
        ) from None


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """A JSON-friendly copy of a generator's state (for pickle-free checkpoints)."""
    return _plain(rng.bit_generator.state)


def set_rng_state(rng: np.random.Generator, state: dict[str, Any]) -> None:
    rng.bit_generator.state = state


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


class LocalSystem:
    """Agent ``agent``'s black box on its grid: true tables ``f`` (G,) and ``g`` (G, m) plus noise."""

    def __init__(
        self,
        agent: int,
        grid: np.ndarray,
        f: Any,
        g: Any,
        *,
        noise_std: float = 0.0,
        constraint_noise_std: float | None = None,
        seed: Any = 0,
        horizon: int = 16,
    ) -> None:
        self.agent = int(agent)
        self.grid = np.asarray(grid, dtype=float)
        G = self.grid.shape[0]
        self.f = check_finite_array(f, "system f", shape=(G,))
        g = np.asarray(g, dtype=float)
        if g.ndim == 1 and g.shape[0] == G:
            g = g[:, None]
        self.g = check_finite_array(g.reshape(G, -1) if g.size else np.zeros((G, 0)), "system g", ndim=2)
        self.m = self.g.shape[1]
        self.noise_std = check_scalar(noise_std, "noise_std", low=0.0)
        cns = self.noise_std if constraint_noise_std is None else constraint_noise_std
        self.constraint_noise_std = check_scalar(cns, "constraint_noise_std", low=0.0)
        self.rng = np.random.default_rng(seed_sequence(seed))
        self._index = np.empty(max(int(horizon), 1), dtype=np.int64)
        self.t = 0

    def evaluate(self, k: int) -> tuple[float, np.ndarray]:
        """Query grid point ``k``: noisy ``(y_f, y_g)``; logs the true values (environment side)."""
        if not 0 <= k < self.f.shape[0]:
            raise OutOfDomainError(f"agent {self.agent}: grid index {k} is outside 0..{self.f.shape[0] - 1}.")
        if self.t >= self._index.shape[0]:
            self._index = np.concatenate([self._index, np.empty_like(self._index)])
        self._index[self.t] = k
        self.t += 1
        # one draw for f, then m for g, always (a fixed stream layout whatever the noise levels)
        z = self.rng.standard_normal(1 + self.m)
        return float(self.f[k] + self.noise_std * z[0]), self.g[k] + self.constraint_noise_std * z[1:]

    def log(self) -> EnvironmentLog:
        idx = self._index[: self.t].copy()
        return EnvironmentLog(self.agent, idx, self.grid[idx].copy(), self.f[idx].copy(), self.g[idx].copy())

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "index": self._index[: self.t].copy(), "rng": rng_state(self.rng)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (checked first: a count of evaluations, one grid index each)."""
        t = state["t"]
        if not is_count(t):
            raise InvalidInputError(f"agent {self.agent} system state: t = {t!r:.20} must be a count >= 0.")
        index = np.asarray(state["index"])
        G = self.grid.shape[0]
        whole = index.size == 0 or np.issubdtype(index.dtype, np.integer)
        if index.shape != (t,) or not whole or np.any((index < 0) | (index >= G)):
            raise InvalidInputError(
                f"agent {self.agent} system state: index must be {t} grid indices in 0..{G - 1}, got shape "
                f"{index.shape} ({index.dtype})."
            )
        set_rng_state(self.rng, state["rng"])
        self._index = np.empty(max(self._index.shape[0], t, 1), dtype=np.int64)
        self._index[:t] = index
        self.t = int(t)
