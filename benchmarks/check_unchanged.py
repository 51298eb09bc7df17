"""Record every shipped experiment's numbers at a reduced scale, and compare two recordings.

A refactor that must not change results is checked by recording before and after it:

    python benchmarks/check_unchanged.py record before.json      # on the old commit
    python benchmarks/check_unchanged.py record after.json       # on the new one
    python benchmarks/check_unchanged.py compare before.json after.json

``record`` runs each spec of ``ckb list`` with 2 trials and a short horizon (serially, no plots) in a
temporary folder and keeps every number of each summary (the benchmark spec: 1 seed of three methods on
two problems, horizon 14). ``compare`` prints the experiments whose numbers differ (bit for bit) and
exits 1 if any does. Run by hand (a few minutes); not part of the test suite. A bad argument (an unknown
command, a recording that does not exist or is not one, a ``record`` path that exists or whose folder does
not) is one line ``error: ...`` on stderr with exit code 2, before anything runs.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from ckb.cli import app
from ckb.framework.pipeline import SPEC_RECORD

#: (horizon, trials) per experiment kind at the reduced scale
_SMALL = {"default": ("60", "2"), "benchmark": ("14", "1")}


def _numbers(obj, prefix=""):
    """Every number in a JSON summary, by its path (timings dropped: they differ run to run)."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            # "seconds", not "second": a log-log slope "over the second half" is a result
            if "seconds" in k or k in ("time", "wall", "cpu", "elapsed"):
                continue
            out.update(_numbers(v, f"{prefix}{k}."))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_numbers(v, f"{prefix}{i}."))
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        out[prefix.rstrip(".")] = obj
    return out


def _reduced_benchmark(src: Path, dst: Path) -> None:
    """The benchmark spec with two problems and three methods (ckb-ucb, config, cei)."""
    import re

    text = src.read_text().split("[algorithms.")[0]
    text, n = re.subn(r"(?ms)^problems = \[.*?\]", 'problems = ["gardner-1", "gramacy"]', text, count=1)
    if n != 1:
        raise SystemExit(f"no problems list found in {src}")
    dst.write_text(text + "".join(f"[algorithms.{m}]\n" for m in ("ckb-ucb", "config", "cei")))


def record(path: str) -> None:
    import tomllib

    from ckb.experiments import shipped

    result = {}
    for name, spec_path in sorted(shipped().items()):
        raw = tomllib.loads(spec_path.read_text())
        kind = raw.get("kind", "default")
        horizon, trials = _SMALL.get(kind, _SMALL["default"])
        labels = raw.get("algorithms", {}).values()
        # a spec whose every label sets its own horizon refuses --horizon (it would reach none)
        own = bool(labels) and all(isinstance(b, dict) and "horizon" in b for b in labels)
        with tempfile.TemporaryDirectory() as tmp:
            target = name
            if kind == "benchmark":
                target = str(Path(tmp) / f"{name}.toml")
                _reduced_benchmark(spec_path, Path(target))
            out = Path(tmp) / "out"
            args = ["experiment", target, "--trials", trials, "--out", str(out)]
            args += [] if own else ["--horizon", horizon]
            args += ["--executor", "serial", "--no-plots"]
            t0 = time.perf_counter()
            try:
                app(args, standalone_mode=False)
            except SystemExit as exc:  # reported, not raised
                result[name] = {"error": f"exit {exc.code}"}
                print(f"{name}: ERROR exit {exc.code}", flush=True)
                continue
            except Exception as exc:
                result[name] = {"error": repr(exc)}
                print(f"{name}: ERROR {exc!r}", flush=True)
                continue
            nums = {}
            for f in sorted(out.rglob("*.json")):
                if f.name == SPEC_RECORD:  # the spec the results come from: inputs, not results
                    continue
                try:
                    nums.update(_numbers(json.loads(f.read_text()), f"{f.relative_to(out)}:"))
                except ValueError:
                    pass
            result[name] = nums
            print(f"{name}: {len(nums)} numbers in {time.perf_counter() - t0:.1f} s", flush=True)
    Path(path).write_text(json.dumps(result, indent=1, sort_keys=True))


USAGE = "check_unchanged.py record OUT.json | check_unchanged.py compare A.json B.json"


class ArgumentError(Exception):
    """A bad command line: reported as one ``error:`` line, exit code 2."""


def check_record_path(path: str) -> None:
    """``record``'s output must be a new file in an existing folder: checked before minutes of runs, and an
    earlier recording (the 'before' of a comparison) is never overwritten."""
    p = Path(path)
    if p.exists() or p.is_symlink():
        raise ArgumentError(
            f"{path} already exists; record to a new file (nothing was run, the file is unchanged)."
        )
    if not p.parent.is_dir():
        raise ArgumentError(f"the folder of {path}, {p.parent}, is not an existing directory.")


def load_recording(path: str) -> dict:
    """A recording written by ``record``: a JSON object of experiment name -> object of numbers."""
    p = Path(path)
    if not p.exists():
        raise ArgumentError(f"recording {path} does not exist.")
    if not p.is_file():
        raise ArgumentError(f"recording {path} is not a file.")
    try:
        data = json.loads(p.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ArgumentError(f"recording {path} cannot be read ({exc}).") from None
    except ValueError as exc:
        raise ArgumentError(f"recording {path} is not JSON ({exc}).") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ArgumentError(
            f"{path} is not a recording of check_unchanged.py record (a JSON object of experiment name to "
            "numbers)."
        )
    return data


def compare(a: str, b: str) -> int:
    A, B = load_recording(a), load_recording(b)
    bad = 0
    for name in sorted(set(A) | set(B)):
        x, y = A.get(name), B.get(name)
        if x == y and not (x or {}).get("error") and x:
            print(f"same      {name} ({len(x or {})} numbers)")
            continue
        if x == y:  # an error, or no numbers, in both: nothing was compared
            bad += 1
            print(f"UNCHECKED {name}: {x.get('error') if x else 'no numbers'} in both recordings")
            continue
        bad += 1
        if x is None or y is None:
            print(f"MISSING   {name} in {'the first' if x is None else 'the second'} recording")
            continue
        diff = [k for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k)]
        print(f"DIFFERENT {name}: {len(diff)} of {len(set(x) | set(y))} numbers, e.g.")
        for k in diff[:5]:
            print(f"    {k}: {x.get(k)} -> {y.get(k)}")
    print(f"{bad} experiment(s) differ")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    try:
        if len(argv) == 2 and argv[0] == "record":
            check_record_path(argv[1])
            record(argv[1])
            return 0
        if len(argv) == 3 and argv[0] == "compare":
            return compare(argv[1], argv[2])
        if not argv:
            raise ArgumentError(f"no command; usage: {USAGE}")
        if argv[0] in ("record", "compare"):
            raise ArgumentError(
                f"{argv[0]} takes {1 if argv[0] == 'record' else 2} path(s), got {len(argv) - 1}; usage: {USAGE}"
            )
        raise ArgumentError(f"unknown command {argv[0]!r}; usage: {USAGE}")
    except ArgumentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
