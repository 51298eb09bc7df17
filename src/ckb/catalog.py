"""The catalog: every registry of ckb rendered as markdown, generated, never typed by hand.

:func:`render` lists the harness policies (``ckb.policies.POLICIES``), the optimizer policies
(``ckb.optimizer.policies.OPTIMIZER_POLICIES``), the exploration strategies, the problems, the
constrained-benchmark problems, the environments, the multi-agent methods and problems, and the shipped
experiments, each with its aliases and a one-line summary: the first sentence of the object's docstring
(or of its module's, when the object has none), with Sphinx markup turned into markdown and the papers
named by authors and year. ``docs/catalog.md`` is this output; regenerate it after adding or renaming
anything registered::

    python -m ckb.catalog > docs/catalog.md

``python -m ckb.catalog docs/catalog.md`` does the same but replaces the file only once the catalog is
complete. ``tests/test_catalog.py`` fails when the committed file and the registries disagree. Importing
this module imports no registry; :func:`render` imports them when called (the optimizer policies need no
torch to be listed).
"""

from __future__ import annotations

import importlib
import re
import sys
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["PAPERS", "main", "render", "sections", "summary"]

from ckb.framework.doctext import (  # noqa: F401  (re-exported: ckb.catalog.summary, PAPERS)
    _ABBREVIATIONS,
    _ACCENTS,
    _GREEK,
    _SYMBOLS,
    PAPERS,
    _clean_first_sentence,
    _code,
    _first_sentence,
    _latex,
    _papers_by_name,
    _sphinx_to_markdown,
    summary,
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def _registry_rows(registry: Any) -> list[list[str]]:
    rows = []
    for name in registry.names():
        aliases = ", ".join(_code(a) for a in registry.aliases_of(name))
        rows.append([_code(name), aliases, summary(registry.get(name))])
    return rows


def _harness_policies() -> list[str]:
    from ckb.policies import POLICIES

    return [
        "Decision rules of the bandit harness (`ckb.policies.POLICIES`), run by `ckb experiment` and "
        '`ckb.runner.Trial` on finite or gridded domains. Add one with `@POLICIES.register("name")` '
        "on a `Policy` subclass in its own module under `ckb/policies/`.",
        "",
        *_table(["name", "aliases", "summary"], _registry_rows(POLICIES)),
    ]


def _optimizer_policies() -> list[str]:
    from ckb.optimizer.policies import OPTIMIZER_POLICIES  # no torch needed to list them

    return [
        "Policies of `ckb.Optimizer` (`ckb.optimizer.policies.OPTIMIZER_POLICIES`): the same rules on a "
        'box with fitted BoTorch GPs (`pip install -e ".[botorch]"` to run them). Add one with '
        '`@OPTIMIZER_POLICIES.register("name")` in its own module under `ckb/optimizer/policies/`.',
        "",
        *_table(["name", "aliases", "summary"], _registry_rows(OPTIMIZER_POLICIES)),
    ]


def _strategies() -> list[str]:
    from ckb.exploration.strategies import STRATEGIES

    return [
        "Exploration strategies of the primal-dual policies (`ckb.exploration.strategies.STRATEGIES`).",
        "",
        *_table(["name", "aliases", "summary"], _registry_rows(STRATEGIES)),
    ]


def _problems() -> list[str]:
    from ckb.problems import PROBLEMS

    return [
        "Single-agent problems (`ckb.problems.PROBLEMS`), named in a spec's `[problem]` table. Add one "
        'with `@PROBLEMS.register("name")` on a factory `f(rng, **params) -> Problem`.',
        "",
        *_table(["name", "aliases", "summary"], _registry_rows(PROBLEMS)),
    ]


def _constrained_benchmarks() -> list[str]:
    from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS

    rows = []
    for name in sorted(CONSTRAINED_BENCHMARKS):
        b = CONSTRAINED_BENCHMARKS[name]
        rows.append(
            [
                _code(name),
                _code(b.problem),
                str(len(b.constraint_scale)),
                f"{b.f_star:.6g}",
                _papers_by_name(_sphinx_to_markdown(b.source)),
            ]
        )
    return [
        "Problems of the constrained-BO benchmark (`ckb.problems.constrained_benchmarks."
        "CONSTRAINED_BENCHMARKS`, run by `ckb experiment constrained-bo`), with their known optima. "
        "Add one as an entry of that dictionary.",
        "",
        *_table(["name", "problem", "m", "f*", "source"], rows),
    ]


def _environments() -> list[str]:
    importlib.import_module("ckb.runner")  # registers every module of ckb/runner/environments/
    from ckb.runner.environment import ENVIRONMENTS

    return [
        "Environments (`ckb.runner.ENVIRONMENTS`): what a policy is shown each round and when. Add one "
        "in a module under `ckb/runner/environments/` calling `ENVIRONMENTS.add(...)`.",
        "",
        *_table(["name", "aliases", "summary"], _registry_rows(ENVIRONMENTS)),
    ]


def _multiagent() -> list[str]:
    from ckb.multiagent import METHODS, MULTIAGENT_PROBLEMS

    return [
        "Multi-agent methods (`ckb.multiagent.METHODS`: agents plus coordinator) and problems "
        '(`ckb.multiagent.MULTIAGENT_PROBLEMS`), used by specs with `kind = "multiagent"`.',
        "",
        "Methods:",
        "",
        *_table(["name", "aliases", "summary"], _registry_rows(METHODS)),
        "",
        "Problems:",
        "",
        *_table(["name", "aliases", "summary"], _registry_rows(MULTIAGENT_PROBLEMS)),
    ]


def _experiments() -> list[str]:
    from ckb.experiments import shipped

    specs = shipped()
    rows = []
    for name in sorted(specs):
        # the spec file's own fields (what `ckb spec NAME` prints), read without building the spec
        raw = tomllib.loads(specs[name].read_text(encoding="utf-8"))
        title = _papers_by_name(_sphinx_to_markdown(re.sub(r"\s+", " ", str(raw.get("title", ""))).strip()))
        rows.append(
            [
                _code(name),
                str(raw.get("kind", "single-agent")),
                str(raw.get("horizon", "")),
                str(raw.get("trials", "")),
                title,
            ]
        )
    return [
        "Shipped experiments (`ckb.experiments.shipped()`, the TOML files in `ckb/experiments/specs/`): "
        "`ckb experiment NAME` runs one, `ckb spec NAME` prints its spec (with every choice the paper "
        "leaves open). T is the horizon (evaluations for the benchmark), trials the number of seeds.",
        "",
        *_table(["name", "kind", "T", "trials", "title"], rows),
    ]


def _kinds_registry() -> Any:
    """The experiment framework's registry of kinds, once the kinds register themselves there (else None)."""
    try:
        framework = importlib.import_module("ckb.framework")
    except ImportError:
        return None
    importlib.import_module("ckb.experiments")  # imports every shipped kind, which registers itself
    kinds = getattr(framework, "KINDS", None)
    return kinds if kinds is not None and kinds.names() else None


def _kinds() -> list[str]:
    return [
        "Kinds of experiment (`ckb.framework.KINDS`): a spec's `kind` picks one (none: the single-agent "
        "kind). A new kind is a `Kind` subclass, with its spec class, registered with `register_kind`.",
        "",
        *_table(["name", "aliases", "summary"], _registry_rows(_kinds_registry())),
    ]


def sections() -> list[tuple[str, Callable[[], list[str]]]]:
    """The catalog's sections in order: (heading, function returning its markdown lines)."""
    kinds = [("Experiment kinds", _kinds)] if _kinds_registry() is not None else []
    return [
        ("Experiments", _experiments),
        *kinds,
        ("Harness policies", _harness_policies),
        ("Optimizer policies", _optimizer_policies),
        ("Exploration strategies", _strategies),
        ("Problems", _problems),
        ("Constrained-benchmark problems", _constrained_benchmarks),
        ("Environments", _environments),
        ("Multi-agent methods and problems", _multiagent),
    ]


def render() -> str:
    """The markdown of ``docs/catalog.md``: every registry, generated from the code."""
    lines = [
        "# Catalog",
        "",
        "<!-- Generated by `python -m ckb.catalog > docs/catalog.md`; do not edit by hand. -->",
        "",
        "Everything registered in ckb, generated from the registries and the docstrings "
        "(`python -m ckb.catalog > docs/catalog.md` regenerates this file; `ckb list` shows "
        "the experiments, policies, problems, environments and methods in a terminal). Papers are named by authors and year; the full references are in the "
        "[README](../README.md#papers).",
        "",
    ]
    contents = [f"- [{heading}](#{heading.lower().replace(' ', '-')})" for heading, _ in sections()]
    lines += [*contents, ""]
    for heading, build in sections():
        lines += [f"## {heading}", "", *build(), ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> None:
    """``python -m ckb.catalog`` prints the catalog; ``python -m ckb.catalog PATH`` writes it to PATH
    only once it is complete (a failing registry then leaves the old file in place). Before, ``--help``
    wrote a file named ``--help``, extra arguments were ignored and a missing folder was a traceback."""
    import argparse

    from ckb.io import atomic_write

    parser = argparse.ArgumentParser(
        prog="python -m ckb.catalog", description="Print docs/catalog.md (or write it to PATH)."
    )
    parser.add_argument("path", nargs="?", help="the file to write (default: print to stdout)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    text = render()
    if args.path is None:
        sys.stdout.write(text)
        return
    path = Path(args.path)
    if not path.parent.is_dir():
        parser.exit(
            2, f"error: cannot write {args.path!r}: the folder {str(path.parent)!r} does not exist.\n"
        )
    try:
        atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
    except OSError as exc:
        parser.exit(2, f"error: cannot write {args.path!r}: {exc.strerror or exc}.\n")


if __name__ == "__main__":
    main()
