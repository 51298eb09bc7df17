"""Kernels: squared exponential, Matérn (nu = 1.5, 2.5), and explicit matrices over finite arm sets."""

from ckb.kernels.base import Kernel
from ckb.kernels.precomputed import PrecomputedKernel
from ckb.kernels.stationary import Matern, SquaredExponential

__all__ = ["Kernel", "Matern", "PrecomputedKernel", "SquaredExponential", "make_kernel"]


def make_kernel(spec: dict | Kernel) -> Kernel:
    """Build a stationary kernel from a spec dict like ``{"type": "se", "lengthscale": 0.2}`` (a
    :class:`Kernel` is returned as it is); anything else, or a parameter the kernel does not have, is a
    one-line :class:`~ckb.errors.SpecError`."""
    from collections.abc import Mapping

    from ckb._validation import did_you_mean, short_repr
    from ckb.errors import SpecError

    if isinstance(spec, Kernel):
        return spec
    if not isinstance(spec, Mapping):
        raise SpecError(
            f'kernel must be a table such as {{type = "se", lengthscale = 0.2}} or a ckb.kernels.Kernel, '
            f"got {short_repr(spec, 60)} ({type(spec).__name__})."
        )
    spec = dict(spec)
    kind = spec.pop("type", None)
    kinds = {"se": SquaredExponential, "rbf": SquaredExponential, "matern": Matern}
    if kind not in kinds:
        raise SpecError(
            f"kernel.type must be one of {sorted(kinds)}, got {kind!r}.{did_you_mean(str(kind), kinds)}"
        )
    params = _PARAMS[kinds[kind]]
    for key in spec:
        if key not in params:
            raise SpecError(
                f"bad kernel parameters {spec}: kernel {kind!r} has no parameter {key!r}."
                f"{did_you_mean(str(key), params)}"
            )
    try:
        return kinds[kind](**spec)
    except TypeError as exc:
        raise SpecError(f"bad kernel parameters {spec}: {exc}") from exc


#: the parameters each kernel class of :func:`make_kernel` takes (for its did-you-mean hints)
_PARAMS = {SquaredExponential: ("lengthscale", "variance"), Matern: ("lengthscale", "variance", "nu")}
