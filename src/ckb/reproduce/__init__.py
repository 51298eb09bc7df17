"""Paper reproductions: ``ckb reproduce PAPER`` runs a paper's experiments and writes a claim-by-claim report.

- :mod:`ckb.reproduce.claims`: the claims schema; one TOML file per paper in ``claims/<short-name>.toml``
  (the paper's citation, its experiment specs, and one ``[[claims]]`` table per claim: where it appears,
  what it says, which experiment, algorithm(s) and metric measure it, the paper's value with a tolerance
  or an ordering, and how the verdict is computed);
- :mod:`ckb.reproduce.verdict`: verdicts computed from the runs' ``summary.json`` (never typed by hand);
- :mod:`ckb.reproduce.runner`: runs every spec of a paper through :func:`ckb.experiments.run_experiment`
  (paper scale, or ``quick``: reduced trials and horizon) and writes the report
  (:mod:`ckb.reproduce.report`).
"""

from ckb.reproduce.claims import PAPERS, Claim, Paper, load_paper, paper_names
from ckb.reproduce.runner import reproduce
from ckb.reproduce.verdict import Verdict, judge

__all__ = ["PAPERS", "Claim", "Paper", "Verdict", "judge", "load_paper", "paper_names", "reproduce"]
