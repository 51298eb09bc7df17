"""Multi-agent experiment specs: TOML files with ``kind = "multiagent"``.

Same layout as the single-agent specs (:mod:`ckb.experiments.spec`) with these differences::

    kind = "multiagent"               # required: dispatches `ckb experiment` here
    name = "dmabo-power"
    horizon = 200                     # T (an algorithm may override it)
    trials = 20
    seed = 0

    [problem]                         # a registered multi-agent problem (ckb.multiagent.problems)
    name = "power-allocation"
    n_agents = 5

    [algorithms.dmabo]                # label -> a registered method (ckb.multiagent.methods)
    method = "dmabo"
    beta = 3.0                        # ... the method's parameters, plus optionally:
    horizon = 400                     #   this label's own T
    problem = { n_agents = 8 }        #   overrides of the problem's parameters for this label
    backend = "inprocess"             #   or "ray" (with backend_options = { address = "..." })

    [reference]  [choices]  [report]  # as for single-agent specs; [report] adds
                                      # relative_to = "LABEL" (ratios of utility and shift to it)
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ckb._validation import did_you_mean
from ckb.errors import CKBError, SpecError, UnknownNameError
from ckb.experiments.spec import check_fields, check_report, common_fields, overridden

_TOP = {
    "kind": str,
    "name": str,
    "title": str,
    "description": str,
    "paper": str,
    "horizon": int,
    "trials": int,
    "seed": int,
    "problem": dict,
    "algorithms": dict,
    "reference": dict,
    "choices": dict,
    "report": dict,
}
_REPORT = {"checkpoints": list, "relative_to": str}
_REQUIRED = ("kind", "name", "horizon", "trials", "problem", "algorithms")
#: per-label keys that are not method parameters
_LABEL_KEYS = ("method", "horizon", "problem", "backend", "backend_options")


@dataclass
class MultiAgentSpec:
    name: str
    horizon: int
    trials: int
    problem: str
    problem_params: dict[str, Any]
    algorithms: dict[str, tuple[str, dict[str, Any]]]  # label -> (method, everything else of the table)
    seed: int = 0
    title: str = ""
    description: str = ""
    paper: str = ""
    reference: dict[str, Any] = field(default_factory=dict)
    choices: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    kind: str = "multiagent"

    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = "") -> MultiAgentSpec:
        where = f" in {source}" if source else ""
        check_fields(raw, _TOP, _REQUIRED, where, kind="multiagent")
        report = check_report(raw, _REPORT, where)
        problem = dict(raw["problem"])
        if "name" not in problem:
            raise SpecError(f"field 'problem.name'{where} is required (a registered multi-agent problem).")
        pname = problem.pop("name")
        if not raw["algorithms"]:
            raise SpecError(f"field 'algorithms'{where} must list at least one algorithm.")
        algs: dict[str, tuple[str, dict[str, Any]]] = {}
        for label, body in raw["algorithms"].items():
            if not isinstance(body, dict):
                raise SpecError(f"field 'algorithms.{label}'{where} must be a table with a 'method' key.")
            body = dict(body)
            method = body.pop("method", label)
            h = body.get("horizon")
            if h is not None and (isinstance(h, bool) or not isinstance(h, int) or h < 1):
                raise SpecError(
                    f"field 'algorithms.{label}.horizon'{where} must be an integer >= 1, got {h!r}."
                )
            for key in ("problem", "backend_options"):
                if key in body and not isinstance(body[key], dict):
                    raise SpecError(
                        f"field 'algorithms.{label}.{key}'{where} must be a table, got {body[key]!r}."
                    )
            algs[label] = (method, body)
        if "relative_to" in report and report["relative_to"] not in algs:
            rel = report["relative_to"]
            raise SpecError(
                f"field 'report.relative_to'{where}: no algorithm {rel!r}.{did_you_mean(rel, algs)}"
            )
        return cls(
            **common_fields(raw, source),
            problem=pname,
            problem_params=problem,
            algorithms=algs,
            report=report,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "multiagent",
            "name": self.name,
            "title": self.title,
            "paper": self.paper,
            "horizon": self.horizon,
            "trials": self.trials,
            "seed": self.seed,
            "problem": {"name": self.problem, **self.problem_params},
            "algorithms": {k: {"method": m, **copy.deepcopy(p)} for k, (m, p) in self.algorithms.items()},
            "choices": self.choices,
            **({"report": copy.deepcopy(self.report)} if self.report else {}),
        }

    def with_overrides(self, *, trials=None, horizon=None, seed=None, sets: list[str] = ()) -> MultiAgentSpec:
        """A copy with CLI overrides (``--horizon`` does not override a label's own ``horizon``)."""
        return overridden(self, trials, horizon, seed, sets, example="algorithms.dmabo.beta=2.0")

    # --------------------------------------------------------------- configs
    def label_settings(self, label: str) -> dict[str, Any]:
        method, body = self.algorithms[label]
        return {
            "method": method,
            "horizon": int(body.get("horizon", self.horizon)),
            "problem_params": {**self.problem_params, **body.get("problem", {})},
            "backend": body.get("backend", "inprocess"),
            "backend_options": dict(body.get("backend_options", {})),
            "method_params": {k: v for k, v in body.items() if k not in _LABEL_KEYS},
        }

    def configs(self):
        from ckb.multiagent.trial import MultiAgentTrialConfig

        out = []
        for label in self.algorithms:
            s = self.label_settings(label)
            for k in range(self.trials):
                out.append(
                    MultiAgentTrialConfig(
                        algorithm=label,
                        method=s["method"],
                        problem=self.problem,
                        horizon=s["horizon"],
                        trial=k,
                        seed=self.seed,
                        method_params=s["method_params"],
                        problem_params=s["problem_params"],
                        backend=s["backend"],
                        backend_options=s["backend_options"],
                    )
                )
        return out

    def validate(self) -> MultiAgentSpec:
        """Build trial 0's instance and every label's agents in-process once, so bad values fail early."""
        from ckb.multiagent.backends import BACKENDS
        from ckb.multiagent.methods import METHODS, build_setup
        from ckb.multiagent.problems import MULTIAGENT_PROBLEMS, make_multiagent_problem

        where = f" in {self.source}" if self.source else ""
        try:
            MULTIAGENT_PROBLEMS.canonical(self.problem)
        except UnknownNameError as exc:
            raise SpecError(f"field 'problem.name'{where}: {exc}") from None
        for label in self.algorithms:
            s = self.label_settings(label)
            try:
                METHODS.canonical(s["method"])
            except UnknownNameError as exc:
                raise SpecError(f"field 'algorithms.{label}.method'{where}: {exc}") from None
            if s["backend"] not in BACKENDS:
                raise SpecError(
                    f"field 'algorithms.{label}.backend'{where}: unknown backend {s['backend']!r}."
                    f"{did_you_mean(s['backend'], BACKENDS)}"
                )
            cfg = next(c for c in self.configs() if c.algorithm == label)
            try:
                problem = make_multiagent_problem(self.problem, cfg.rng(0), **s["problem_params"])
            except CKBError as exc:
                raise SpecError(f"field 'problem'{where} (algorithm {label!r}): {exc}") from None
            try:
                setup = build_setup(s["method"], problem, s["method_params"], s["horizon"], self.seed, 0)
                for kw in setup.agent_kwargs:
                    setup.agent_cls(**kw)
            except CKBError as exc:
                raise SpecError(f"field 'algorithms.{label}'{where}: {exc}") from None
        return self
