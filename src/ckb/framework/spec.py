"""The spec base every experiment kind builds on: the common fields, and one parse / print / override path.

A spec is a TOML table. Every kind has the same top-level fields::

    kind = "..."        # which kind (ckb.framework.KINDS); optional for the default, single-agent kind
    name = "..."        # required
    title, description, paper = "..."   # one line for `ckb list`, prose, where the set-up comes from
    horizon = T         # required, >= 1
    trials = N          # required, >= 1
    seed = 0            # >= 0
    plugins = ["my_problems"]  # optional: user modules to import first (ckb.framework.plugins)
    [algorithms.LABEL]  # required, at least one: what to compare, a table per label
    [reference]         # the paper's numbers, reported beside ours (free-form)
    [choices]           # decision -> reason, for every choice the paper leaves open

plus its own (``FIELDS``: e.g. ``[problem]``) and, if it has one, a ``[report]`` table (``REPORT``: allowed
keys and types). ``from_dict`` checks every field (an unknown one is named with the closest valid name),
``to_dict`` prints the spec back as such a table (``from_dict(to_dict())`` is the same spec), and
``with_overrides`` is ``from_dict`` of ``to_dict`` with the command line's ``--trials/--horizon/--seed``
and ``--set dotted.key=value`` applied, so an override is validated like the file it changes.
"""

from __future__ import annotations

import copy
import os
import tomllib
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ckb._validation import did_you_mean, one_line, short_repr
from ckb.errors import CKBError, SpecError

#: the kind of a spec without a ``kind`` field
DEFAULT_KIND = "single-agent"

#: top-level fields every kind has, with their TOML types (``kind`` is required unless the kind is the default)
COMMON_FIELDS: dict[str, type] = {
    "kind": str,
    "name": str,
    "title": str,
    "description": str,
    "paper": str,
    "horizon": int,
    "trials": int,
    "seed": int,
    "algorithms": dict,
    "reference": dict,
    "choices": dict,
    "plugins": list,
}
COMMON_REQUIRED = ("name", "horizon", "trials", "algorithms")


