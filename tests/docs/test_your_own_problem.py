"""docs/your-own-problem.md runs as written: its module on PYTHONPATH, its spec, its command."""

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "your-own-problem.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_guide_runs(tmp_path):
    (module,) = blocks("python")
    (spec,) = blocks("toml")
    (command,) = blocks("bash")
    (tmp_path / "my_problems.py").write_text(module)  # beside the spec, as the guide has it
    argv = command.split()
    spec_file = argv[3]  # the file the guide's command runs, named in its spec block's first line
    assert spec.startswith(f"# {spec_file}\n"), spec_file
    # not the README quick start's file: a reader following both in one folder had this run refused
    assert f"> {spec_file}`" not in (DOC.parents[1] / "README.md").read_text()
    (tmp_path / spec_file).write_text(spec)
    assert argv[:2] == ["PYTHONPATH=.", "ckb"]  # the guide's command, its PYTHONPATH prefix included
    argv = argv[1:]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([".", os.environ.get("PYTHONPATH", "")])}
    env.pop("CKB_PLUGINS", None)
    res = subprocess.run(
        [sys.executable, "-c", "from ckb.cli import main; main()", *argv[1:]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    out = tmp_path / "runs" / Path(spec_file).stem  # where the guide says the results go
    assert f"`runs/{out.name}/`" in DOC.read_text()
    assert (out / "summary.json").exists()
    assert len(list((out / "traces" / "igp-ucb").glob("trial-*.npz"))) == 2
    # with two workers the plugin reaches the worker processes, and --plugin works without the spec field
    (tmp_path / "cli.toml").write_text(spec.replace('plugins = ["my_problems"]\n', ""))
    res = subprocess.run(
        [sys.executable, "-c", "from ckb.cli import main; main()", "experiment", "cli.toml", "--plugin",
         "my_problems", "--workers", "2", "--no-plots"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(list((tmp_path / "runs" / "cli" / "traces" / "igp-ucb").glob("trial-*.npz"))) == 2


def test_a_missing_plugin_is_one_clear_line(tmp_path):
    (tmp_path / "my.toml").write_text(
        'name = "x"\nplugins = ["no_such_module"]\n' + blocks("toml")[0].split("\n", 3)[3]
    )
    res = subprocess.run(
        [sys.executable, "-c", "from ckb.cli import main; main()", "experiment", "my.toml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 2
    assert "no_such_module" in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
