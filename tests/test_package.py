"""ontoloom as a package: ``python -m ontoloom``, ``__version__``, an import that needs no
POSIX-only module, bounded dependencies, a demo that cleans up after itself, and usage
errors that exit 2. (Building and installing the wheel: tests/test_wheel.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement

import ontoloom
from ontoloom.cli import main

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], input=stdin, capture_output=True, text=True, timeout=120
    )


# -- python -m, version --------------------------------------------------------------------------
def test_version_is_the_package_metadata_and_the_pyproject_version() -> None:
    assert ontoloom.__version__ == version("ontoloom") == PYPROJECT["project"]["version"]
    from ontoloom import __version__

    assert __version__ == ontoloom.__version__


def test_python_dash_m_is_the_ontoloom_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("ontoloom")
    for args in (["--version"], ["--help"], ["get"], ["list", "--no-such-option"]):
        as_module = subprocess.run(
            [sys.executable, "-m", "ontoloom", *args], capture_output=True, text=True, timeout=120
        )
        as_script = subprocess.run(
            [str(script), *args], capture_output=True, text=True, timeout=120
        )
        assert (as_module.returncode, as_module.stdout, as_module.stderr) == (
            as_script.returncode,
            as_script.stdout,
            as_script.stderr,
        ), args
    done = _run("-m", "ontoloom", "--version")
    assert (
        done.returncode == 0 and done.stdout.strip() == f"ontoloom, version {ontoloom.__version__}"
    )
    usage = _run("-m", "ontoloom", "get")
    assert usage.returncode == 2 and "Usage: ontoloom get" in usage.stderr


def test_python_dash_m_runs_the_hooks_the_fast_way() -> None:
    """The hook path of the script (silent, exit 0 on any input) is the module's too."""
    done = _run("-m", "ontoloom", "hook", "prompt-context", stdin="not json")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


# -- Windows: no POSIX-only import ---------------------------------------------------------------
_WITHOUT_POSIX = """
import importlib, pkgutil, sys, tempfile
from pathlib import Path
# portalocker picks the platform's primitive when imported (flock here, LockFileEx on
# Windows): import it first, then take away what Windows does not have.
import portalocker
for name in ("fcntl", "termios", "pwd", "grp", "resource"):
    sys.modules[name] = None
import ontoloom
failed = []
for module in pkgutil.walk_packages(ontoloom.__path__, "ontoloom."):
    try:
        importlib.import_module(module.name)
    except Exception as exc:
        failed.append(f"{module.name}: {exc!r}")
# Without flock the data dir's lock goes through portalocker, and still excludes.
from ontoloom.errors import Busy
from ontoloom.store.lock import DataDirLock, fcntl
assert fcntl is None
with tempfile.TemporaryDirectory() as tmp:
    with DataDirLock(Path(tmp), exclusive=True, wait=0):
        try:
            DataDirLock(Path(tmp), exclusive=False, wait=0).acquire()
            failed.append("a shared lock was taken beside an exclusive one")
        except Busy:
            pass
    with DataDirLock(Path(tmp), exclusive=False, wait=0):
        pass
print("\\n".join(failed) or "ok")
"""


def test_every_module_imports_without_fcntl() -> None:
    """As on Windows: with fcntl (and the other POSIX-only modules) unavailable, every module
    of the package imports — the CLI, the store and its lock included."""
    done = _run("-c", _WITHOUT_POSIX)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok", done.stdout


# -- dependencies -------------------------------------------------------------------------------
def _requirements() -> list[str]:
    found = list(PYPROJECT["project"]["dependencies"])
    for extra in PYPROJECT["project"].get("optional-dependencies", {}).values():
        found += extra
    return found + list(PYPROJECT["build-system"]["requires"])


@pytest.mark.parametrize("text", _requirements())
def test_every_dependency_has_an_upper_bound(text: str) -> None:
    requirement = Requirement(text)
    uppers = [s for s in requirement.specifier if s.operator in ("<", "<=", "~=", "==")]
    assert uppers, f"pyproject.toml: {text!r} has no upper bound (add <NEXT_MAJOR)"


# -- demo ------------------------------------------------------------------------------------------
@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tempfile's directory for the test, to see what the demo leaves there."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_demo_leaves_nothing_behind(temp_root: Path) -> None:
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    assert "nothing invalid was stored" in result.output
    assert list(temp_root.iterdir()) == []


