"""Peers installed on first use under bench/.peers/ (gitignored):

* the reference memory server (`@modelcontextprotocol/server-memory`, npm) — for
  `make bench-mcp` and for the differential test (tests/test_memory_reference.py), which
  `.ci/run` readies with `python bench/peers.py`;
* pySHACL's own test suites — the DASH test cases and its data-driven regression tests —
  unpacked from the sdist of the pySHACL version installed here (PyPI, through pip) for
  tests/test_dash_suite.py and tests/test_pyshacl_cases.py, which `.ci/run` readies with
  `make pyshacl-suites` (`python bench/peers.py pyshacl-suites`, by the project's Python).

Standard library only: the tests load this file by path.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from importlib import metadata
from pathlib import Path

__all__ = [
    "PEERS",
    "PYSHACL_SUITES",
    "REFERENCE_PACKAGE",
    "Unavailable",
    "installed",
    "pyshacl_suites",
    "reference_script",
]

PEERS = Path(__file__).resolve().parent / ".peers"
REFERENCE_PACKAGE = "@modelcontextprotocol/server-memory"
# The folders of pySHACL's sdist the suites read (under its test/): data, never its code.
PYSHACL_SUITES = ("resources/dash_tests", "resources/cmdline_tests", "issues")


class Unavailable(Exception):
    """A peer that cannot be installed, loaded or started here: its row says why."""


def installed(argv: list[str], what: str, script: Path) -> Path:
    """Run an installer (``argv``, described as ``what``) that should leave ``script``.

    :raises Unavailable: naming the installer's last line of error when it fails.
    """
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        raise Unavailable(f"{what} failed: {exc}") from exc
    if done.returncode != 0 or not script.exists():
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise Unavailable(f"{what} failed: {last[:160]}")
    return script


def reference_script(peers: Path = PEERS, install: bool = True) -> Path:
    """The reference server's entry point, `npm install`ed on first use under ``peers``
    (only looked for, without ``install``).

    :raises Unavailable: when node/npm are missing or the install fails.
    """
    where = peers / "npm"
    script = (
        where / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    )
    if script.exists() and shutil.which("node") is not None:
        return script
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise Unavailable("node/npm not found")
    if not install:
        raise Unavailable(f"{REFERENCE_PACKAGE} is not installed under {where}")
    where.mkdir(parents=True, exist_ok=True)
    installed(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(where), REFERENCE_PACKAGE],
        f"npm install {REFERENCE_PACKAGE}",
        script,
    )
    return script


def pyshacl_suites(peers: Path = PEERS, install: bool = True) -> Path:
    """The ``test`` folder of the installed pySHACL's sdist (only :data:`PYSHACL_SUITES` in
    it), downloaded with pip (``pip download --no-binary :all: pyshacl==VERSION``) and
    unpacked on first use under ``peers``; only looked for, without ``install``.

    :raises Unavailable: when pySHACL is not installed in this Python, or the download or
        the unpacking fails.
    """
    try:
        version = metadata.version("pyshacl")
    except metadata.PackageNotFoundError:
        raise Unavailable(f"pySHACL is not installed in {sys.executable}") from None
    where = peers / f"pyshacl-{version}"
    tests = where / "test"
    if tests.is_dir():
        return tests
    if not install:
        raise Unavailable(
            f"pySHACL {version}'s test suites are not unpacked under {where} "
            "(`make pyshacl-suites`)"
        )
    peers.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=peers) as tmp:
        sdist = Path(tmp) / f"pyshacl-{version}.tar.gz"
        installed(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--no-binary", ":all:", "--dest", tmp, f"pyshacl=={version}"],
            f"pip download pyshacl=={version} (sdist)",
            sdist,
        )  # fmt: skip
        top = f"pyshacl-{version}/test/"
        unpacked = Path(tmp) / "unpacked"
        try:
            with tarfile.open(sdist) as archive:
                members = [
                    m
                    for m in archive.getmembers()
                    if (m.isfile() or m.isdir())
                    and any(m.name.startswith(top + s + "/") for s in PYSHACL_SUITES)
                ]
                archive.extractall(unpacked, members=members, filter="data")
        except (OSError, tarfile.TarError) as exc:
            raise Unavailable(f"unpacking {sdist.name} failed: {exc}") from exc
        if not (unpacked / top).is_dir():
            raise Unavailable(f"{sdist.name} holds no {top} folder")
        where.mkdir(exist_ok=True)
        (unpacked / top).rename(tests)  # whole or not at all: a rename
    return tests


if __name__ == "__main__":
    try:
        if sys.argv[1:] == ["pyshacl-suites"]:
            print(pyshacl_suites())
        else:
            print(reference_script())
    except Unavailable as exc:
        sys.exit(f"not available: {exc}")
