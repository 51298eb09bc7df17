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
import inspect
import re
import sys
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["PAPERS", "main", "render", "sections", "summary"]

#: the five papers ckb implements, by the numbers their files carry in the repository, as
#: (short name used in summaries, full reference); docs/ and the README use the same names
PAPERS: dict[str, tuple[str, str]] = {
    "000": (
        "Xu et al. 2023",
        "Xu, Jiang, Svetozarevic & Jones, Multi-Agent Bayesian Optimization with Coupled Black-Box "
        "and Affine Constraints, preprint, 2023",
    ),
    "001": (
        "Shi & Eryilmaz 2022",
        "Shi & Eryilmaz, A Bayesian Approach for Stochastic Continuum-armed Bandit with Long-term "
        "Constraints, AISTATS 2022",
    ),
    "002": (
        "the CBO paper",
        "anonymous, Provably Efficient Bayesian Optimization with Unknown Constraints, anonymous "
        "submission, undated",
    ),
    "003": (
        "Zhou & Ji 2022",
        "Zhou & Ji, On Kernelized Multi-Armed Bandits with Constraints, NeurIPS 2022",
    ),
    "004": (
        "Guo, Zhu & Liu 2023",
        "Guo, Zhu & Liu, Rectified Pessimistic-Optimistic Learning for Stochastic Continuum-armed "
        "Bandit with Constraints, L4DC 2023",
    ),
}

_GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "Gamma": "Γ",
    "delta": "δ",
    "Delta": "Δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "eta": "η",
    "theta": "θ",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "Sigma": "Σ",
    "tau": "τ",
    "phi": "φ",
    "varphi": "φ",
    "psi": "ψ",
    "omega": "ω",
}
_SYMBOLS = {
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "ne": "≠",
    "neq": "≠",
    "in": "∈",
    "sum": "Σ",
    "prod": "Π",
    "infty": "∞",
    "cdot": "·",
    "times": "×",
    "approx": "≈",
    "to": "→",
    "rightarrow": "→",
    "sqrt": "√",
}
_ACCENTS = {"hat": "\u0302", "check": "\u030c", "tilde": "\u0303", "bar": "\u0304"}
_ABBREVIATIONS = {
    "s.t",
    "al",
    "e.g",
    "i.e",
    "Alg",
    "Sec",
    "App",
    "Eq",
    "eq",
    "Fig",
    "Exp",
    "vs",
    "cf",
    "resp",
}


def _latex(text: str) -> str:
    """A readable plain-text form of a short LaTeX expression (what a :math: role holds)."""
    s = text
    s = re.sub(r"\\(?:left|right|big|Big|bigg|Bigg)\b", "", s)
    s = re.sub(r"\\arg\s*\\?(max|min)", r"arg\1", s)
    s = re.sub(r"\\(?:mathrm|text|mathcal|mathbb|mathbf|operatorname|boldsymbol)\s*\{([^{}]*)\}", r"\1", s)
    s = re.sub(
        r"\\(" + "|".join(_ACCENTS) + r")\s*(?:\{([^{}]*)\}|(\\?[A-Za-z]))",
        lambda m: (m.group(2) or m.group(3)) + _ACCENTS[m.group(1)],
        s,
    )
    s = re.sub(r"\\([,;:! ]|quad|qquad)", " ", s)
    s = re.sub(r"\\([{}])", r"\1", s)

    def command(m: re.Match[str]) -> str:
        name = m.group(1)
        return _GREEK.get(name) or _SYMBOLS.get(name) or name

    s = re.sub(r"\\([A-Za-z]+)", command, s)
    # accents left on a command name (``\hat\sigma``): move the mark after the letter it now follows
    s = re.sub(r"_\{([^{}\s]|[^{}\s]\u0302)\}", r"_\1", s)
    s = re.sub(r"\^\{([^{}\s])\}", r"^\1", s)
    return re.sub(r"\s+", " ", s).strip()


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def _sphinx_to_markdown(text: str) -> str:
    """Sphinx roles and inline literals as markdown: :math:`x` -> `x` (readable), ``x`` -> `x`."""
    out = re.sub(r":math:`([^`]*)`", lambda m: _code(_latex(m.group(1))), text)
    out = re.sub(
        r":[a-z]+:`~?([^`]*)`",
        lambda m: _code(m.group(1).split(".")[-1] if m.group(0).count("~") else m.group(1)),
        out,
    )
    out = re.sub(r"``([^`]+)``", lambda m: _code(m.group(1)), out)
    return out


