"""Studies for real use: persistent ask/tell records.

- ``storage.py``: the SQLite study file (:class:`StudyStorage`): schema, one transaction per operation,
  read-only opens, refusal of files ckb does not own (:class:`StudyFileError`);
- ``turns.py``: fair turns (first come, first served) for the processes sharing a study
  (:class:`StudyBusyError` when the queue does not move).
"""

from ckb.studies.storage import StudyFileError, StudyNotFoundError, StudyStorage, dumps, loads
from ckb.studies.turns import StudyBusyError

__all__ = ["StudyBusyError", "StudyFileError", "StudyNotFoundError", "StudyStorage", "dumps", "loads"]
