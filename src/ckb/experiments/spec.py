"""Experiment specs (TOML), shipped in ``ckb/experiments/specs/`` or given by path, and the single-agent
spec, the default kind.

:func:`load_spec` loads a spec of any registered kind (:data:`ckb.framework.KINDS`; its ``kind`` field
picks it) by shipped name or by path. Copy a shipped spec (``ckb spec NAME > my.toml``), edit it, and run
it by path (``ckb experiment my.toml``). A single-agent spec (no ``kind``, or ``kind = "single-agent"``)
names a problem, the algorithms to compare (each a registered policy with parameters), the horizon, the
number of trials and the seed, plus the paper's reference numbers and the choices made where the paper
is silent; the fields every kind shares are :class:`ckb.framework.spec.SpecBase`'s. Layout::

    name = "gpucb-synthetic"          # required
    title = "..."                     # one line for `ckb list`
    description = "..."
    paper = "..."                     # where the set-up comes from
    horizon = 10000                   # T
    trials = 50
    seed = 0
    beta_scale = 0.2                  # optional: the confidence-width scale of every algorithm that takes
                                      # one (an algorithm's own beta_scale overrides it: sensitivity rows)

    [problem]                         # a registered problem and its parameters
    name = "rkhs-synthetic"
    n_grid = 100

    [environment]                     # optional: a registered environment and its parameters
    name = "basic"

    [algorithms.igp-ucb]              # label -> registered policy and its parameters
    policy = "igp-ucb"
    B = 1.0

    [reference]                       # the paper's numbers, reported beside ours (free-form)
    [choices]                         # decision -> reason, for every choice the paper leaves open
    [report]                          # optional: checkpoints = [20, 40, ...] (rounds at which the
                                      # time-averaged metrics are tabulated and box-plotted),
                                      # boxplots = true, utility = true (report (1/t) sum f)

A bad spec raises :class:`~ckb.errors.SpecError` naming the bad field (and the closest valid name).
"""

from __future__ import annotations

import math
import tomllib
import warnings
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from ckb._validation import did_you_mean
from ckb.errors import CKBError, InvalidInputError, SpecError, UnknownNameError
from ckb.framework.kinds import KINDS, spec_from_dict
from ckb.framework.spec import (
    DEFAULT_KIND,
    SpecBase,
    algorithm_tables,
    apply_sets,
    blamed,
    check_fields,
    check_report,
    common_fields,
    overridden,
    problem_table,
)

__all__ = [
    "ExperimentSpec",
    "apply_sets",
    "check_fields",
    "check_report",
    "common_fields",
    "load_spec",
    "overridden",
    "shipped",
    "spec_from_dict",
]