@dataclass(kw_only=True)
class SpecBase:
    """The fields every experiment kind has; a kind subclasses it (a keyword-only dataclass) and sets:

    - ``kind``: its registry name; ``FIELDS``/``REQUIRED``: its own top-level fields (name -> TOML type)
      and which of them are required; ``REPORT``: the keys of its ``[report]`` table (empty: none);
      ``SET_EXAMPLE``: a ``--set`` shown in errors;
    - ``_parse(raw, where, report)``: its own constructor keywords from the checked raw table (including
      ``algorithms``); ``_body()``: its own fields back as TOML tables, in print order;
    - ``configs()`` and ``validate()`` (build everything once, so bad values fail before a sweep).
    """

    name: str
    horizon: int
    trials: int
    algorithms: dict[str, Any]
    seed: int = 0
    title: str = ""
    description: str = ""
    paper: str = ""
    reference: dict[str, Any] = field(default_factory=dict)
    choices: dict[str, Any] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    #: user modules imported before the spec is built (``ckb.framework.plugins``)
    plugins: list[str] = field(default_factory=list)
    source: str = ""

    kind: ClassVar[str] = DEFAULT_KIND
    FIELDS: ClassVar[dict[str, type]] = {}
    REQUIRED: ClassVar[tuple[str, ...]] = ()
    REPORT: ClassVar[dict[str, type]] = {}
    SET_EXAMPLE: ClassVar[str] = "algorithms.LABEL.KEY=VALUE"
    #: fields of :meth:`to_dict` that do not change what a task computes (names, prose, the report's
    #: layout; more trials add tasks, fewer leave them on disk): an output folder whose recorded spec
    #: differs only in these resumes, any other difference is another experiment
    #: (:func:`ckb.framework.pipeline.check_results_folder`)
    NOT_RESULTS: ClassVar[tuple[str, ...]] = (
        "name",
        "title",
        "description",
        "paper",
        "reference",
        "choices",
        "report",
        "trials",
        "plugins",
    )
    #: keys of each ``algorithms.LABEL`` table that do not change what its tasks compute (as
    #: :attr:`NOT_RESULTS`; e.g. where a multi-agent label's agents run)
    NOT_RESULTS_PER_ALGORITHM: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def results_view(cls, table: dict[str, Any]) -> dict[str, Any]:
        """A :meth:`to_dict` table (this spec's or one an output folder recorded) in the form its results
        are compared in (:func:`ckb.framework.pipeline.check_results_folder`): a kind whose spec states a
        default once for all its algorithms folds it into each, so two ways of writing one configuration
        are the same. The table as it is, by default."""
        return table

    # ------------------------------------------------------------------ build
    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = ""):
        """The spec of the raw TOML table ``raw`` (``source``: the file, named in errors)."""
        where = f" in {source}" if source else ""
        top = {**COMMON_FIELDS, **cls.FIELDS, **({"report": dict} if cls.REPORT else {})}
        required = (() if cls.kind == DEFAULT_KIND else ("kind",)) + COMMON_REQUIRED + cls.REQUIRED
        check_fields(raw, top, required, where, kind=cls.kind)
        if "plugins" in raw:  # before the kind's own fields, which may name what the plugins register
            from ckb.framework.plugins import load_plugins

            load_plugins(raw["plugins"], f" (field 'plugins'{where})")
        report = check_report(raw, cls.REPORT, where)
        return cls(**common_fields(raw, source), report=report, **cls._parse(raw, where, report))

    @classmethod
    def _parse(cls, raw: dict[str, Any], where: str, report: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def where(self) -> str:
        """`` in FILE`` for error messages (empty for a spec built in code)."""
        return f" in {self.source}" if self.source else ""

    # ------------------------------------------------------------------ print
    def to_dict(self) -> dict[str, Any]:
        """The spec as a TOML-ready table (a deep copy): ``from_dict(to_dict())`` is the same spec."""
        return copy.deepcopy(
            {
                **({} if self.kind == DEFAULT_KIND else {"kind": self.kind}),
                "name": self.name,
                "title": self.title,
                "description": self.description,
                "paper": self.paper,
                "horizon": self.horizon,
                "trials": self.trials,
                "seed": self.seed,
                **({"plugins": list(self.plugins)} if self.plugins else {}),
                **self._body(),
                "reference": self.reference,
                "choices": self.choices,
                **({"report": self.report} if self.report else {}),
            }
        )

    def _body(self) -> dict[str, Any]:
        raise NotImplementedError

    def settings(self) -> dict[str, Any]:
        """``summary.json``'s ``settings``: :meth:`to_dict` without ``description`` and ``reference``
        (the summary has the reference at its top level; the prose is in the spec file)."""
        return {k: v for k, v in self.to_dict().items() if k not in ("description", "reference")}

    def check_size(self) -> None:
        """Refuse, before anything is allocated, a sweep whose traces cannot fit in the available memory
        (every trace of a run is held at once when it is summarized): at least
        ``trials x algorithms x (T x 72 bytes + 16 KiB)``, see :func:`ckb.runner.trace.trace_bytes`."""
        from ckb.runner.trace import TASK_OVERHEAD_BYTES, check_memory, trace_bytes

        n = self.trials * max(1, len(self.algorithms))
        check_memory(
            trace_bytes(self.horizon, 1, 1),
            f"one trace of T = {self.horizon} rounds{self.where}",
            " Choose a smaller horizon (--horizon).",
        )
        check_memory(
            n * (trace_bytes(self.horizon, 1, 1) + TASK_OVERHEAD_BYTES),
            f"{self.trials} trial(s) x {len(self.algorithms)} algorithm(s) at T = {self.horizon}{self.where}",
            " Choose fewer trials (--trials) or a smaller horizon (--horizon).",
        )

    def with_overrides(self, *, trials=None, horizon=None, seed=None, sets: list[str] = ()):
        """A copy with the CLI's overrides (None: unchanged); ``sets`` are ``dotted.key=value`` strings
        (values parsed as TOML), checked again by :meth:`from_dict`."""
        return overridden(self, trials, horizon, seed, sets, example=self.SET_EXAMPLE)


# ------------------------------------------------------------------------- helpers shared by every kind
@contextmanager
def blamed(field: str, failed: str = ""):
    """An error building one part of a spec as a one-line :class:`SpecError` blaming ``field``: a ckb error
    as it is, anything else (a user's factory or policy, a plugin, may raise anything) after ``failed``
    with its type and its message on one line."""
    try:
        yield
    except CKBError as exc:
        raise SpecError(f"{field}: {exc}") from None
    except Exception as exc:
        raise SpecError(f"{field}: {failed}{type(exc).__name__}: {one_line(exc)}") from None


def check_fields(
    raw: dict[str, Any], top: dict[str, type], required: tuple[str, ...], where: str, kind: str | None = None
) -> None:
    """Top-level fields: known names (closest suggested), their types, the required ones present,
    ``horizon``/``trials`` >= 1, ``seed`` >= 0 where given, and ``kind`` (where given) equal to ``kind``."""
    for key, value in raw.items():
        if key not in top:
            raise SpecError(f"unknown field {key!r}{where}.{did_you_mean(key, top)}")
        want = top[key]
        if want is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise SpecError(f"field {key!r}{where} must be an integer, got {value!r}.")
        if want is not int and not isinstance(value, want):
            noun = {dict: "table", list: "list"}.get(want, "string")
            raise SpecError(f"field {key!r}{where} must be a {noun}, got {value!r}.")
    for key in required:
        if key not in raw:
            raise SpecError(f"missing required field {key!r}{where}.")
    for key, low in (("horizon", 1), ("trials", 1), ("seed", 0)):
        if key in raw and raw[key] < low:
            raise SpecError(f"field {key!r}{where} must be >= {low}, got {raw[key]!r}.")
    if kind is not None and raw.get("kind", kind) != kind:
        raise SpecError(f"field 'kind'{where} must be {kind!r} here, got {raw['kind']!r}.")


#: the longest spec name or label, in bytes (a file name may have 255; ckb adds suffixes such as
#: ``-beta-sweep``)
MAX_NAME_BYTES = 200


def check_file_name(value: str, field_name: str, where: str = "") -> str:
    """``value`` if it can name a file or folder inside the output folder (the spec's ``name``, an
    algorithm label): not empty, no path separator, not ``.`` or ``..``, no NUL, no leading ``-`` or
    ``.``, at most :data:`MAX_NAME_BYTES` bytes; else :class:`SpecError`. So no output ever lands outside
    ``--out``, and no name is too long for the file system."""
    bad = (
        not isinstance(value, str)
        or not value.strip()
        or value.startswith((".", "-"))
        or any(c in value for c in ("/", "\\", "\0"))
        or (os.altsep is not None and os.altsep in value)
    )
    if bad:
        raise SpecError(
            f"field {field_name!r}{where} names files under the output folder, so it must be a plain name "
            f"(no '/' or '\\', not starting with '.' or '-'), got {value!r}."
        )
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        raise SpecError(
            f"field {field_name!r}{where} names files under the output folder, so it must be at most "
            f"{MAX_NAME_BYTES} bytes long (file systems allow 255, and ckb adds suffixes), got {size}: "
            f"{short_repr(value, 60)}."
        )
    return value


def common_fields(raw: dict[str, Any], source: str) -> dict[str, Any]:
    """The fields every spec kind has but ``algorithms`` and ``report``, as constructor keywords:
    ``name``, ``horizon``, ``trials``, ``seed`` (default 0), ``title``, ``description``, ``paper``,
    ``reference``, ``choices``, ``source``."""
    check_file_name(raw["name"], "name", f" in {source}" if source else "")
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
        "plugins": list(raw.get("plugins", [])),
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


def problem_table(raw: dict[str, Any], where: str, what: str) -> tuple[str, dict[str, Any]]:
    """``[problem]`` as (its ``name``, the other keys: its parameters); ``what`` says what the name is."""
    problem = dict(raw["problem"])
    if "name" not in problem:
        raise SpecError(f"field 'problem.name'{where} is required ({what}).")
    return problem.pop("name"), problem


def algorithm_tables(
    raw: dict[str, Any], where: str, noun: str = "algorithm", hint: str = ""
) -> dict[str, dict[str, Any]]:
    """``[algorithms.LABEL]`` as label -> a copy of its table; at least one (a ``noun``), each a table
    (``hint`` says what it holds)."""
    if not raw["algorithms"]:
        raise SpecError(f"field 'algorithms'{where} must list at least one {noun}.")
    out = {}
    for label, body in raw["algorithms"].items():
        check_file_name(label, f"algorithms.{label}", where)
        if not isinstance(body, dict):
            raise SpecError(f"field 'algorithms.{label}'{where} must be a table{hint}.")
        out[label] = dict(body)
    return out


def overridden(spec, trials, horizon, seed, sets, example: str):
    """``spec`` (any kind) rebuilt from its ``to_dict`` with the CLI's ``--trials``, ``--horizon``,
    ``--seed`` (None: unchanged) and ``--set`` overrides, validated again by its ``from_dict``; with
    ``--set``, errors name the source as ``FILE with --set`` (the bad value may be the override's)."""
    raw = spec.to_dict()
    flags = {"trials": "--trials", "horizon": "--horizon", "seed": "--seed"}
    for key, val in (("trials", trials), ("horizon", horizon), ("seed", seed)):
        if val is not None:
            raw[key] = val
            twice = [item for item in sets if item.split("=", 1)[0].strip() == key]
            if twice:
                raise SpecError(f"{flags[key]} {val} and --set {twice[0]} both set {key!r}; give it once.")
    apply_sets(raw, sets, example)
    source = spec.source
    if sets and " with --set" not in source:
        source = f"{source} with --set" if source else "--set"
    return type(spec).from_dict(raw, source)


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
