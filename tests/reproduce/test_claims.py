"""Tests for src/ckb/reproduce/claims.py: every claims file parses and references existing specs/metrics."""

import pytest

from ckb.errors import SpecError, UnknownNameError
from ckb.reproduce import PAPERS, load_paper, paper_names
from ckb.reproduce.claims import _claim

SINGLE_AGENT_METRICS = {"regret", "violation", "positive_violation", "violating_rounds"}
MULTI_AGENT_METRICS = {"regret", "violation", "positive_violation", "affine_shift", "average_utility"}


def test_five_papers_with_numbers_as_aliases():
    assert len(PAPERS) == 5
    names = paper_names()
    assert {names[n] for n in ("000", "001", "002", "003", "004")} == set(PAPERS)


@pytest.mark.parametrize("name", PAPERS)
def test_claims_parse_and_reference_shipped_specs_and_metrics(name):
    from ckb.experiments.spec import load_spec

    paper = load_paper(name)  # checks specs and algorithm labels
    assert paper.claims and paper.citation.count(".") >= 2
    for c in paper.claims:
        kind = load_spec(c.experiment).kind
        allowed = SINGLE_AGENT_METRICS if kind == "single-agent" else MULTI_AGENT_METRICS
        assert c.metric in allowed, (c.id, c.metric)


def test_unknown_paper_and_bad_claims_are_named():
    with pytest.raises(UnknownNameError, match="zhou-ji-2022"):
        load_paper("zhou-ji-2021")
    base = {"id": "a", "where": "Fig. 1", "statement": "s", "experiment": "e", "metric": "regret"}
    with pytest.raises(SpecError, match="kind 'rank' is not one of"):
        _claim({**base, "kind": "rank", "algorithm": "x"}, "")
    with pytest.raises(SpecError, match="needs a numeric paper_value"):
        _claim({**base, "kind": "value", "algorithm": "x"}, "")
    with pytest.raises(SpecError, match="at least two labels"):
        _claim({**base, "kind": "ordering", "order": ["x"]}, "")
    with pytest.raises(SpecError, match="Did you mean 'tolerance'"):
        _claim({**base, "kind": "value", "algorithm": "x", "paper_value": 1, "tolerence": 1}, "")
    with pytest.raises(SpecError, match="or_similar must be true or false, on an ordering or lowest claim"):
        _claim({**base, "kind": "value", "algorithm": "x", "paper_value": 1, "or_similar": True}, "")
    with pytest.raises(SpecError, match="got 'yes' on kind 'lowest'"):
        _claim({**base, "kind": "lowest", "order": ["x", "y"], "or_similar": "yes"}, "")
    assert _claim({**base, "kind": "lowest", "order": ["x", "y"], "or_similar": True}, "").or_similar


def test_the_list_names_papers_by_short_name_and_citation_not_by_the_project_file_numbers():
    from typer.testing import CliRunner

    from ckb.cli import app
    from ckb.reproduce.claims import claim_files, load_paper

    res = CliRunner().invoke(app, ["reproduce", "--list"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    for short in claim_files():
        paper = load_paper(short, check_specs=False)
        assert paper.short in res.output
        assert f" {paper.number} " not in res.output
