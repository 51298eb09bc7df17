"""docs/catalog.md is the generated catalog of every registry (src/ckb/catalog.py), and stays so."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ckb import catalog

ROOT = Path(__file__).resolve().parents[1]
CATALOG = ROOT / "docs" / "catalog.md"
REGENERATE = "python -m ckb.catalog > docs/catalog.md"


@pytest.fixture(scope="module")
def rendered() -> str:
    return catalog.render()


def _registered() -> dict[str, list[str]]:
    """Every registered name and alias, by registry, read from the registries themselves."""
    import ckb.runner
    from ckb.experiments import shipped
    from ckb.exploration.strategies import STRATEGIES
    from ckb.multiagent import METHODS, MULTIAGENT_PROBLEMS
    from ckb.optimizer.policies import OPTIMIZER_POLICIES
    from ckb.policies import POLICIES
    from ckb.problems import PROBLEMS
    from ckb.problems.constrained_benchmarks import CONSTRAINED_BENCHMARKS

    out = {
        reg.kind: reg.names(with_aliases=True)
        for reg in (
            POLICIES,
            OPTIMIZER_POLICIES,
            STRATEGIES,
            PROBLEMS,
            ckb.runner.ENVIRONMENTS,
            METHODS,
            MULTIAGENT_PROBLEMS,
        )
    }
    kinds = catalog._kinds_registry()  # once the experiment kinds register themselves
    if kinds is not None:
        out[kinds.kind] = kinds.names(with_aliases=True)
    out["constrained benchmark"] = sorted(CONSTRAINED_BENCHMARKS)
    out["experiment"] = sorted(shipped())
    return out


def test_committed_catalog_is_the_generated_one(rendered: str) -> None:
    assert CATALOG.exists(), f"docs/catalog.md is missing; generate it with `{REGENERATE}`."
    committed = CATALOG.read_text(encoding="utf-8")
    if committed != rendered:
        old, new = committed.splitlines(), rendered.splitlines()
        first = next(
            (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new))
        )
        pytest.fail(
            "docs/catalog.md is out of date with the registries (first difference at line "
            f"{first + 1}: committed {old[first] if first < len(old) else '<end>'!r}, generated "
            f"{new[first] if first < len(new) else '<end>'!r}). Regenerate it with `{REGENERATE}`."
        )


def test_every_registered_name_and_alias_appears(rendered: str) -> None:
    missing = {kind: [n for n in names if f"`{n}`" not in rendered] for kind, names in _registered().items()}
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"registered but not in the catalog: {missing}"


def test_no_raw_sphinx_markup_or_paper_numbers(rendered: str) -> None:
    assert ":math:" not in rendered
    assert "``" not in rendered
    assert not re.search(r":(?:mod|class|func|meth|data|attr|ref):`", rendered)
    # papers are named by authors and year, never by the repository's file numbers or digests
    assert not re.search(r"(?<![\d.,])\b00[0-4]\b(?![.,]\d)", rendered)
    assert "digest" not in rendered.lower()


def test_summaries_are_whole_first_sentences() -> None:
    assert catalog.summary(_Doc("A rule (Ariafar et al. 2019): one thing. Another sentence.")) == (
        "A rule (Ariafar et al. 2019): one thing."
    )
    assert catalog.summary(
        _Doc("Uses :math:`\\mathrm{LCB}_{g_j}(x) \\le 0` and ``beta``; see the module docstring.")
    ) == ("Uses `LCB_{g_j}(x) ≤ 0` and `beta`.")
    assert catalog.summary(_Doc("Built on :class:`~ckb.problems.phased.PhasedProblem` (004 Sec. 6).")) == (
        "Built on `PhasedProblem` (Guo, Zhu & Liu 2023, Sec. 6)."
    )
    # a sentence is never cut inside a word, a code span or after an abbreviation
    line = catalog.summary(_Doc("Min x s.t. ``g(x) <= 0.5. Next``, e.g. here. Done. Not this."))
    assert line == "Min x s.t. `g(x) <= 0.5. Next`, e.g. here."


def test_importing_is_lazy_and_the_module_prints_the_catalog() -> None:
    code = (
        "import sys, ckb.catalog; "
        "print(any(m in sys.modules for m in ('torch', 'ckb.policies', 'ckb.optimizer.policies')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", "importing ckb.catalog should import no registry and no torch"
    main = subprocess.run(
        [sys.executable, "-m", "ckb.catalog"], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert main.stdout == catalog.render()


def test_writing_to_a_path_replaces_the_file_only_when_complete(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "catalog.md"
    target.write_text("old\n")
    catalog.main([str(target)])
    assert target.read_text(encoding="utf-8") == catalog.render()

    def broken() -> str:
        raise RuntimeError("a registry failed to import")

    target.write_text("old\n")
    monkeypatch.setattr(catalog, "render", broken)
    with pytest.raises(RuntimeError):
        catalog.main([str(target)])
    assert target.read_text() == "old\n"


class _Doc:
    """A stand-in object whose docstring is given."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
