r"""Penalty heuristic with ADMM coordination ("Penalty Heuristics-Q", the baseline of Xu et al. (2023),
Sec. 5.2, after Krishnamoorthy & Paulson's ADMM-based multi-agent BO).

**A reconstruction.** The paper says only: "in each step, we penalize the EI acquisition function by a
penalty function of the difference with respect to the coordinated power computed with an ADMM type
method", with penalty value ``Q`` (``Q = 5`` quoted). Our concrete version (a choice the paper leaves
open): scaled-form ADMM for the sharing constraint :math:`\sum_i A_i x_i = b`, with :math:`a_i = A_i x_i`:

- agent step: :math:`x_i^t = \arg\max_{x_i} \mathrm{EI}_i(x_i) - \frac Q2 \|A_i x_i - (z_i^{t-1} - u_i^{t-1})\|^2`
  over the grid, where :math:`\mathrm{EI}_i` is the minimization EI of agent ``i``'s own objective GP
  against its best observed reading; before its first observation there is no reading, the EI term is
  left out and the agent maximizes the penalty term alone (round 1 goes to the grid point whose
  :math:`A_i x_i` is nearest the target); then evaluate and update;
- coordinator: :math:`v = a^t + u^{t-1}`, :math:`z^t = \Pi_{\{\sum_i z_i = b\}}(v)`, i.e.
  :math:`z_i^t = v_i - (\sum_k v_k - b)/N`, and :math:`u^t = u^{t-1} + a^t - z^t`; initially
  :math:`z_i^0 = b/N` (an equal share) and :math:`u^0 = 0`.

``dual = false`` is a variant without ADMM's scaled dual (``u`` stays 0): each agent is pulled towards
the projection :math:`z^{t-1}` of the last allocations onto the budget, the "coordinated power" alone.
The paper does not say which it used; its remark that a larger ``Q`` "improves the power deviation only
very slightly" fits the variant without the integral term better (with it the cumulative deviation
:math:`\sum_t(\sum_i a_i^t - b) = \sum_i u_i^T` stays bounded). Both are reported.

Messages: :class:`ADMMTarget` (the target :math:`z_i - u_i`, one per agent) and :class:`Allocation`
(:math:`A_i x_i^t`). Only affine coupling (``m = 0``) is handled, as in the paper's use.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from ckb._validation import check_bool, check_scalar
from ckb.errors import InvalidInputError
from ckb.multiagent.agent import GridAgent
from ckb.multiagent.coordinator import Coordinator
from ckb.multiagent.dcei import expected_improvement_min
from ckb.multiagent.messages import ADMMTarget, Allocation
from ckb.multiagent.methods import MAX_MAGNITUDE, METHODS, Setup, agent_kwargs, check_method_params


class ADMMPenaltyAgent(GridAgent):
    """Agent ``i`` of the penalty heuristic: EI minus the quadratic ADMM penalty."""

    protocol: ClassVar[dict[str, tuple[type | None, type]]] = {"step": (ADMMTarget, Allocation)}

    def __init__(self, *, Q: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.m:
            raise InvalidInputError("admm-penalty handles affine coupling only (m = 0).")
        self.Q = check_scalar(Q, "Q (penalty)", low=0.0, high=MAX_MAGNITUDE)
        self.best = np.inf

    def acquisition(self, target: np.ndarray) -> np.ndarray:
        pen = 0.5 * self.Q * np.sum((self.ax_grid - target) ** 2, axis=1)
        if not np.isfinite(self.best):
            return -pen
        mu, var = self.model.mean_var()
        return expected_improvement_min(mu[:, 0], np.sqrt(var[:, 0]), self.best) - pen

    def step(self, msg: ADMMTarget) -> Allocation:
        t = self._check_round(msg, ADMMTarget)
        target = np.asarray(msg.target)
        if target.shape != (self.l,):
            raise InvalidInputError(
                f"agent {self.agent}: target must have l = {self.l} entries, got {target.shape[0]}."
            )
        k = self._argmax(self.acquisition(target))
        y_f, _ = self._evaluate(k)
        self.best = min(self.best, y_f)
        self.t = t
        return Allocation(self.agent, t, self.ax_grid[k])

    def _extra_state(self) -> dict[str, Any]:
        return {"best": None if not np.isfinite(self.best) else float(self.best)}

    def _load_extra_state(self, state: dict[str, Any]) -> None:
        self.best = np.inf if state.get("best") is None else float(state["best"])


class ADMMCoordinator(Coordinator):
    """Scaled-form ADMM sharing step (see the module docstring)."""

    reply_type = Allocation

    def __init__(self, n_agents: int, b: Any, dual: bool = True) -> None:
        super().__init__(n_agents)
        self.dual = bool(dual)
        self.b = np.asarray(b, dtype=float).reshape(-1)
        self.z = np.tile(self.b / n_agents, (n_agents, 1))
        self.u = np.zeros_like(self.z)
        self.residual = np.zeros_like(self.b)

    def outgoing(self) -> list[ADMMTarget]:
        return [ADMMTarget(self.t, self.z[i] - self.u[i]) for i in range(self.n_agents)]

    def update(self, replies: list[Allocation]) -> None:
        self._check_replies(replies)
        a = np.array([r.a_x for r in replies]).reshape(self.n_agents, self.b.shape[0])
        v = a + self.u
        self.z = v - (v.sum(axis=0) - self.b) / self.n_agents
        if self.dual:
            self.u = self.u + a - self.z
        self.residual = a.sum(axis=0) - self.b
        self.t += 1

    def internals(self) -> dict[str, np.ndarray]:
        return {"residual": self.residual.copy()}

    def state_dict(self) -> dict[str, Any]:
        return {"t": self.t, "z": self.z.copy(), "u": self.u.copy(), "residual": self.residual.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.t = int(state["t"])
        self.z = np.asarray(state["z"], dtype=float).reshape(self.z.shape).copy()
        self.u = np.asarray(state["u"], dtype=float).reshape(self.u.shape).copy()
        self.residual = np.asarray(state["residual"], dtype=float).reshape(self.b.shape).copy()


@METHODS.register("admm-penalty")
def build_admm_penalty(problem, params: dict[str, Any], horizon: int, seed: int, trial: int) -> Setup:
    """Penalty-heuristic agents and ADMM coordinator (a reconstruction; module docstring)."""
    check_method_params("admm-penalty", params, ("Q", "dual"))
    if problem.m:
        raise InvalidInputError(
            f"admm-penalty handles affine coupling only, but problem {problem.name!r} has m = {problem.m}."
        )
    if problem.l == 0:
        raise InvalidInputError(
            f"admm-penalty needs affine constraints, but problem {problem.name!r} has none."
        )
    kwargs = agent_kwargs(problem, params, horizon, seed, trial)
    Q = check_scalar(params.get("Q", 5.0), "Q (penalty)", low=0.0, high=MAX_MAGNITUDE)
    dual = check_bool(params.get("dual", True), "dual")
    for kw in kwargs:
        kw["Q"] = Q
    return Setup(
        ADMMPenaltyAgent, kwargs, ADMMCoordinator(problem.n_agents, problem.b, dual), {"Q": Q, "dual": dual}
    )