@dataclass(kw_only=True)
class ExperimentSpec(SpecBase):
    """A single-agent experiment (the default kind; see the module docstring): ``algorithms`` is label ->
    (registered policy, its parameters)."""

    problem: str
    problem_params: dict[str, Any]
    algorithms: dict[str, tuple[str, dict[str, Any]]]
    environment: str = "basic"
    environment_params: dict[str, Any] = field(default_factory=dict)
    beta_scale: float | None = None

    kind: ClassVar[str] = DEFAULT_KIND
    FIELDS: ClassVar[dict[str, type]] = {"problem": dict, "environment": dict, "beta_scale": object}
    REQUIRED: ClassVar[tuple[str, ...]] = ("problem",)
    REPORT: ClassVar[dict[str, type]] = {"checkpoints": list, "boxplots": bool, "utility": bool}
    SET_EXAMPLE: ClassVar[str] = "algorithms.igp-ucb.beta_scale=0.5"

    # ----------------------------------------------------------------- build
    @classmethod
    def _parse(cls, raw: dict[str, Any], where: str, report: dict[str, Any]) -> dict[str, Any]:
        pname, params = problem_table(raw, where, "a registered problem")
        env = dict(raw.get("environment", {}))
        ename = env.pop("name", "basic")
        tables = algorithm_tables(raw, where, hint=" with a 'policy' key")
        algs = {label: (body.pop("policy", label), body) for label, body in tables.items()}
        scale = raw.get("beta_scale")
        if scale is not None and (
            isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 <= scale < math.inf
        ):
            raise SpecError(f"field 'beta_scale'{where} must be a finite number >= 0, got {scale!r}.")
        return {
            "beta_scale": None if scale is None else float(scale),
            "problem": pname,
            "problem_params": params,
            "algorithms": algs,
            "environment": ename,
            "environment_params": env,
        }

    def _body(self) -> dict[str, Any]:
        return {
            **({} if self.beta_scale is None else {"beta_scale": self.beta_scale}),
            "problem": {"name": self.problem, **self.problem_params},
            "environment": {"name": self.environment, **self.environment_params},
            "algorithms": {k: {"policy": p, **params} for k, (p, params) in self.algorithms.items()},
        }

    # --------------------------------------------------------------- configs
    def configs(self):
        """One :class:`~ckb.runner.TrialConfig` per (algorithm, trial)."""
        from ckb.problems.data import problem_inputs
        from ckb.runner.trial import TrialConfig

        inputs = problem_inputs(self.problem, self.problem_params)
        return [
            TrialConfig(
                algorithm=label,
                policy=policy,
                problem=self.problem,
                horizon=self.horizon,
                trial=k,
                seed=self.seed,
                policy_params=self.policy_params(policy, params),
                problem_params=self.problem_params,
                environment=self.environment,
                environment_params=self.environment_params,
                inputs=inputs,
            )
            for label, (policy, params) in self.algorithms.items()
            for k in range(self.trials)
        ]

    def policy_params(self, policy: str, params: dict[str, Any]) -> dict[str, Any]:
        """An algorithm's parameters with the spec's ``beta_scale`` added when its policy takes one and the
        algorithm does not set its own (the spec states the scale once for all its algorithms)."""
        if self.beta_scale is None or "beta_scale" in params:
            return params
        from ckb.policies import POLICIES, init_parameters

        if "beta_scale" not in init_parameters(POLICIES.get(policy)):
            return params
        return {**params, "beta_scale": self.beta_scale}

    @classmethod
    def results_view(cls, table: dict[str, Any]) -> dict[str, Any]:
        """``table`` with its top-level ``beta_scale`` folded into each algorithm, as :meth:`policy_params`
        does for the trials. Before, ``--beta-scale 0.2 -o F`` into a folder this spec wrote with its own
        ``beta_scale = 0.2`` was refused though its trials are the same, and with 0.3 the message said
        "algorithms.X.beta_scale (only in this spec)" without the values."""
        from ckb.policies import POLICIES, init_parameters

        scale, algorithms = table.get("beta_scale"), table.get("algorithms")
        if scale is None or not isinstance(algorithms, dict):
            return table
        folded = {}
        for label, body in algorithms.items():
            policy = body.get("policy", label) if isinstance(body, dict) else None
            if isinstance(body, dict) and "beta_scale" not in body and policy in POLICIES:
                if "beta_scale" in init_parameters(POLICIES.get(policy)):
                    body = {**body, "beta_scale": scale}
            folded[label] = body
        return {**{k: v for k, v in table.items() if k != "beta_scale"}, "algorithms": folded}

    def validate(self) -> ExperimentSpec:
        """Build the problem, environment and every policy of trial 0 once, so bad values fail before a sweep."""
        from ckb.policies import POLICIES, init_parameters
        from ckb.problems import PROBLEMS, make_problem
        from ckb.runner import ENVIRONMENTS
        from ckb.runner.trial import Trial

        where = self.where
        for registry, name, field_name in (
            (PROBLEMS, self.problem, "problem.name"),
            (ENVIRONMENTS, self.environment, "environment.name"),
        ):
            try:
                registry.canonical(name)
            except UnknownNameError as exc:
                raise SpecError(f"field {field_name!r}{where}: {exc}") from None
        for label, (policy, _) in self.algorithms.items():
            try:
                POLICIES.canonical(policy)
            except UnknownNameError as exc:
                raise SpecError(f"field 'algorithms.{label}.policy'{where}: {exc}") from None
        env_cls = ENVIRONMENTS.get(self.environment)
        known = [k for k in init_parameters(env_cls) if k != "problem"]
        for key in self.environment_params:
            if key not in known:
                raise SpecError(
                    f"unknown field 'environment.{key}'{where}: environment {self.environment!r} takes "
                    f"{', '.join(known) or 'no parameters'}.{did_you_mean(key, known)}"
                )
        try:
            cfg = self.configs()[0]
        except InvalidInputError as exc:
            raise SpecError(f"spec{where}: {exc}") from None
        # each part built on its own, so an error blames the table it comes from
        with blamed(f"field 'problem'{where}", f"problem {self.problem!r} could not be built: "):
            problem = make_problem(cfg.problem, cfg.rng(0), **cfg.problem_params)
            problem.utility_star  # noqa: B018 - what every trial's regret needs (no feasible candidate: the problem's fault)
        try:
            env_cls(problem, cfg.rng(1), **self.environment_params)
        except (CKBError, TypeError, ValueError) as exc:
            raise SpecError(f"field 'environment'{where}: {exc}") from None
        seen = set()
        for cfg in self.configs():
            if cfg.algorithm in seen:
                continue
            seen.add(cfg.algorithm)
            with blamed(f"field 'algorithms.{cfg.algorithm}'{where}"):
                Trial(cfg)
        return self


