"""Assertions the fault tests share."""

from __future__ import annotations

import pytest


def one_line(excinfo: pytest.ExceptionInfo) -> str:
    """The message of a raised error, asserted to be one line (the project's standard for bad input)."""
    text = str(excinfo.value)
    assert "\n" not in text, text
    return text
