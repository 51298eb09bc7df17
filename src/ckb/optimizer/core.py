r"""``ckb.Optimizer``: ask/tell constrained Bayesian optimization over a box, persisted in a study file.

::

    opt = ckb.Optimizer(lower, upper, m=1, policy="ckb-ucb", budget=60, storage="study.db", study_name="pump")
    x = opt.ask()                       # (d,) in original units
    opt.tell(x, objective, [g1])        # feasible where g <= 0
    opt.tell(x2, failed=True, note="simulator crashed")
    opt.best_feasible(); opt.metrics(); opt.history()

**Steps.** The first ``n_init`` (default ``2d + 2``) asks are the scrambled Sobol design
(:func:`ckb.optimizer.initial_design`, the same for every policy and seed); later asks come from the policy
(:mod:`ckb.optimizer.policies`), as do further Sobol points while no evaluation has completed. An ask
(a) reads the complete observations, (b) converts them to policy units (objective in the maximization
sense and standardized; each constraint divided by the root mean square of its observed values, so 0
stays the threshold), (c) fits the GPs (:mod:`ckb.optimizer.models`; hyperparameters refitted when
``refit_every`` new results arrived since the last fit, or when the policy's targets changed meaning,
else reused), (d) conditions them on every pending and failed point (posterior-mean fantasies: the next
points move away from those; a failed point carries no value), (e) lets the policy decide (multi-start
gradient ascent of its score over the unit cube, or enumeration of ``candidates``) and make its ask-time
updates. ``ask(k)`` repeats (d)-(e) k times, each pick conditioning the next, so the k points differ. A
tell records the result and, for a point the policy chose, makes the policy's tell-time updates.

**Structure.** The optimizer decides; its :class:`~ckb.optimizer.study.Study` keeps the record (as Optuna
separates sampler, study and storage). The study owns the trials, the pending asks, the budget, the
reports (``history``, ``pending``, ``best_feasible``, ``metrics``) and the transactions; the optimizer
owns the units of the outcomes, the models, the maximizer and the policy. An ask or a tell is one
:meth:`Study.transact <ckb.optimizer.study.Study.transact>`: the study hands over a snapshot (the trials
and the state after the last step: policy state, numpy generator, GP hyperparameters), the optimizer
restores the policy from it, decides, and records its asks or tells and the new state on the snapshot,
which the study writes in one transaction. The optimizer therefore keeps nothing between calls that the
file does not hold, and several processes can work on one study.

**Storage.** Every ask, tell and failure, and the state after each step, is a row of a SQLite study
file (:mod:`ckb.studies.storage`; no pickle). Processes sharing a study take turns first come, first
served (:mod:`ckb.studies.turns`), and each step's writes are one transaction, so a process killed at
any moment leaves the file at its last completed step (every told result and recorded ask intact):
constructing an ``Optimizer`` on an existing study resumes it (the options must match the stored ones).
Without ``storage`` the study lives in memory. The budget is checked where an ask is written: once
``budget`` trials are asked or told, :meth:`Optimizer.ask` raises :class:`BudgetExhaustedError`, so
workers sharing a study stop at exactly ``budget`` trials::

    while True:
        try:
            x = opt.ask()
        except ckb.BudgetExhaustedError:
            break
        opt.tell(x, *evaluate(x))

**Choices the continuous, fitted setting forces** (the papers assume a known kernel, known bounds
and a finite or exactly maximized domain):

- *units*: every constant of a policy is on standardized outcomes: the objective standardized by the
  mean and standard deviation of the complete observations, each constraint divided by the root mean
  square of its observed values (not shifted: the threshold 0 must stay 0; the RMS, unlike the standard
  deviation, keeps values O(1) when a constraint is far from 0 everywhere, so the clip G does not
  flatten it). The scales move as data arrive; tell-time updates (RPOL's Q, the penalty's epoch sums)
  use the scales at the time of the tell;
- *the policy's clock* starts after the initial design: the design's results feed the models but not
  the duals, Q or epochs (the design is not the policy's decision), and the horizon is
  ``budget - n_init``; points told without an ask (source ``user``) likewise;
- *pending and failed points* condition the posterior variance with posterior-mean fantasies; a failed
  point carries no value, but the next asks move away from it instead of repeating it;
- *batch separation*: fantasies alone (GP-BUCB's hallucination) let a batch collapse once the posterior
  width near the optimum is small next to the slope of the mean: on Gardner 1 after 20 evaluations,
  CKB-UCB's ``ask(4)`` returned four points within 1e-3 of each other (unit-cube max-norm) in two of four
  seeds, at a boundary optimum. So a new point also keeps ``batch_separation`` (default 0.1) lengthscales
  from every pending point (correlation <= 0.995 under the RBF kernel); 0 restores fantasies alone.
- *maximization*: multi-start L-BFGS-B (``optimize_acqf``) replaces the exact argmax; random tie-breaking
  happens only on a candidate set (on the box the restarts pick among tied points);
- *Thompson sampling* on a box draws sample paths by random Fourier features with a Matheron update
  (BoTorch's pathwise sampling), an approximation of the exact joint sample the papers use on a finite set.

**Randomness.** The policy's numpy generator (TS draws, RandGP's Z, restart seeds, tie-breaking) is
stored with the state; torch's generator is seeded from it at every decision, so the same calls give the
same points. Torch runs in double precision with ``torch_threads`` threads (default 1: the models are
small, and several workers may share the machine).
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ckb._validation import check_scalar, did_you_mean
from ckb.errors import CKBError, InvalidInputError
from ckb.optimizer.space import Space, initial_design, nearest_unused
from ckb.optimizer.study import BudgetExhaustedError, Metrics, Step, Study, complete_arrays
from ckb.studies.storage import StudyFileError, StudyStorage, dumps, loads

__all__ = ["BotorchNotInstalledError", "BudgetExhaustedError", "Optimizer", "policy_units"]

#: options that define a study; resuming with different values is an error
_IDENTITY = (
    "lower",
    "upper",
    "m",
    "policy",
    "budget",
    "minimize",
    "n_init",
    "seed",
    "candidates",
    "policy_params",
)
#: run-time settings: stored with the study, but Optimizer.load may override them
_RUNTIME = ("refit_every", "num_restarts", "raw_samples", "maxiter", "batch_separation", "torch_threads")
#: relative (to the box width) distance within which a told point is the pending point it answers
_MATCH_TOL = 1e-9


def _policy_registry():
    from ckb.optimizer.policies import OPTIMIZER_POLICIES

    return OPTIMIZER_POLICIES


class BotorchNotInstalledError(CKBError, ImportError):
    """``ckb.Optimizer`` needs torch and BoTorch (the ``botorch`` extra), which are not installed."""


def _require_botorch() -> None:
    import importlib.util

    missing = [name for name in ("torch", "botorch", "gpytorch") if importlib.util.find_spec(name) is None]
    if missing:
        raise BotorchNotInstalledError(
            f"ckb.Optimizer fits its GPs with BoTorch, but {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed. Install the extra: "
            "pip install 'ckb[botorch]' (without a GPU, install the CPU build of torch first, e.g. "
            "pip install torch --index-url https://download.pytorch.org/whl/cpu)."
        )


def policy_units(y: np.ndarray, c: np.ndarray, minimize: bool, m: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Outcomes in the policies' units: the objective in the maximization sense, standardized by the mean
    and (ddof=1) standard deviation of the observations (sd 1 for fewer than two observations or a
    constant objective); each constraint divided by the root mean square of its observed values (not
    shifted, so 0 stays the threshold; 1 for a constraint observed only at 0). Returns ``(y_p, c_p,
    scales)`` with ``scales = {"y_mean", "y_sd", "c_rms"}``."""
    u = -y if minimize else y
    mean = float(u.mean()) if u.size else 0.0
    sd = float(u.std(ddof=1)) if u.size > 1 else 1.0
    sd = sd if sd > 1e-12 * max(1.0, abs(mean)) else 1.0
    rms = np.sqrt(np.mean(c**2, axis=0)) if len(c) else np.ones(m)
    rms = np.where(rms > 0, rms, 1.0)
    return (u - mean) / sd, c / rms, {"y_mean": mean, "y_sd": sd, "c_rms": rms}


