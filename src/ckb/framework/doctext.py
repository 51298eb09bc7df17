"""Docstrings as clean one-line summaries (Sphinx roles and LaTeX made readable, papers named by their
authors): shared by ``ckb list`` (every kind's listing) and ``docs/catalog.md`` (:mod:`ckb.catalog`).
A leaf module: the standard library only."""

from __future__ import annotations

import inspect
import re
import sys
from typing import Any

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