def test_demo_json_is_every_step_as_data(temp_root: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["instance"] is None and data["kept"] is False
    steps = {s["step"]: s for s in data["steps"]}
    assert steps["refused_write"]["refused"] and steps["refused_cycle"]["refused"]
    assert steps["refused_write"]["refusal"]["error"] == "validation"
    assert steps["guard"]["known"] and steps["why"]["decisions"]
    assert data["summary"]["entities"]["Task"] >= 4
    assert "sk_live_123" not in result.output
    assert list(temp_root.iterdir()) == []


def test_demo_keep_without_dir_keeps_the_temporary_one_and_says_where(temp_root: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--keep"])
    assert result.exit_code == 0, result.output
    kept = result.output.strip().splitlines()[-1]
    assert kept.startswith("kept: ")
    where = Path(kept.removeprefix("kept: ").split()[0])
    assert where.is_relative_to(temp_root) and (where / "ontoloom.toml").is_file()
    assert (where / ".ontoloom").is_dir()


def test_demo_keep_dir_builds_there_and_rebuilds_an_earlier_demo(
    tmp_path: Path, temp_root: Path
) -> None:
    target = tmp_path / "team-demo"
    for _ in range(2):
        result = CliRunner().invoke(main, ["demo", "--keep", str(target), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["instance"] == str(target.resolve())
    assert (target / ".ontoloom").is_dir() and list(temp_root.iterdir()) == []
    listed = CliRunner().invoke(main, ["--data-dir", str(target / ".ontoloom"), "list", "--json"])
    assert listed.exit_code == 0 and len(json.loads(listed.output)) > 10
    # what the demo's agent wrote is kept too, not only what its records rebuild
    written = json.loads((target / "entities.json").read_text(encoding="utf-8"))
    ids = {e["id"] for e in json.loads(listed.output)}
    assert {e["id"] for e in written["entities"]} <= ids


def test_demo_keep_refuses_a_directory_that_is_not_a_demo(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    result = CliRunner().invoke(main, ["demo", "--keep", str(mine)])
    assert result.exit_code == 2
    assert "not empty" in result.output and "Traceback" not in result.output
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def test_demo_ignores_ontoloom_home_and_leaves_it_untouched(
    tmp_path: Path, temp_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It used to fail at its rebuild step ("rebuild needs an instance") and to write its
    entities into the ONTOLOOM_HOME store."""
    home = tmp_path / "home"
    monkeypatch.setenv("ONTOLOOM_HOME", str(home))
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    assert "rebuild needs an instance" not in result.output
    assert "objects:   Action" in result.output
    assert not home.exists() and list(temp_root.iterdir()) == []


@pytest.mark.parametrize("args", [["--data-dir", "x", "demo"], ["demo", "--data-dir", "x"]])
def test_demo_with_a_data_dir_is_a_usage_error(args: list[str], tmp_path: Path) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "never uses a data dir" in result.output
    assert not (tmp_path / "x").exists()


# -- usage errors exit 2 ------------------------------------------------------------------------
USAGE_ERRORS = [
    ["install", "claude-code", "--project", "--global"],
    ["install", "claude-code", "--project", "--global", "--dry-run"],
    ["check", "--yes"],
    ["check", "--check", "cycles"],
    ["check", "--legacy-json", "g.json", "--repair"],
    ["check", "--legacy-json", "g.json", "--explain"],
    ["check", "--legacy-json", "g.json", "--format", "turtle"],
    ["query", "--list", "SELECT * {}"],
    ["guard", "x", "--limit", "0"],
    ["enrich"],
    ["enrich", "--emit", "--ingest", "r.json"],
    ["enrich", "--ingest", "r.json", "--limit", "3"],
    ["enrich", "--emit", "--backend", "claude"],
    ["enrich", "--emit", "--limit", "0"],
    ["enrich", "--resolve-model"],
    ["traverse", "x", "--depth", "9"],
    ["list", "--no-such-option"],
    ["get"],
    # --json is the json format: with another, one of the two would be ignored
    ["check", "--json", "--format", "text"],
    ["--json", "check", "--format", "turtle"],
    ["validate", "g.json", "-s", "g.json", "--json", "-f", "turtle"],
    ["validate", "g.json", "-s", "g.json", "--json", "-f", "human"],
    ["query", "SELECT * {}", "--json", "--format", "csv"],
    ["export", "--json", "--format", "turtle"],
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=" ".join)
def test_usage_errors_exit_2(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # install must write nowhere
    (tmp_path / "g.json").write_text('{"entities": []}', encoding="utf-8")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "Usage: ontoloom" in result.output and "Error: " in result.output
    assert not (tmp_path / "home").exists()


def test_list_of_an_unknown_type_is_bad_input_not_a_refused_write(cli) -> None:
    assert cli("init").exit_code == 0
    result = cli("list", "--type", "Nope")
    assert result.exit_code == 2
    assert "unknown entity type 'Nope'" in result.output
    assert "nothing was stored" not in result.output


# -- the data dir lock (portalocker) ----------------------------------------------------------------
_HOLD_FOREVER = """
import sys, time
from pathlib import Path
from ontoloom.store.lock import DataDirLock
with DataDirLock(Path(sys.argv[1]), exclusive=True, wait=0):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_killed_writer_leaves_no_stale_lock(tmp_path: Path) -> None:
    """The OS lock dies with its process (flock / LockFileEx), so there is no lock file to
    clean up by hand: the next writer gets it at once, and a busy message says what to do."""
    from ontoloom.errors import Busy
    from ontoloom.store.lock import DataDirLock

    data_dir = tmp_path / "d"
    data_dir.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_FOREVER, str(data_dir)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(Busy) as busy:
            DataDirLock(data_dir, exclusive=False, wait=0).acquire()
        assert str(data_dir) in busy.value.message and "ONTOLOOM_LOCK_TIMEOUT" in busy.value.message
    finally:
        holder.kill()
        holder.wait(timeout=60)
    with DataDirLock(data_dir, exclusive=True, wait=0):
        pass