class Optimizer:
    """Constrained Bayesian optimization by ask/tell (see the module docstring).

    Parameters
    ----------
    lower, upper : the box (d,); ``upper > lower``.
    m : number of constraints (>= 1), feasible where ``g_j(x) <= 0``.
    policy : ``ckb-ucb`` (default), ``ckb-ts``, ``ckb-rand``, ``rpol-ucb``, ``config``, ``penalty-noisy``,
        ``cei``; its constants as extra keywords (``beta=``, ``B=``, ``delta=``, ...; see each policy).
    budget : the number of evaluations T (trials asked or told; sets the policies' horizon
        ``budget - n_init``). Once it is used, :meth:`ask` raises :class:`BudgetExhaustedError`.
    minimize : minimize the objective instead of maximizing it.
    n_init : size of the initial Sobol design (default ``2d + 2``).
    seed : seeds the design and the policy's generator.
    storage : a SQLite file path or a :class:`~ckb.studies.StudyStorage` (None: in memory). A new path
        is created; an existing file must be a ckb study file (any other file is refused, unchanged).
    study_name : the study in that file (default ``"study"``); an existing study is resumed.
    candidates : optional (n, d) points in the box: the optimizer then only proposes candidates.
    refit_every : refit the GP hyperparameters after this many new results (1: at every ask).
    num_restarts, raw_samples, maxiter : the acquisition maximizer (``optimize_acqf``) settings.
    batch_separation : while points are pending (``ask(k)``, or other workers' asks), a new point keeps
        at least this many lengthscales (scaled Euclidean distance, each dimension by the smallest
        fitted lengthscale of the models) from every pending point; 0: only exact repeats are avoided.
    torch_threads : torch's intra-op threads during asks.
    """

    def __init__(
        self,
        lower: Any,
        upper: Any,
        m: int = 1,
        *,
        policy: str = "ckb-ucb",
        budget: int = 60,
        minimize: bool = False,
        n_init: int | None = None,
        seed: int = 0,
        storage: str | Path | StudyStorage | None = None,
        study_name: str | None = None,
        candidates: Any = None,
        refit_every: int = 1,
        num_restarts: int = 10,
        raw_samples: int = 256,
        maxiter: int = 100,
        batch_separation: float = 0.1,
        torch_threads: int = 1,
        **policy_params: Any,
    ) -> None:
        _require_botorch()
        self.space = Space(lower, upper, candidates)
        self.m = check_scalar(m, "m (number of constraints)", low=1, integer=True)
        self.budget = check_scalar(budget, "budget", low=1, integer=True)
        if not isinstance(minimize, (bool, np.bool_)):
            raise InvalidInputError(f"minimize must be True or False, got {minimize!r}.")
        self.minimize = bool(minimize)
        self.n_init = check_scalar(
            2 * self.space.d + 2 if n_init is None else n_init, "n_init", low=0, integer=True
        )
        self.seed = check_scalar(seed, "seed", low=0, integer=True)
        self.refit_every = check_scalar(refit_every, "refit_every", low=1, integer=True)
        self.num_restarts = check_scalar(num_restarts, "num_restarts", low=1, integer=True)
        self.raw_samples = check_scalar(raw_samples, "raw_samples", low=1, integer=True)
        self.maxiter = check_scalar(maxiter, "maxiter", low=1, integer=True)
        self.batch_separation = check_scalar(batch_separation, "batch_separation", low=0.0)
        self.torch_threads = check_scalar(torch_threads, "torch_threads", low=1, integer=True)
        self._set_policy(policy, policy_params)
        self.study_name = "study" if study_name is None else study_name
        if not isinstance(self.study_name, str) or not self.study_name:
            raise InvalidInputError(f"study_name must be a non-empty string, got {study_name!r}.")
        self.study = Study.open(storage, self.study_name, self._spec(), self._initial_state, _IDENTITY)
        try:
            self._load_latest()
        except BaseException:
            self.study.close()
            raise

    # ----------------------------------------------------------------------------- construction
    def _set_policy(self, policy: str, policy_params: dict[str, Any]) -> None:
        """Resolve the policy's name and check its constants (by building it) before anything is stored."""
        reg = _policy_registry()
        self.policy_name = reg.canonical(policy)  # UnknownNameError with a did-you-mean
        self._policy_cls = reg.get(self.policy_name)
        try:
            self.policy_params = loads(dumps(policy_params))
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(
                f"policy parameters must be numbers, strings, lists or dicts: {exc}"
            ) from None
        self.horizon = max(1, self.budget - self.n_init)
        try:
            self.policy = self._make_policy()  # the policy checks its constants now
        except TypeError as exc:  # a keyword its constructor does not take
            _unknown_keyword(exc, self._policy_cls, policy_params, self.policy_name)
            raise

    @classmethod
    def load(cls, storage: str | Path | StudyStorage, study_name: str, **options: Any) -> Optimizer:
        """Resume a stored study with its stored options (``options``: run-time settings such as
        ``refit_every``, ``num_restarts``, ``raw_samples``, ``maxiter``, ``batch_separation``,
        ``torch_threads``). A missing file is an error (nothing is created)."""
        bad = set(options) - set(_RUNTIME)
        if bad:
            raise InvalidInputError(
                f"Optimizer.load takes run-time settings only, got {sorted(bad)}; the study's options are stored."
            )
        store, own = Study.storage(storage, create=False)
        try:
            spec = store.spec(study_name)  # StudyNotFoundError with a did-you-mean
            if spec.get("kind") != "ckb.Optimizer":
                raise InvalidInputError(
                    f"study {study_name!r} in {store.path} was not written by ckb.Optimizer."
                )
            args, kwargs = _stored_options(spec, study_name, store.path)
            opt = cls(*args, storage=store, study_name=study_name, **{**kwargs, **options})
        except BaseException:
            if own:
                store.close()
            raise
        opt.study.own_store = own
        return opt

    def _make_policy(self):
        return self._policy_cls(self.m, self.horizon, **self.policy_params)

    def _spec(self) -> dict[str, Any]:
        return {
            "kind": "ckb.Optimizer",
            "version": 1,
            **self.space.to_dict(),
            "m": self.m,
            "policy": self.policy_name,
            "budget": self.budget,
            "minimize": self.minimize,
            "n_init": self.n_init,
            "seed": self.seed,
            "policy_params": self.policy_params,
            "options": {key: getattr(self, key) for key in _RUNTIME},
        }

    def _initial_state(self) -> dict[str, Any]:
        return {
            "policy": self.policy.state_dict(),
            "rng": np.random.default_rng(self.seed).bit_generator.state,
            "models": None,
        }

    @property
    def store(self) -> StudyStorage:
        """The study file (:class:`~ckb.studies.StudyStorage`)."""
        return self.study.store

    def close(self) -> None:
        self.study.close()

    def __enter__(self) -> Optimizer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------------------------ state
    def _load_latest(self) -> int:
        step, state = self.study.latest_state()
        self._restore(state)
        return step

    def _restore(self, state: dict[str, Any]) -> None:
        """The policy, the generator and the model state as stored after a step."""
        try:
            self.policy = self._make_policy()
            self.policy.load_state_dict(state["policy"])
            self.rng = np.random.default_rng()
            self.rng.bit_generator.state = state["rng"]
            self._models_state = state.get("models")
        except (KeyError, TypeError) as exc:
            raise StudyFileError(
                f"study {self.study_name!r} in {self.store.path} holds a damaged optimizer state "
                f"({type(exc).__name__}: {exc})."
            ) from exc

    def _state(self) -> dict[str, Any]:
        return {
            "policy": self.policy.state_dict(),
            "rng": self.rng.bit_generator.state,
            "models": self._models_state,
        }

    def _transact(self, decide):
        """One step: the study's snapshot restores the policy, ``decide(step)`` records on it, and the
        state after it is written with what it recorded (:meth:`Study.transact`)."""

        def run(step: Step):
            with _torch_threads(self.torch_threads):
                self._restore(step.state)
                result = decide(step)
            step.new_state = self._state()
            return result

        return self.study.transact(run)

    # -------------------------------------------------------------------------------------- ask
    def ask(self, k: int | None = None) -> np.ndarray:
        """The next point ``(d,)``, or ``k`` distinct points ``(k, d)`` to evaluate in parallel.

        Raises :class:`BudgetExhaustedError` when the budget is used (``metrics()["remaining"] == 0``);
        ``ask(k)`` with fewer than ``k`` trials left returns the ``remaining`` points that are left.
        """
        n = 1 if k is None else check_scalar(k, "k (number of points)", low=1, integer=True)
        points = self._transact(lambda step: self._ask_step(step, n))
        return points[0] if k is None else np.stack(points)

    def _ask_step(self, step: Step, n: int) -> list[np.ndarray]:
        import torch

        step.check_budget()
        points = []
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(self.rng.integers(2**63 - 1)))  # fits, sample paths: reproducible
            ctx = None
            for _ in range(min(n, step.remaining)):
                start = time.perf_counter()
                x, info, ctx = self._next(step.trials, ctx)
                # seconds of this point's decision (a batch's model fit is counted in its first point)
                info["seconds"] = time.perf_counter() - start
                step.ask(x, info)
                points.append(x)
        return points

    def _next(self, trials: list[dict], ctx):
        n_design = sum(1 for t in trials if (t.get("info") or {}).get("source") == "init")
        n_complete = sum(1 for t in trials if t["state"] == "complete")
        if n_design < self.n_init or n_complete == 0:
            return self._design_point(trials, n_design), {"source": "init", "design_index": n_design}, ctx
        if ctx is None:
            ctx = self._context(trials)
        busy = [self.space.to_unit(t["x"]) for t in trials if t["state"] in ("pending", "failed")]
        models = ctx["models"].condition(np.array(busy)) if busy else ctx["models"]
        pending = np.array([self.space.to_unit(t["x"]) for t in trials if t["state"] == "pending"]).reshape(
            -1, self.space.d
        )
        from ckb.optimizer.acquisition import Maximizer
        from ckb.optimizer.policies import Decision

        C = None if self.space.candidates is None else self.space.to_unit(self.space.candidates)
        maxi = Maximizer(
            self.space.d,
            self.rng,
            candidates=C,
            num_restarts=self.num_restarts,
            raw_samples=self.raw_samples,
            maxiter=self.maxiter,
        )
        sep = None
        if self.batch_separation > 0 and len(pending):
            sep = self.batch_separation * ctx["models"].lengthscales().min(axis=0)
        u, internals = self.policy.decide(
            Decision(
                models, lambda fn: maxi(fn, exclude=pending, separation=sep), self.rng, ctx["y"], ctx["c"]
            )
        )
        x = self.space.from_unit(u)
        if self.space.candidates is not None:  # exactly the candidate (no round-off from unit scaling)
            x = self.space.candidates[int(np.argmin(np.sum((C - u) ** 2, axis=1)))].copy()
        info = {"source": "policy", "round": self.policy.t, **{k: float(v) for k, v in internals.items()}}
        if not ctx["fit_ok"]:
            info["fit_failed"] = 1.0
        return x, info, ctx

    def _design_point(self, trials: list[dict], index: int) -> np.ndarray:
        if self.space.candidates is None:
            return initial_design(self.space.lower, self.space.upper, index + 1, self.seed)[index]
        from ckb.optimizer.space import _sobol_unit

        C = self.space.to_unit(self.space.candidates)
        used = [int(np.argmin(np.sum((C - self.space.to_unit(t["x"])) ** 2, axis=1))) for t in trials]
        U = _sobol_unit(self.space.d, index + 1, self.seed)[index : index + 1]
        return self.space.candidates[nearest_unused(C, U, used)[0]].copy()

    def _context(self, trials: list[dict]) -> dict[str, Any]:
        """Data in policy units and the fitted models (hyperparameters per the refit schedule)."""
        from ckb.optimizer.models import Models

        X, y, c = complete_arrays(trials)
        y_p, c_p, _ = policy_units(y, c, self.minimize, self.m)
        targets = self.policy.targets(y_p, c_p)
        names, tag, n = list(targets), self.policy.model_tag(), len(y)
        st = self._models_state
        same = st is not None and st["names"] == names
        refit = not same or st["tag"] != tag or n - int(st["n_fit"]) >= self.refit_every
        models = Models(self.space.to_unit(X), targets, st["hyper"] if same else None, fit=refit)
        if refit:
            self._models_state = {"names": names, "tag": tag, "n_fit": n, "hyper": models.hyper}
        return {"models": models, "y": y_p, "c": c_p, "fit_ok": models.fit_ok}

    # ------------------------------------------------------------------------------------- tell
    def tell(
        self,
        x: Any,
        objective: float | None = None,
        constraints: Any = None,
        *,
        failed: bool = False,
        note: str = "",
    ) -> int:
        """Record the evaluation of ``x`` (a point from :meth:`ask`, or its trial number); returns the trial
        number. A point that was not asked is recorded as a new trial (even past the budget: a result is
        always kept). ``failed=True`` keeps a failed evaluation (no values needed). Values must be finite;
        ``constraints`` has m entries (<= 0: feasible).
        """
        y, c = None, None
        if not failed:
            y, c = self._check_values(objective, constraints)
        return self._transact(lambda step: self._tell_step(step, x, y, c, failed, str(note)))

    def _tell_step(
        self, step: Step, x: Any, y: float | None, c: np.ndarray | None, failed: bool, note: str
    ) -> int:
        number = self._resolve(x, step.trials)
        if number is None:
            number = step.ask(self.space.check_point(x), {"source": "user"}, budgeted=False)
        trial = next(t for t in step.trials if t["number"] == number)
        if trial["state"] != "pending":
            raise InvalidInputError(
                f"trial {number} of study {self.study_name!r} is already {trial['state']}; nothing was changed."
            )
        if failed:
            step.fail(number, note)
            return number
        step.tell(number, y, c)
        if (trial.get("info") or {}).get("source") == "policy":
            _, yy, cc = complete_arrays(step.trials)
            _, _, scales = policy_units(yy, cc, self.minimize, self.m)
            u = -y if self.minimize else y
            self.policy.observe((u - scales["y_mean"]) / scales["y_sd"], c / scales["c_rms"])
        return number

    def _check_values(self, objective: Any, constraints: Any) -> tuple[float, np.ndarray]:
        if objective is None:
            raise InvalidInputError(
                "tell needs the objective value (or failed=True for a failed evaluation)."
            )
        try:
            y = float(objective)
        except (TypeError, ValueError):
            raise InvalidInputError(f"objective must be a real number, got {objective!r}.") from None
        if constraints is None:
            raise InvalidInputError(
                f"tell needs m = {self.m} constraint value(s) (feasible where <= 0), got None."
            )
        try:
            c = np.atleast_1d(np.asarray(constraints, dtype=float)).reshape(-1)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"constraints must be {self.m} real number(s), got {constraints!r}."
            ) from None
        if c.shape != (self.m,):
            raise InvalidInputError(
                f"expected m = {self.m} constraint value(s), got {c.size}: {np.asarray(constraints).tolist()}."
            )
        if not math.isfinite(y):
            raise InvalidInputError(
                f"objective is {y}; values must be finite. Tell a failed evaluation with "
                "tell(x, failed=True, note=...). Nothing was recorded."
            )
        if not np.all(np.isfinite(c)):
            j = int(np.flatnonzero(~np.isfinite(c))[0])
            raise InvalidInputError(
                f"constraint {j} is {c[j]}; values must be finite. Tell a failed evaluation with "
                "tell(x, failed=True, note=...). Nothing was recorded."
            )
        return y, c

    def _resolve(self, x: Any, trials: list[dict]) -> int | None:
        """The trial ``x`` answers: a trial number, or the oldest pending trial at that point; None: new."""
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            if not any(t["number"] == int(x) for t in trials):
                raise InvalidInputError(
                    f"study {self.study_name!r} has no trial number {int(x)} (trials 0..{len(trials) - 1})."
                )
            return int(x)
        x = self.space.check_point(x)
        for t in trials:
            if t["state"] == "pending" and np.max(np.abs(t["x"] - x) / self.space.width) <= _MATCH_TOL:
                return int(t["number"])
        return None

    # ---------------------------------------------------------------------------------- reports
    def history(self) -> list[dict[str, Any]]:
        """Every trial in number order: ``number``, ``state`` (pending/complete/failed), ``x``,
        ``objective``, ``constraints``, ``feasible``, ``note``, ``source`` (init/policy/user), ``info``
        (the policy's internals at the ask), ``asked_at``, ``told_at``."""
        return self.study.history()

    def pending(self) -> list[dict[str, Any]]:
        """The trials asked and not yet told (e.g. by a process that crashed): ``[{"trial", "x"}, ...]``;
        tell them by point or trial number."""
        return self.study.pending()

    def best_feasible(self) -> dict[str, Any] | None:
        """The best complete trial with every constraint <= 0: ``{"x", "objective", "constraints",
        "trial"}``, or None."""
        return self.study.best_feasible()

    def metrics(self) -> Metrics:
        """Running metrics on the observed values (:mod:`ckb.violation`'s vocabulary):

        ``evaluations`` (complete), ``failed``, ``pending``, ``violating_evaluations`` (some constraint
        > 0), ``violation`` (soft: the norm over constraints of the positive part of each constraint's sum)
        and ``violation_per_constraint``, ``positive_violation`` (the norm of each constraint's sum of
        positive parts) and ``positive_violation_per_constraint``, ``best_feasible`` (value or None),
        ``budget``, ``remaining`` (budget minus trials asked or told; :meth:`ask` raises when it is 0),
        ``policy`` and the policy's current state (``policy_state``: duals, Q, kappa, ...).

        Deprecated (reading them warns): ``cumulative_violation``, the sum over evaluations and
        constraints of the positive parts (an L1 norm; use ``positive_violation``), and
        ``cumulative_violation_per_constraint`` (equal to ``positive_violation_per_constraint``).
        """
        met = self.study.metrics()
        self._load_latest()  # a read; WAL gives it a consistent snapshot
        met.update(policy=self.policy_name, policy_state=self.policy.internals())
        return met

    @property
    def trials_told(self) -> int:
        return sum(t["state"] != "pending" for t in self.study.trials())

    def __repr__(self) -> str:
        return (
            f"Optimizer(d={self.space.d}, m={self.m}, policy={self.policy_name!r}, budget={self.budget}, "
            f"study={self.study_name!r} in {self.store.path})"
        )


