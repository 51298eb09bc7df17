"""A plugin that exits or lacks a dependency is a one-line CKBError that says what happened."""

import sys

import pytest

from ckb.errors import CKBError
from ckb.framework.plugins import load_plugins


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("CKB_PLUGINS", "")
    names = []

    def write(name, source):
        (tmp_path / f"{name}.py").write_text(source)
        names.append(name)
        return name

    yield write
    for name in names:
        sys.modules.pop(name, None)


def test_a_plugin_that_calls_sys_exit_is_an_error_not_an_exit(plugin):
    name = plugin("ckbtest_exitplug", "import sys\nsys.exit(3)\n")
    with pytest.raises(CKBError, match=r"plugin 'ckbtest_exitplug' called sys.exit\(3\)"):
        load_plugins([name])


def test_a_missing_dependency_is_not_reported_as_a_missing_plugin(plugin):
    name = plugin("ckbtest_importsmissing", "import ckbtest_definitely_not_a_module\n")
    with pytest.raises(CKBError, match="needs the module 'ckbtest_definitely_not_a_module'") as err:
        load_plugins([name])
    assert "Is it installed" not in str(err.value)
    with pytest.raises(CKBError, match="plugin 'ckbtest_absent_plugin' cannot be imported"):
        load_plugins(["ckbtest_absent_plugin"])


@pytest.mark.parametrize("modules", [None, "my_problems", 3])
def test_plugins_must_be_a_list_of_names(modules):
    with pytest.raises(CKBError, match="list of importable module names"):
        load_plugins(modules)
