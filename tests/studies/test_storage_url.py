"""A storage given as a database URL, Optuna's form (``sqlite:///s.db``): Path() folded it to
'sqlite:/s.db' and the error said "the directory of the study file 'sqlite:/s.db' does not exist"
(multi-process probe). Now one line says ckb takes the file's path, and which."""

import pytest

from ckb.errors import InvalidInputError
from ckb.studies.storage import StudyStorage


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        ("sqlite:///s.db", "pass 's.db'"),
        ("sqlite:////srv/ckb/s.db", "pass '/srv/ckb/s.db'"),
        ("postgresql://user@host/db", "the path of a SQLite study file"),
    ],
)
def test_a_url_is_refused_naming_the_path_to_pass(url, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInputError, match=f"storage '{url}' is a") as info:
        StudyStorage(url)
    assert needle in str(info.value) and "\n" not in str(info.value)
    assert list(tmp_path.iterdir()) == []  # nothing created
