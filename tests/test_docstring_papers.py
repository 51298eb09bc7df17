"""What users read through ``help()`` and ``ckb list`` names papers by their authors, never by the numbers
their files carry in the repository (000-004) nor by sections of the internal engineering notes.

Checks every docstring (module, class, function) and every comment of ``src/ckb``; the number-to-name
table itself (:data:`ckb.framework.doctext.PAPERS`) is the one place the numbers may stand.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize

import pytest

from tests.test_import_cycles import SRC

#: a paper's file number standing alone ("004 Sec. 3", "(003)", "002/003"), not part of 0.001 or 1e-004
PAPER_NUMBER = re.compile(r"(?<![\d.eE+-])(?<!\d,)\b00[0-4]\b(?![.,]?\d)")
#: a reference into the internal notes ("digest 001 §2.7", "(digest §5)"); content digests (SHA-256) are fine
NOTES_REFERENCE = re.compile(r"§|\bdigests?\s+(?:00[0-4]|§)")
#: where the table of names lives
TABLE = SRC / "framework" / "doctext.py"


def _texts(path):
    """``(line, text)`` of every docstring and comment of one module."""
    source = path.read_text()
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                yield (node.body[0].lineno, doc)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield (tok.start[0], tok.string)
    # attribute docstrings ("#:" comments are covered above) and string statements after an assignment
    for node in ast.walk(tree):
        for body in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if not isinstance(body, list):
                continue
            for before, stmt in itertools.pairwise(body):
                if (
                    isinstance(before, (ast.Assign, ast.AnnAssign))
                    and isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Constant)
                    and isinstance(stmt.value.value, str)
                ):
                    yield (stmt.lineno, stmt.value.value)


def _offences(path):
    out = []
    for line, text in _texts(path):
        for pattern in (PAPER_NUMBER, NOTES_REFERENCE):
            for m in pattern.finditer(text):
                start = max(0, m.start() - 30)
                out.append(f"{path.relative_to(SRC.parent)}:{line}: ...{text[start : m.end() + 30]!r}...")
    return out


MODULES = sorted(p for p in SRC.rglob("*.py") if p != TABLE)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_docstrings_and_comments_name_papers_by_their_authors(path):
    assert not _offences(path), "\n".join(_offences(path))


@pytest.mark.parametrize(
    ("text", "offends"),
    [
        ("Guo, Zhu & Liu (2023), Sec. 3-4", False),
        ("004 Sec. 3-4", True),
        ("(003)", True),
        ("002/003", True),
        ("a step of 0.001 or 1e-004", False),
        ("T = 10,000 rounds", False),
        ("digest 001 §2.7", True),
        ("content digests of the data files", False),
        ("seeds 000 to 019", True),  # a false alarm the wording avoids, rather than a pattern that misses
    ],
)
def test_the_patterns(text, offends):
    assert bool(PAPER_NUMBER.search(text) or NOTES_REFERENCE.search(text)) is offends
