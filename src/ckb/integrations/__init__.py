"""ckb in other tools' loops: each integration is one module, imported only when used (its tool is an
optional extra).

- :mod:`ckb.integrations.optuna`: :class:`~ckb.integrations.optuna.CKBSampler`, ckb's optimizer policies
  as an Optuna sampler (``pip install -e '.[optuna]'``; ``python -m ckb.integrations.optuna --demo``).
"""
