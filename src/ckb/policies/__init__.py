"""Policies: a decision rule and its explicit state (ask / tell)."""

from ckb.policies.base import Policy
from ckb.policies.registry import POLICIES
from ckb.registry import import_submodules

# Every module in this package registers its policies on import.
import_submodules("ckb.policies", skip=("base", "registry"))

__all__ = ["POLICIES", "Policy", "init_parameters", "make_policy"]


def init_parameters(cls) -> list[str]:
    """Keyword parameters a policy class accepts, following ``**kwargs`` up to the base classes."""
    import inspect

    names: list[str] = []
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        params = inspect.signature(vars(klass)["__init__"]).parameters
        names += [
            n
            for n, p in params.items()
            if n not in ("self", "info", "rng", *names) and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            break
    rule = getattr(cls, "rule_class", None)  # an adapter's remaining keywords are its rule's constants
    if rule is not None:
        names += [n for n in rule.constants if n not in names]
    return names


def make_policy(name: str, info, rng, horizon: int | None = None, **params) -> Policy:
    """Build a registered policy; unknown parameters get an error naming the closest valid ones.

    ``horizon`` (the run's T) is passed to policies whose constructor takes a ``horizon`` parameter
    (e.g. CKB's V = G sqrt(T) / rho) unless the parameters set it explicitly.
    """
    from ckb._validation import did_you_mean
    from ckb.errors import InvalidInputError

    cls = POLICIES.get(name)
    valid = init_parameters(cls)
    for key in params:
        if key not in valid:
            raise InvalidInputError(f"policy {name!r} has no parameter {key!r}.{did_you_mean(key, valid)}")
    if horizon is not None and "horizon" in valid:
        params.setdefault("horizon", horizon)
    return cls(info, rng, **params)
