r"""DCEI: distributed simultaneous constrained expected improvement (the baseline of Xu et al. (2023),
Sec. 5.1).

**A reconstruction.** The paper says only: "in each step, each agent maximizes the constrained expected
improvement conditioned on the decisions of other agents fixed as in the last step" (CEI of Gardner et
al. / Gelbart et al.). It leaves the details open; our concrete version:

- at round ``t >= 2`` agent ``i`` models the totals :math:`F = f_i(x_i) + \sum_{k \ne i} f_k(x_k^{t-1})` and
  :math:`G_j = g_{i,j}(x_i) + \sum_{k \ne i} g_{k,j}(x_k^{t-1})` as independent Gaussians whose means and
  variances add the agent's own posterior at :math:`x_i` and the others' posteriors at their last
  decisions (each agent shares its posterior mean/variance there: :class:`PosteriorSummary`);
- it maximizes over its grid :math:`\mathrm{EI}(F; F^+)\prod_j \Pr(G_j \le 0)` with the minimization EI
  :math:`\mathrm{EI} = (F^+ - \mu_F)\Phi(z) + \sigma_F\varphi(z)`, :math:`z = (F^+ - \mu_F)/\sigma_F`;
- the incumbent :math:`F^+` is the best observed total :math:`\sum_i y_{i,0}` among rounds whose observed
  totals satisfy every :math:`\sum_i y_{i,j} \le 0` (so agents also share their readings at their
  decisions: more than DMABO needs); before any feasible total is observed, agents maximize
  :math:`\prod_j \Pr(G_j \le 0)` alone (the usual CEI fallback);
- round 1 (nothing to condition on): a uniformly random grid point per agent (our choice).

Ties are broken uniformly at random by the agent's own generator. Only black-box coupled constraints
are handled; affine constraints (``l > 0``) are rejected, as in the paper's use (the GP experiment).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import ndtr

from ckb.errors import InvalidInputError
from ckb.multiagent.agent import GridAgent
from ckb.multiagent.coordinator import Coordinator
from ckb.multiagent.messages import CEIBroadcast, PosteriorSummary
from ckb.multiagent.methods import METHODS, Setup, agent_kwargs, check_method_params

_SQRT_2PI = np.sqrt(2.0 * np.pi)


def expected_improvement_min(mean: np.ndarray, std: np.ndarray, best: float) -> np.ndarray:
    """EI of a minimization below ``best`` for Gaussians ``N(mean, std^2)`` (``std = 0``: ``[best - mean]^+``)."""
    mean = np.asarray(mean, dtype=float)
    std = np.asarray(std, dtype=float)
    imp = best - mean
    out = np.maximum(imp, 0.0)
    pos = std > 0
    z = imp[pos] / std[pos]
    out[pos] = imp[pos] * ndtr(z) + std[pos] * np.exp(-0.5 * z * z) / _SQRT_2PI
    return out


def prob_nonpositive(mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``P(N(mean, std^2) <= 0)`` elementwise (``std = 0``: the indicator ``mean <= 0``)."""
    mean = np.asarray(mean, dtype=float)
    std = np.asarray(std, dtype=float)
    out = (mean <= 0).astype(float)
    pos = std > 0
    out[pos] = ndtr(-mean[pos] / std[pos])
    return out


