"""Layers (README "Design"): a policy never sees ground truth, and the contract it sees sits low.

Uses the import scan of :mod:`tests.test_import_cycles` (imports anywhere in a module, relative ones and
module-path strings included), per module rather than per subpackage, so the error names the module.
"""

from __future__ import annotations

import pytest

from tests.test_import_cycles import SRC, _module_name, _targets

#: the decision side: what these import may not reach the truth or the harness above them
DECISION_SIDE = ("policies", "rules", "exploration", "surrogates", "kernels", "contract")
#: where ground truth, environments and experiments live
TRUTH_AND_HARNESS = ("ckb.problems", "ckb.runner", "ckb.experiments", "ckb.framework", "ckb.cli")
#: all that the policy-facing contract may build on
CONTRACT_MAY_IMPORT = ("ckb.contract", "ckb.errors", "ckb._validation", "ckb.kernels")


def _imports(package: str) -> dict[str, set[str]]:
    """``module -> the ckb modules it names`` for every module of ``ckb.<package>``."""
    out = {}
    for path in sorted((SRC / package).rglob("*.py")):
        name = _module_name(path)
        parent = name if path.name == "__init__.py" else name.rpartition(".")[0]
        out[name] = _targets(path.read_text(), parent)
    return out


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


@pytest.mark.parametrize("package", DECISION_SIDE)
def test_a_policy_never_sees_ground_truth(package):
    bad = {
        module: sorted(t for t in targets if _within(t, TRUTH_AND_HARNESS))
        for module, targets in _imports(package).items()
    }
    bad = {module: targets for module, targets in bad.items() if targets}
    assert bad == {}, f"ckb.{package} reaches ground truth or the harness: {bad}"


def test_the_contract_is_a_low_layer():
    bad = {
        module: sorted(t for t in targets if not _within(t, CONTRACT_MAY_IMPORT))
        for module, targets in _imports("contract").items()
    }
    assert {m: t for m, t in bad.items() if t} == {}
    assert _imports("policies")  # the scan sees the package


def test_the_check_sees_a_forbidden_import():
    source = "from ckb.problems.problem import Problem\nimport ckb.runner\n"
    targets = _targets(source, "ckb.policies")
    assert {t for t in targets if _within(t, TRUTH_AND_HARNESS)} == {"ckb.problems.problem", "ckb.runner"}
    assert not _within("ckb.problemsx", ("ckb.problems",))


#: the longest function (``def`` line to last line, docstring included) a module of ``src/`` may hold
MAX_FUNCTION_LINES = 80


def _long_functions(source: str, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    import ast

    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_no_function_is_longer_than_80_lines():
    long = {
        _module_name(path): found
        for path in sorted(SRC.rglob("*.py"))
        if (found := _long_functions(path.read_text()))
    }
    assert long == {}, f"split these functions (at most {MAX_FUNCTION_LINES} lines each): {long}"


def test_the_length_check_sees_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(80))
    assert _long_functions(f"def f():\n{body}") == [("f", 81)]
    assert _long_functions(f"class A:\n    def g(self):\n    {body.replace(chr(10), chr(10) + '    ')}") != []
    assert _long_functions("def f():\n    return 1\n") == []
