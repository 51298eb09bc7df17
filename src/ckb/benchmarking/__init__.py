"""Benchmarks of the practical optimizer against the field (run by hand; ``benchmarks/`` drives them).

:mod:`ckb.benchmarking.constrained`: ``ckb.Optimizer``'s policies vs BoTorch's constrained qLogNEI vs
Sobol random search on standard constrained test problems; :mod:`ckb.benchmarking.baselines`:
the two baselines with the optimizer's ask/tell interface.
"""
