"""Declarative experiment specs (TOML), shipped in ``ckb/experiments/specs/`` or given by path.

A spec names a problem, the algorithms to compare (each a registered policy with parameters), the
horizon, the number of trials and the seed, plus the paper's reference numbers and the choices made
where the paper is silent. Copy a shipped spec (``ckb spec NAME > my.toml``), edit it, and run it by
path (``ckb experiment my.toml``). Layout::

    name = "gpucb-synthetic"          # required
    title = "..."                     # one line for `ckb list`
    description = "..."
    paper = "..."                     # where the set-up comes from
    horizon = 10000                   # T
    trials = 50
    seed = 0

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

import copy
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ckb._validation import did_you_mean
from ckb.errors import CKBError, SpecError, UnknownNameError

_TOP = {
    "name": str,
    "title": str,
    "description": str,
    "paper": str,
    "horizon": int,
    "trials": int,
    "seed": int,
    "problem": dict,
    "environment": dict,
    "algorithms": dict,
    "reference": dict,
    "choices": dict,
    "report": dict,
}
_REPORT = {"checkpoints": list, "boxplots": bool, "utility": bool}
_REQUIRED = ("name", "horizon", "trials", "problem", "algorithms")


@dataclass
class ExperimentSpec:
    name: str
    horizon: int
    trials: int
    problem: str
    problem_params: dict[str, Any]
    algorithms: dict[str, tuple[str, dict[str, Any]]]
    seed: int = 0
    title: str = ""
    description: str = ""
    paper: str = ""
    environment: str = "basic"
    environment_params: dict[str, Any] = field(default_factory=dict)
    reference: dict[str, Any] = field(default_factory=dict)
    choices: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    # ----------------------------------------------------------------- build
    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = "") -> ExperimentSpec:
        where = f" in {source}" if source else ""
        check_fields(raw, _TOP, _REQUIRED, where)
        report = check_report(raw, _REPORT, where)
        problem = dict(raw["problem"])
        if "name" not in problem:
            raise SpecError(f"field 'problem.name'{where} is required (a registered problem).")
        pname = problem.pop("name")
        env = dict(raw.get("environment", {}))
        ename = env.pop("name", "basic")
        algs: dict[str, tuple[str, dict[str, Any]]] = {}
        if not raw["algorithms"]:
            raise SpecError(f"field 'algorithms'{where} must list at least one algorithm.")
        for label, body in raw["algorithms"].items():
            if not isinstance(body, dict):
                raise SpecError(f"field 'algorithms.{label}'{where} must be a table with a 'policy' key.")
            body = dict(body)
            policy = body.pop("policy", label)
            algs[label] = (policy, body)
        return cls(
            **common_fields(raw, source),
            problem=pname,
            problem_params=problem,
            algorithms=algs,
            environment=ename,
            environment_params=env,
            report=report,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "paper": self.paper,
            "horizon": self.horizon,
            "trials": self.trials,
            "seed": self.seed,
            "problem": {"name": self.problem, **self.problem_params},
            "environment": {"name": self.environment, **self.environment_params},
            "algorithms": {k: {"policy": p, **params} for k, (p, params) in self.algorithms.items()},
            "choices": self.choices,
            **({"report": copy.deepcopy(self.report)} if self.report else {}),
        }

    def with_overrides(self, *, trials=None, horizon=None, seed=None, sets: list[str] = ()) -> ExperimentSpec:
        """A copy with CLI overrides; ``sets`` are ``dotted.key=value`` strings (value parsed as TOML)."""
        return overridden(self, trials, horizon, seed, sets, example="algorithms.igp-ucb.beta_scale=0.5")

    # --------------------------------------------------------------- configs
    def configs(self):
        """One :class:`~ckb.runner.TrialConfig` per (algorithm, trial)."""
        from ckb.runner.trial import TrialConfig

        return [
            TrialConfig(
                algorithm=label,
                policy=policy,
                problem=self.problem,
                horizon=self.horizon,
                trial=k,
                seed=self.seed,
                policy_params=params,
                problem_params=self.problem_params,
                environment=self.environment,
                environment_params=self.environment_params,
            )
            for label, (policy, params) in self.algorithms.items()
            for k in range(self.trials)
        ]

    def validate(self) -> ExperimentSpec:
        """Build the problem, environment and every policy of trial 0 once, so bad values fail before a sweep."""
        from ckb.policies import POLICIES
        from ckb.problems import PROBLEMS
        from ckb.runner import ENVIRONMENTS
        from ckb.runner.trial import Trial

        where = f" in {self.source}" if self.source else ""
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
        seen = set()
        for cfg in self.configs():
            if cfg.algorithm in seen:
                continue
            seen.add(cfg.algorithm)
            try:
                Trial(cfg)
            except CKBError as exc:
                msg = str(exc)
                field_name = (
                    "problem" if "problem" in msg and "policy" not in msg else f"algorithms.{cfg.algorithm}"
                )
                raise SpecError(f"field {field_name!r}{where}: {msg}") from None
        return self


# ------------------------------------------------------- shared by every spec kind
def check_fields(
    raw: dict[str, Any], top: dict[str, type], required: tuple[str, ...], where: str, kind: str | None = None
) -> None:
    """Top-level fields: known names (closest suggested), their types, the required ones present,
    ``horizon``/``trials`` >= 1, ``seed`` >= 0 where given, and ``kind`` equal to ``kind`` if given."""
    for key, value in raw.items():
        if key not in top:
            raise SpecError(f"unknown field {key!r}{where}.{did_you_mean(key, top)}")
        want = top[key]
        if want is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise SpecError(f"field {key!r}{where} must be an integer, got {value!r}.")
        if want is not int and not isinstance(value, want):
            kind = {dict: "table", list: "list"}.get(want, "string")
            raise SpecError(f"field {key!r}{where} must be a {kind}, got {value!r}.")
    for key in required:
        if key not in raw:
            raise SpecError(f"missing required field {key!r}{where}.")
    for key, low in (("horizon", 1), ("trials", 1), ("seed", 0)):
        if key in raw and raw[key] < low:
            raise SpecError(f"field {key!r}{where} must be >= {low}, got {raw[key]!r}.")
    if kind is not None and raw["kind"] != kind:
        raise SpecError(f"field 'kind'{where} must be {kind!r} here, got {raw['kind']!r}.")


def common_fields(raw: dict[str, Any], source: str) -> dict[str, Any]:
    """The fields every spec kind has, as constructor keywords: ``name``, ``horizon``, ``trials``,
    ``seed`` (default 0), ``title``, ``description``, ``paper``, ``reference``, ``choices``, ``source``."""
    return {
        "name": raw["name"],
        "horizon": raw["horizon"],
        "trials": raw["trials"],
        "seed": raw.get("seed", 0),
        "title": raw.get("title", ""),
        "description": raw.get("description", ""),
        "paper": raw.get("paper", ""),
        "reference": raw.get("reference", {}),
        "choices": raw.get("choices", {}),
        "source": source,
    }


def check_report(raw: dict[str, Any], allowed: dict[str, type], where: str) -> dict[str, Any]:
    """The ``[report]`` table: known keys of the right types; ``checkpoints`` rounds >= 1. A copy."""
    report = dict(raw.get("report", {}))
    for key, value in report.items():
        if key not in allowed:
            raise SpecError(f"unknown field 'report.{key}'{where}.{did_you_mean(key, allowed)}")
        if not isinstance(value, allowed[key]):
            raise SpecError(f"field 'report.{key}'{where} must be a {allowed[key].__name__}, got {value!r}.")
    cps = report.get("checkpoints", [])
    if any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in cps):
        raise SpecError(f"field 'report.checkpoints'{where} must list rounds >= 1, got {cps!r}.")
    return report


def overridden(spec, trials, horizon, seed, sets, example: str):
    """``spec`` (any kind: ``to_dict``/``from_dict``) rebuilt with the CLI's ``--trials``, ``--horizon``,
    ``--seed`` (None: unchanged) and ``--set`` overrides, validated again by its ``from_dict``."""
    raw = spec.to_dict()
    raw["reference"] = copy.deepcopy(spec.reference)
    raw["description"] = spec.description
    for key, val in (("trials", trials), ("horizon", horizon), ("seed", seed)):
        if val is not None:
            raw[key] = val
    apply_sets(raw, sets, example)
    return type(spec).from_dict(raw, spec.source)


def apply_sets(raw: dict[str, Any], sets, example: str) -> None:
    """Apply CLI ``--set dotted.key=value`` overrides to a spec's raw dict in place (values parsed as
    TOML, else kept as a bare string); ``example`` shows the form in the error for a malformed item."""
    for item in sets:
        if "=" not in item:
            raise SpecError(f"--set expects KEY=VALUE (e.g. {example}), got {item!r}.")
        key, text = item.split("=", 1)
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            value = text  # a bare string
        node = raw
        parts = key.strip().split(".")
        for part in parts[:-1]:
            if part not in node or not isinstance(node[part], dict):
                raise SpecError(f"--set {key}: no table {part!r} in the spec.{did_you_mean(part, node)}")
            node = node[part]
        node[parts[-1]] = value


# -------------------------------------------------------------------- lookup
def _spec_dir():
    return resources.files("ckb.experiments") / "specs"


def shipped() -> dict[str, Path]:
    """Names of the experiments shipped with the package -> their spec files."""
    return {p.name[: -len(".toml")]: Path(str(p)) for p in _spec_dir().iterdir() if p.name.endswith(".toml")}


def load_spec(name_or_path: str | Path) -> ExperimentSpec:
    """Load a shipped experiment by name, or a spec file by path."""
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
    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path} is not valid TOML: {exc}") from None
    return spec_from_dict(raw, source=str(path))


#: spec kinds other than the single-agent default: ``kind = "..."`` in a spec -> "module:Class" of its
#: spec class, which has ``from_dict``, ``with_overrides``, ``validate`` and the fields ``ckb list``
#: shows (``name``, ``title``, ``horizon``, ``trials``, ``algorithms``); its runner is registered in
#: :data:`ckb.experiments.run.RUNNERS` under the same kind.
SPEC_KINDS = {
    "multiagent": "ckb.multiagent.spec:MultiAgentSpec",
    "benchmark": "ckb.benchmarking.experiment:BenchmarkSpec",
}


def spec_from_dict(raw: dict[str, Any], source: str = ""):
    """The spec of ``raw``'s ``kind`` (single-agent when absent)."""
    import importlib

    kind = raw.get("kind")
    if kind is None:
        return ExperimentSpec.from_dict(raw, source=source)
    if kind not in SPEC_KINDS:
        where = f" in {source}" if source else ""
        raise SpecError(
            f"field 'kind'{where}: unknown kind {kind!r}; expected one of {sorted(SPEC_KINDS)} or none "
            f"(a single-agent experiment).{did_you_mean(str(kind), SPEC_KINDS)}"
        )
    module, cls = SPEC_KINDS[kind].split(":")
    return getattr(importlib.import_module(module), cls).from_dict(raw, source=source)
