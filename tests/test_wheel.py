"""The wheel as a user gets it: built from this tree, installed into a fresh virtual
environment (no system site-packages, nothing of this checkout on its path), with its
dependencies resolved by pip from the index pip is configured with (PyPI in CI, the local
mirror here) — so the upper bounds in pyproject.toml are exercised too — and `ontoloom demo`
run from it.

It takes about a minute (a build, a venv, an install), so it is marked ``wheel``: `make test`
deselects it and `make test-wheel` (which .ci/run also calls) runs it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{' '.join(args)}\n{done.stdout}\n{done.stderr}"
    return done


def test_the_wheel_installs_in_a_fresh_venv_and_runs_the_demo(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "ONTOLOOM_HOME")
    }
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(dist), str(ROOT)],
        tmp_path,
        env,
    )
    (wheel,) = dist.glob("ontoloom-*.whl")
    assert wheel.name == f"ontoloom-{VERSION}-py3-none-any.whl"

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    _run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], tmp_path, env)
    _run([str(python), "-m", "pip", "check"], tmp_path, env)

    # The package comes from the venv, not from this checkout.
    where = _run(
        [
            str(python),
            "-c",
            "import ontoloom; print(ontoloom.__file__); print(ontoloom.__version__)",
        ],
        tmp_path,
        env,
    ).stdout.split()
    assert Path(where[0]).resolve().is_relative_to(venv.resolve()), where
    assert where[1] == VERSION
    assert _run([str(python), "-m", "ontoloom", "--version"], tmp_path, env).stdout.strip() == (
        f"ontoloom, version {VERSION}"
    )

    scratch = tmp_path / "scratch"  # the demo's temporary directory goes here, and away
    scratch.mkdir()
    demo = _run([str(bin_dir / "ontoloom"), "demo"], tmp_path, {**env, "TMPDIR": str(scratch)})
    assert "refused:" in demo.stdout and "nothing invalid was stored" in demo.stdout
    assert "objects:   Action" in demo.stdout  # the records step ran on the bundled records
    assert list(scratch.iterdir()) == []