# -------------------------------------------------------------------- lookup
def _spec_dir():
    return resources.files("ckb.experiments") / "specs"


def shipped() -> dict[str, Path]:
    """Names of the experiments shipped with the package -> their spec files."""
    return {p.name[: -len(".toml")]: Path(str(p)) for p in _spec_dir().iterdir() if p.name.endswith(".toml")}


def load_spec(name_or_path: str | Path) -> SpecBase:
    """Load a shipped experiment by name, or a spec file by path (a spec of its ``kind``)."""
    from ckb.framework.plugins import load_entry_points

    load_entry_points()
    path = Path(name_or_path)
    specs = shipped()
    if str(name_or_path) in specs:
        path = specs[str(name_or_path)]
    elif not path.exists():
        if path.suffix == ".toml" or "/" in str(name_or_path):
            raise SpecError(f"spec file {str(path)!r} does not exist.")
        raise UnknownNameError(
            f"Unknown experiment {str(name_or_path)!r}.{did_you_mean(str(name_or_path), specs)}"
        )
    if path.is_dir():
        raise SpecError(f"spec path {str(path)!r} is a directory; expected a spec .toml file.")
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path} is not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"cannot read the spec file {str(path)!r}: {exc}") from None
    return spec_from_dict(raw, source=str(path))


def deprecated(message: str, value: Any) -> Any:
    """``value``, after a :class:`DeprecationWarning` with ``message`` (for the module-level ``__getattr__``
    of a name kept for old callers)."""
    warnings.warn(message, DeprecationWarning, stacklevel=3)
    return value


def __getattr__(name: str) -> Any:
    if name == "SPEC_KINDS":  # the import-string registry this module had before ckb.framework.KINDS
        message = (
            "ckb.experiments.spec.SPEC_KINDS is deprecated; use ckb.framework.KINDS (kind -> Kind, whose "
            "`spec` is the spec class)."
        )
        specs = {k: KINDS.get(k).spec for k in KINDS.names() if k != DEFAULT_KIND}
        return deprecated(message, {k: f"{c.__module__}:{c.__qualname__}" for k, c in specs.items()})
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