class DCEIAgent(GridAgent):
    """Agent ``i`` of DCEI: decide by CEI against the others' last decisions, evaluate, summarize."""

    protocol: ClassVar[dict[str, tuple[type | None, type]]] = {"step": (CEIBroadcast, PosteriorSummary)}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.l:
            raise InvalidInputError("dcei handles coupled black-box constraints only (l = 0).")
        self._last_mean = np.zeros(self.m + 1)
        self._last_var = np.zeros(self.m + 1)

    def acquisition(self, msg: CEIBroadcast) -> np.ndarray:
        mu, var = self.model.mean_var()  # (G, m+1)
        total_mean = np.concatenate([[msg.f_mean], msg.g_mean])
        total_var = np.concatenate([[msg.f_var], msg.g_var])
        o_mean = total_mean - self._last_mean
        o_var = np.maximum(total_var - self._last_var, 0.0)
        M = mu + o_mean
        S = np.sqrt(var + o_var)
        acq = np.prod(prob_nonpositive(M[:, 1:], S[:, 1:]), axis=1) if self.m else np.ones(M.shape[0])
        if msg.incumbent is not None:
            acq = acq * expected_improvement_min(M[:, 0], S[:, 0], msg.incumbent)
        return acq

    def step(self, msg: CEIBroadcast) -> PosteriorSummary:
        t = self._check_round(msg, CEIBroadcast)
        if msg.f_mean is None:
            k = int(self.rng.integers(self.grid.shape[0]))
        else:
            k = self._argmax(self.acquisition(msg))
        y_f, y_g = self._evaluate(k)
        mean, var = self.model.mean_var(k)
        self._last_mean, self._last_var = mean, var
        self.t = t
        return PosteriorSummary(self.agent, t, mean[0], var[0], mean[1:], var[1:], y_f, y_g)

    def _extra_state(self) -> dict[str, Any]:
        return {"last_mean": self._last_mean.copy(), "last_var": self._last_var.copy()}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self._last_mean = np.asarray(state["last_mean"], dtype=float).reshape(self.m + 1).copy()
        self._last_var = np.asarray(state["last_var"], dtype=float).reshape(self.m + 1).copy()


class DCEICoordinator(Coordinator):
    """Sums the agents' summaries and tracks the incumbent (a relay; no decision of its own)."""

    reply_type = PosteriorSummary

    def __init__(self, n_agents: int, m: int) -> None:
        super().__init__(n_agents)
        self.m = int(m)
        self.sums: np.ndarray | None = None  # [f_mean, g_mean (m), f_var, g_var (m)]
        self.incumbent: float | None = None

    def outgoing(self) -> list[CEIBroadcast]:
        if self.sums is None:
            msg = CEIBroadcast(self.t)
        else:
            m = self.m
            s = self.sums
            msg = CEIBroadcast(self.t, s[0], s[m + 1], s[1 : m + 1], s[m + 2 :], self.incumbent)
        return [msg] * self.n_agents

    def update(self, replies: list[PosteriorSummary]) -> None:
        self._check_replies(replies)
        means = np.array([[r.f_mean, *r.g_mean] for r in replies]).sum(axis=0)
        vars_ = np.array([[r.f_var, *r.g_var] for r in replies]).sum(axis=0)
        self.sums = np.concatenate([means, vars_])
        y_f = sum(r.y_f for r in replies)
        y_g = np.array([r.y_g for r in replies]).sum(axis=0) if self.m else np.zeros(0)
        if np.all(y_g <= 0.0) and (self.incumbent is None or y_f < self.incumbent):
            self.incumbent = float(y_f)
        self.t += 1

    def internals(self) -> dict[str, np.ndarray]:
        return {"incumbent": np.array([np.nan if self.incumbent is None else self.incumbent])}

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "sums": self.sums, "incumbent": self.incumbent}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t = int(state["t"])
        self.sums = None if state["sums"] is None else np.asarray(state["sums"], dtype=float).copy()
        self.incumbent = None if state["incumbent"] is None else float(state["incumbent"])


@METHODS.register("dcei")
def build_dcei(problem, params: dict[str, Any], horizon: int, seed: int, trial: int) -> Setup:
    """DCEI agents and coordinator (a reconstruction; see the module docstring)."""
    check_method_params("dcei", params, ())
    if problem.l:
        raise InvalidInputError(
            f"dcei handles no affine constraints, but problem {problem.name!r} has l = {problem.l}."
        )
    return Setup(
        DCEIAgent,
        agent_kwargs(problem, params, horizon, seed, trial),
        DCEICoordinator(problem.n_agents, problem.m),
    )
