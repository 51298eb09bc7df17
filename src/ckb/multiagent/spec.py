"""Multi-agent experiment specs: TOML files with ``kind = "multiagent"``.

The common fields of every kind (:mod:`ckb.framework.spec`) and these of its own::

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
    horizon = 400                     #   this label's own T (--horizon leaves it)
    problem = { n_agents = 8 }        #   overrides of the problem's parameters for this label
    backend = "inprocess"             #   or "ray" (with backend_options = { address = "..." })

    [reference]  [choices]  [report]  # as for single-agent specs; [report] adds
                                      # relative_to = "LABEL" (ratios of utility and shift to it)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

from ckb._validation import did_you_mean
from ckb.errors import CKBError, SpecError, UnknownNameError
from ckb.framework.spec import SpecBase, algorithm_tables, blamed, problem_table
from ckb.runner.sweep import SweepWarning


class HorizonWarning(SweepWarning):
    """``--horizon`` leaves some labels at the ``horizon`` of their own table (one line, like the other
    warnings of a run)."""


def _short_list(items: list[str], most: int = 6) -> str:
    """``items`` joined by commas, the ones past ``most`` counted instead of listed."""
    more = f", and {len(items) - most} more" if len(items) > most else ""
    return ", ".join(items[:most]) + more


#: per-label keys that are not method parameters
_LABEL_KEYS = ("method", "horizon", "problem", "backend", "backend_options")


@dataclass(kw_only=True)
class MultiAgentSpec(SpecBase):
    """A multi-agent experiment (see the module docstring); ``algorithms``: label -> (method, everything
    else of its table)."""

    problem: str
    problem_params: dict[str, Any]
    algorithms: dict[str, tuple[str, dict[str, Any]]]

    kind: ClassVar[str] = "multiagent"
    #: how Ray places a label's agents (CPUs, address, scheduling) is not part of the configuration hash
    #: (:class:`~ckb.multiagent.trial.MultiAgentTrialConfig`): a run resumes with other options
    NOT_RESULTS_PER_ALGORITHM: ClassVar[tuple[str, ...]] = ("backend_options",)
    FIELDS: ClassVar[dict[str, type]] = {"problem": dict}
    REQUIRED: ClassVar[tuple[str, ...]] = ("problem",)
    REPORT: ClassVar[dict[str, type]] = {"checkpoints": list, "relative_to": str}
    SET_EXAMPLE: ClassVar[str] = "algorithms.dmabo.beta=2.0"

    @classmethod
    def _parse(cls, raw: dict[str, Any], where: str, report: dict[str, Any]) -> dict[str, Any]:
        pname, params = problem_table(raw, where, "a registered multi-agent problem")
        algs: dict[str, tuple[str, dict[str, Any]]] = {}
        for label, body in algorithm_tables(raw, where, hint=" with a 'method' key").items():
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
            if "name" in body.get("problem", {}):
                raise SpecError(
                    f"field 'algorithms.{label}.problem'{where} cannot set 'name' (got "
                    f"{body['problem']['name']!r:.60}): a label's problem table only overrides parameters of "
                    f"the spec's problem, [problem] name = {pname!r}; compare another problem in another spec."
                )
            algs[label] = (method, body)
        if "relative_to" in report and report["relative_to"] not in algs:
            rel = report["relative_to"]
            raise SpecError(
                f"field 'report.relative_to'{where}: no algorithm {rel!r}.{did_you_mean(rel, algs)}"
            )
        return {"problem": pname, "problem_params": params, "algorithms": algs}

    def _body(self) -> dict[str, Any]:
        return {
            "problem": {"name": self.problem, **self.problem_params},
            "algorithms": {k: {"method": m, **p} for k, (m, p) in self.algorithms.items()},
        }

    def with_overrides(self, *, trials=None, horizon=None, seed=None, sets: list[str] = ()):
        """:meth:`SpecBase.with_overrides`, plus: ``--horizon`` reaches only the labels without a
        ``horizon`` of their own, so one that reaches none is refused (a :class:`SpecError`) and one that
        leaves some labels at their own horizon is said so (a :class:`HorizonWarning`)."""
        spec = super().with_overrides(trials=trials, horizon=horizon, seed=seed, sets=sets)
        if horizon is None:
            return spec
        own = {label: body["horizon"] for label, (_, body) in spec.algorithms.items() if "horizon" in body}
        if not own:
            return spec
        listed = _short_list([f"{label} (T = {h})" for label, h in own.items()])
        if len(own) == len(spec.algorithms):
            raise SpecError(
                f"--horizon {horizon} reaches no algorithm{spec.where}: every algorithm sets its own horizon "
                f"({listed}); set one with --set algorithms.LABEL.horizon=T."
            )
        warnings.warn(
            f"--horizon {horizon} leaves {len(own)} algorithm(s) at their own horizon: {listed}; set theirs "
            "with --set algorithms.LABEL.horizon=T.",
            HorizonWarning,
            stacklevel=2,
        )
        return spec

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
        """Build trial 0's instance and every label's agents in-process once, so bad values fail early.

        Each part is built on its own, so an error blames the table it comes from; an error that is not
        ckb's own (a plugin's factory may raise a plain ``ValueError``) is given on one line with its type
        (:func:`ckb.framework.spec.blamed`)."""
        from ckb.multiagent.methods import METHODS, build_setup
        from ckb.multiagent.problems import MULTIAGENT_PROBLEMS

        where = self.where
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
            _check_backend(label, s["backend"], s["backend_options"], where)
            cfg = next(c for c in self.configs() if c.algorithm == label)
            problem = self._trial_problem(label, cfg.rng(0))
            with blamed(f"field 'algorithms.{label}'{where}"):
                setup = build_setup(s["method"], problem, s["method_params"], s["horizon"], self.seed, 0)
                for kw in setup.agent_kwargs:
                    setup.agent_cls(**kw)
        return self

    def _trial_problem(self, label: str, rng):
        """Label ``label``'s problem instance drawn with ``rng``; an error blames the spec's ``[problem]``
        table, or ``algorithms.LABEL.problem`` when the label's own overrides are involved (the
        ``[problem]`` table alone builds, or fails otherwise)."""
        import copy

        from ckb.multiagent.problems import make_multiagent_problem

        own = self.algorithms[label][1].get("problem", {})
        failed = f"multi-agent problem {self.problem!r} could not be built: "

        def build(params, field, gen):
            with blamed(field, failed):
                return make_multiagent_problem(self.problem, gen, **params)

        base_field = f"field 'problem'{self.where}"
        if not own:
            return build(self.problem_params, base_field, rng)
        own_field = f"field 'algorithms.{label}.problem'{self.where}"
        spare = copy.deepcopy(rng)  # the same draws for the [problem] table alone
        try:
            return build({**self.problem_params, **own}, own_field, rng)
        except SpecError as exc:
            try:
                build(self.problem_params, base_field, spare)
            except SpecError as base:
                if str(base).removeprefix(base_field) == str(exc).removeprefix(own_field):
                    raise base from None
            raise exc from None


def _check_backend(label: str, backend: Any, options: dict[str, Any], where: str) -> None:
    """A label's ``backend`` is a known name and its ``backend_options`` are ones that backend takes
    (none for ``"inprocess"``; the keyword parameters of :class:`~ckb.multiagent.ray_backend.RayBackend`
    for ``"ray"``) with values it takes (without starting Ray), checked here so that a bad spec fails before
    anything runs."""
    from ckb.multiagent.backends import check_backend_name

    try:
        check_backend_name(backend)
    except CKBError as exc:
        raise SpecError(f"field 'algorithms.{label}.backend'{where}: {exc}") from None
    field = f"field 'algorithms.{label}.backend_options'{where}"
    if backend == "inprocess" and options:
        raise SpecError(f"{field}: the 'inprocess' backend takes no options, got {sorted(options)}.")
    if backend == "ray":
        from ckb.multiagent.ray_backend import check_ray_backend_options

        try:
            check_ray_backend_options(options)
        except CKBError as exc:
            raise SpecError(f"{field}: {exc}") from None