def _stored_options(spec: dict[str, Any], name: str, path: Path) -> tuple[tuple, dict[str, Any]]:
    """The constructor's arguments stored in an optimizer study's spec."""
    try:
        args = (spec["lower"], spec["upper"], spec["m"])
        kwargs = {key: spec[key] for key in ("policy", "budget", "minimize", "n_init", "seed", "candidates")}
        return args, {**kwargs, **spec.get("options", {}), **spec["policy_params"]}
    except (KeyError, TypeError) as exc:
        raise StudyFileError(
            f"study {name!r} in {path} has a damaged spec (missing {exc}); it cannot be resumed."
        ) from exc


def _unknown_keyword(exc: TypeError, cls: type, params: dict[str, Any], name: str) -> None:
    """Raise "no parameter" with a did-you-mean if ``exc`` is the constructor refusing one of ``params``.

    The policy validates its own keywords when built (before anything is stored); a constructor that
    declares them keyword-only lets Python refuse an unknown one with a TypeError, turned here into a
    clear error listing the keywords the class hierarchy declares.
    """
    import inspect

    key = next((k for k in params if f"argument '{k}'" in str(exc)), None)
    if key is None or "unexpected keyword" not in str(exc):
        return
    valid = set(_RUNTIME)
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            for p in inspect.signature(klass.__init__).parameters.values():
                if p.kind is p.KEYWORD_ONLY:
                    valid.add(p.name)
    raise InvalidInputError(f"policy {name!r} has no parameter {key!r}.{did_you_mean(key, valid)}") from None


@contextmanager
def _torch_threads(n: int):
    import torch

    old = torch.get_num_threads()
    if old != n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if old != n:
            torch.set_num_threads(old)