def _papers_by_name(text: str) -> str:
    """Replace the repository's paper numbers and digest references by the papers' names."""
    digest = r"\bdigests?(?:\s+\d{3}(?:[-/]\d{3})?)?(?:,?\s*§\s*[\d.]+(?:[-–][\d.]+)?)*"
    s = re.sub(r"\s*\(" + digest + r"\)", "", text)  # "(digest 001 §5.4)"
    s = re.sub(r"\s*[;,]\s*" + digest, "", s)  # "(Shi & Eryilmaz; digest 001 §2)"
    s = re.sub(r"`(00[0-4])`", r"\1", s)
    s = re.sub(r"\s*\(issues?\s+\d+\)", "", s)
    s = re.sub(r"\bissues?\s+\d+(?:'s)?\s*", "", s)

    def name(num: str, before_ref: bool) -> str:
        short = PAPERS[num][0]
        return f"{short}," if before_ref else short

    ref = r"(?=\s+(?:Algorithm|Alg\.|Sec\.|Section|App\.|Appendix|Table|Theorem|Fig|Figure|Exp\.|E\.\d|Prop|eq|Eq))"
    s = re.sub(
        r"(?<![\d.,])\b(00[0-4])/(00[0-4])\b" + f"({ref})?",
        lambda m: (
            f"{PAPERS[m.group(1)][0]} / {PAPERS[m.group(2)][0]}" + ("," if m.group(3) is not None else "")
        ),
        s,
    )
    s = re.sub(
        r"(?<![\d.,])\b(00[0-4])\b(?![.,]\d)" + f"({ref})?",
        lambda m: name(m.group(1), m.group(2) is not None),
        s,
    )
    # "(Guo, Zhu & Liu; Guo, Zhu & Liu 2023)" -> "(Guo, Zhu & Liu 2023)"
    for short, _ in PAPERS.values():
        authors = short.rsplit(" ", 1)[0]
        s = re.sub(re.escape(authors) + r"[;,]\s*" + re.escape(short), short, s)
    s = re.sub(r"\(\s*[;,]?\s*\)", "", s)
    return s


def _first_sentence(text: str) -> str:
    """The first sentence of ``text`` (whole, never cut inside a word or a code span)."""
    for m in re.finditer(r"[.!?](?=\s|$)", text):
        end = m.end()
        if text[:end].count("`") % 2:
            continue  # inside a code span
        word = re.search(r"([A-Za-z.]+)\.$", text[:end])
        if word and word.group(1) in _ABBREVIATIONS:
            continue
        rest = text[end:].lstrip()
        if not rest or rest[0].isupper() or rest[0] in "`*(\"'":
            return text[:end]
    return text


def summary(obj: Any) -> str:
    """One clean line about ``obj``: the first sentence of its docstring, or of its module's docstring
    when the object has none or only says its own name (``"IGP-UCB; see the module docstring."``)."""
    line = _clean_first_sentence(getattr(obj, "__doc__", None) or "")
    if len(line.split()) <= 3:
        module = sys.modules.get(getattr(obj, "__module__", "") or "")
        line = _clean_first_sentence(getattr(module, "__doc__", None) or "") or line
    name = getattr(obj, "name", None)
    if isinstance(name, str) and name:
        line = re.sub(r"^`" + re.escape(name) + r"`:\s*", "", line)
    if line and line[0].islower():
        line = line[0].upper() + line[1:]
    return line


def _clean_first_sentence(doc: str) -> str:
    doc = inspect.cleandoc(doc)
    paragraph = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    line = re.sub(r"\s+", " ", paragraph).strip()
    line = _sphinx_to_markdown(line)
    line = _papers_by_name(line)
    module_doc = r"(?:see\s+)?(?:the\s+)?(?:its\s+)?module docstring"
    line = re.sub(r"\s*\(" + module_doc + r"\)", "", line)
    line = re.sub(r"\s*[;,]\s*" + module_doc + r"(?=[.;,)]|$)", "", line)
    line = re.sub(r"\(\s*[;,]\s*", "(", line)
    line = re.sub(r"\s*[;,]\s*\)", ")", line)
    line = re.sub(r"\(\s*\)", "", line)
    line = re.sub(r"\s+([.,;:])", r"\1", line)
    return _first_sentence(re.sub(r"\s+", " ", line).strip())


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
        "(`python -m ckb.catalog > docs/catalog.md` regenerates this file; `ckb list` shows the same in "
        "a terminal). Papers are named by authors and year; the full references are in the "
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
    only once it is complete (a failing registry then leaves the old file in place)."""
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if not args:
        sys.stdout.write(text)
        return
    path = Path(args[0])
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


if __name__ == "__main__":
    main()
