"""The claims schema: one TOML file per paper in ``ckb/reproduce/claims/<short-name>.toml``.

Layout::

    [paper]
    short = "zhou-ji-2022"            # the paper's short name (first author(s), year), = the file name
    number = "..."                    # alias: the paper's number in the project's paper folder
    authors = "Xingyu Zhou, Bo Ji"
    title = "..."
    venue = "NeurIPS"
    year = 2022                       # or "undated"
    specs = ["ckb-synthetic-quarter", ...]   # the shipped experiment specs this paper's claims use
    note = "..."                      # optional: what the report should say up front

    [[claims]]
    id = "N-quarter-ckb-ucb"          # unique within the file
    where = "App. F.1, table 1"       # table / figure / section of the paper
    statement = "..."                 # the claim in the paper's words (or a close paraphrase)
    experiment = "ckb-synthetic-quarter"
    metric = "violating_rounds"       # a metric of the experiment's summary.json
    stat = "mean"                     # mean | median | share_le_zero | share_zero | slope (see verdict)
    kind = "value"                    # value | at_most | at_least | relative | ordering | lowest | sublinear
    algorithm = "ckb-ucb"             # value/at_most/at_least/relative/sublinear: the algorithm measured
    reference = "penalty-5"           # relative only: ours = stat(algorithm) / stat(reference) - 1
    paper_value = 1.1                 # value/at_most/at_least/relative
    tolerance = 1.0                   # absolute; reproduced within it, partly within partly_tolerance
    partly_tolerance = 2.0            # optional (default 2 x tolerance)
    order = ["ckb-ts", "stageopt"]    # ordering: the metric's stat increases along the list;
                                      # lowest: the first is below each of the others
    or_similar = true                 # ordering/lowest: a tie counts as in order (the paper's words:
                                      # "better (or similar)"); default false
    note = "..."                      # optional: a caveat printed with the verdict

The verdict rules are :mod:`ckb.reproduce.verdict`'s. Every claim must name a shipped spec listed in
``specs`` and, for the single-agent kind, algorithm labels of that spec (checked by :func:`load_paper`).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ckb._validation import did_you_mean
from ckb.errors import SpecError, UnknownNameError

#: the kinds judged by an ``order`` of labels rather than one algorithm
ORDER_KINDS = ("ordering", "lowest")
KINDS = ("value", "at_most", "at_least", "relative", *ORDER_KINDS, "sublinear")
STATS = ("mean", "median", "share_le_zero", "share_zero", "slope")
_CLAIM_KEYS = {
    "id", "where", "statement", "experiment", "metric", "stat", "kind", "algorithm", "reference",
    "paper_value", "tolerance", "partly_tolerance", "order", "note", "threshold", "or_similar",
}  # fmt: skip


@dataclass(frozen=True)
class Claim:
    """One claim of a paper and how our runs measure it (module docstring)."""

    id: str
    where: str
    statement: str
    experiment: str
    metric: str
    kind: str
    stat: str = "mean"
    algorithm: str | None = None
    reference: str | None = None
    paper_value: float | None = None
    tolerance: float = 0.0
    partly_tolerance: float | None = None
    order: tuple[str, ...] = ()
    threshold: float = 0.9
    note: str = ""
    or_similar: bool = False

    def algorithms(self) -> list[str]:
        """Every algorithm label the claim reads."""
        names = list(self.order) if self.kind in ORDER_KINDS else [self.algorithm]
        return names + ([self.reference] if self.reference else [])


@dataclass(frozen=True)
class Paper:
    """A paper: its citation, its specs, its claims."""

    short: str
    number: str
    authors: str
    title: str
    venue: str
    year: str
    specs: tuple[str, ...]
    claims: tuple[Claim, ...]
    note: str = ""
    quick: dict[str, Any] = field(default_factory=dict)

    @property
    def citation(self) -> str:
        return f"{self.authors}. {self.title}. {self.venue}, {self.year}."


def _claims_dir():
    return resources.files("ckb.reproduce") / "claims"


def claim_files() -> dict[str, Any]:
    """Short name -> claims file (a ``Traversable``)."""
    return {p.name[: -len(".toml")]: p for p in _claims_dir().iterdir() if p.name.endswith(".toml")}


def paper_names() -> dict[str, str]:
    """Every accepted name (short name and number) -> the short name."""
    out = {}
    for short, path in claim_files().items():
        raw = tomllib.loads(path.read_text())
        out[short] = short
        out[str(raw["paper"]["number"])] = short
    return out


def _claim(raw: dict[str, Any], where: str) -> Claim:
    unknown = set(raw) - _CLAIM_KEYS
    if unknown:
        key = sorted(unknown)[0]
        raise SpecError(f"unknown claim field {key!r}{where}.{did_you_mean(key, _CLAIM_KEYS)}")
    for key in ("id", "where", "statement", "experiment", "metric", "kind"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise SpecError(f"claim field {key!r}{where} is required (a non-empty string).")
    kind, stat = raw["kind"], raw.get("stat", "mean")
    if kind not in KINDS:
        raise SpecError(f"claim {raw['id']!r}{where}: kind {kind!r} is not one of {KINDS}.")
    if stat not in STATS:
        raise SpecError(f"claim {raw['id']!r}{where}: stat {stat!r} is not one of {STATS}.")
    if kind in ORDER_KINDS:
        if len(raw.get("order", [])) < 2:
            raise SpecError(f"claim {raw['id']!r}{where}: {kind!r} needs order = [at least two labels].")
    elif not raw.get("algorithm"):
        raise SpecError(f"claim {raw['id']!r}{where}: kind {kind!r} needs an algorithm.")
    if kind in ("value", "at_most", "at_least", "relative") and not isinstance(
        raw.get("paper_value"), int | float
    ):
        raise SpecError(f"claim {raw['id']!r}{where}: kind {kind!r} needs a numeric paper_value.")
    if "or_similar" in raw and (not isinstance(raw["or_similar"], bool) or kind not in ORDER_KINDS):
        raise SpecError(
            f"claim {raw['id']!r}{where}: or_similar must be true or false, on an ordering or lowest claim "
            f"(got {raw['or_similar']!r} on kind {kind!r})."
        )
    if kind == "relative" and not raw.get("reference"):
        raise SpecError(f"claim {raw['id']!r}{where}: kind 'relative' needs a reference algorithm.")
    return Claim(
        id=raw["id"],
        where=raw["where"],
        statement=raw["statement"],
        experiment=raw["experiment"],
        metric=raw["metric"],
        kind=kind,
        stat=stat,
        algorithm=raw.get("algorithm"),
        reference=raw.get("reference"),
        paper_value=None if raw.get("paper_value") is None else float(raw["paper_value"]),
        tolerance=float(raw.get("tolerance", 0.0)),
        partly_tolerance=None if raw.get("partly_tolerance") is None else float(raw["partly_tolerance"]),
        order=tuple(raw.get("order", ())),
        threshold=float(raw.get("threshold", 0.9)),
        note=raw.get("note", ""),
        or_similar=raw.get("or_similar", False),
    )


def load_paper(name: str, *, check_specs: bool = True) -> Paper:
    """The paper named ``name`` (short name or number), its claims checked; ``check_specs``: every claim's
    experiment is a shipped spec listed in ``specs`` and its algorithm labels exist there."""
    names = paper_names()
    if str(name) not in names:
        shown = sorted(set(names.values()))  # the papers' short names, not the aliases that also work
        raise UnknownNameError(f"Unknown paper {name!r}.{did_you_mean(str(name), shown)}")
    short = names[str(name)]
    where = f" in claims/{short}.toml"
    raw = tomllib.loads(claim_files()[short].read_text())
    head = raw["paper"]
    claims = tuple(_claim(c, where) for c in raw.get("claims", []))
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise SpecError(f"claim id {dup!r} appears twice{where}.")
    paper = Paper(
        short=short,
        number=str(head["number"]),
        authors=head["authors"],
        title=head["title"],
        venue=head["venue"],
        year=str(head["year"]),
        specs=tuple(head["specs"]),
        claims=claims,
        note=head.get("note", ""),
        quick=dict(head.get("quick", {})),
    )
    if check_specs:
        _check_specs(paper, where)
    return paper


def _check_specs(paper: Paper, where: str) -> None:
    from ckb.experiments.spec import load_spec, shipped

    known = shipped()
    for s in paper.specs:
        if s not in known:
            raise SpecError(f"spec {s!r}{where} is not a shipped experiment.{did_you_mean(s, known)}")
    labels = {s: set(load_spec(s).algorithms) for s in paper.specs}
    for c in paper.claims:
        if c.experiment not in labels:
            raise SpecError(
                f"claim {c.id!r}{where}: experiment {c.experiment!r} is not in the paper's specs."
            )
        for a in c.algorithms():
            if a not in labels[c.experiment]:
                raise SpecError(
                    f"claim {c.id!r}{where}: no algorithm {a!r} in {c.experiment!r}."
                    f"{did_you_mean(a, labels[c.experiment])}"
                )


#: every paper's short name (the claims files)
PAPERS = tuple(sorted(claim_files()))
