"""The README is a test (issue 32): every shell block in it runs, in order, in a fresh
directory, and what it shows is checked — a README that drifts from the tool fails here.

* A ```sh / ```bash block is run line by line (a line ending in ``\\`` continues) in one shell
  per block; each command must exit 0, or the code the block's directive names. The
  directory a block ends in is where the next one starts (the quick start's ``cd my-team``).
* A ```console block is ``$ command`` lines, each followed by the output it prints: the
  output must be what is shown, up to whitespace (the README wraps long lines) and generated
  ids (``task_83f08251`` stands for any id of that type).
* A directive, an HTML comment on the line before the fence, says what a block needs:
  ``<!-- readme-test: in example; exit: 1; before: CMD -->`` or ``<!-- readme-test: skip:
  WHY -->`` (``before`` and ``skip`` last: each takes the rest of the line). ``in example`` runs
  the block in the example instance (as ``make demo`` builds it); ``before`` runs a command
  first (a file the block reads); ``skip`` names why a block is not run here (a server that
  stays up, the network, another machine) — every skipped block is listed by this test, never
  dropped in silence.

The commands run with a throwaway ``HOME`` and XDG directories, the venv's ``ontoloom`` first
on ``PATH``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"
_FENCE = re.compile(r"^```(sh|bash|console)\s*$")
_DIRECTIVE = re.compile(r"^<!--\s*readme-test:\s*(.*?)\s*-->\s*$")
# ids the tool generates (`task_83f08251`): any id of the same kind matches
_GENERATED_ID = re.compile(r"\b([a-z]{2,5})_[0-9a-f]{8}\b")


@dataclass
class Block:
    line: int  # of the opening fence, 1-based
    kind: str
    text: list[str]
    directives: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"README.md:{self.line}"


def blocks() -> list[Block]:
    lines = README.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        directives: dict[str, str] = {}
        previous = _DIRECTIVE.match(lines[i - 1]) if i else None
        if previous:
            # `skip:` and `before:` come last and take the rest (they may hold `;`)
            text = previous.group(1)
            for key in ("before", "skip"):
                text, _, rest = text.partition(f"{key}:")
                if rest:
                    directives[key] = rest.strip()
            for part in filter(str.strip, text.split(";")):
                key, _, value = part.strip().partition(":")
                key = key.strip()
                if key.startswith("in "):
                    key, value = "in", key[3:]
                directives[key] = value.strip()
        end = i + 1
        while not lines[end].startswith("```"):
            end += 1
        out.append(Block(i + 1, fence.group(1), lines[i + 1 : end], directives))
        i = end + 1
    return out


def commands(text: list[str]) -> list[str]:
    """Shell lines, a trailing backslash joining the next line."""
    out: list[str] = []
    pending = ""
    for raw in text:
        line = pending + raw
        if line.rstrip().endswith("\\"):
            pending = line.rstrip()[:-1] + " "
            continue
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line)
    return out


def console(text: list[str]) -> list[tuple[str, str]]:
    """(command, shown output) pairs of a console block."""
    out: list[tuple[list[str], list[str]]] = []
    for line in text:
        if line.startswith("$ "):
            out.append(([line[2:]], []))
        elif out and not out[-1][1] and out[-1][0][-1].rstrip().endswith("\\"):
            out[-1][0].append(line)
        elif out:
            out[-1][1].append(line)
    return [(" ".join(commands(cmd)), "\n".join(shown)) for cmd, shown in out]


def normalised(text: str) -> str:
    return " ".join(_GENERATED_ID.sub(r"\1_ID", text).split())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A fresh directory, a throwaway home, the example instance, and where the last block
    ended."""
    from ontoloom.demo import run_demo

    root = tmp_path_factory.mktemp("readme")
    home = root / "home"
    home.mkdir()
    example = root / "example" / "team"
    run_demo(keep=example)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ONTOLOOM_", "XDG_"))} | {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    work = root / "work"
    work.mkdir()
    return {"cwd": work, "example": example, "env": env}


def _shell(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


BLOCKS = blocks()


def test_the_readme_has_blocks_to_run_and_names_each_skip() -> None:
    ran = [b for b in BLOCKS if "skip" not in b.directives]
    assert len(ran) >= 8
    for b in BLOCKS:
        if "skip" in b.directives:
            assert b.directives["skip"], f"{b.name}: a skip names why"


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if "skip" in b.directives], ids=lambda b: b.name
)
def test_a_block_not_run_here_is_named_with_why(block: Block) -> None:
    pytest.skip(f"named in the README: {block.directives['skip']}")


def test_every_block_runs_as_shown_in_order(world: dict[str, object]) -> None:
    """One test, the blocks in the README's order (a later block reads what an earlier one
    made, so they cannot be spread over workers); every failure is reported, not the first."""
    failures = []
    for block in BLOCKS:
        if "skip" in block.directives:
            continue
        try:
            _run(block, world)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n\n".join(failures)


def _run(block: Block, world: dict[str, object]) -> None:
    env = world["env"]
    assert isinstance(env, dict)
    cwd = world["example"] if block.directives.get("in") == "example" else world["cwd"]
    assert isinstance(cwd, Path)
    expected_exit = int(block.directives.get("exit", "0"))
    before = block.directives.get("before")
    if before:
        done = _shell(before, cwd, env)
        assert done.returncode == 0, f"{block.name} before: {done.stderr}"
    if block.kind == "console":
        for command, shown in console(block.text):
            done = _shell(command, cwd, env)
            assert done.returncode == expected_exit, (
                f"{block.name}: `{command}` exited {done.returncode}, not {expected_exit}\n"
                f"{done.stdout}{done.stderr}"
            )
            assert normalised(done.stdout + done.stderr) == normalised(shown), (
                f"{block.name}: `{command}` printed\n{done.stdout}{done.stderr}"
            )
        return
    script = ["state=$(mktemp)"]
    for command in commands(block.text):
        script += [
            command,
            f"rc=$?; if [ $rc -ne {expected_exit} ]; then "
            f"echo {_quoted(f'{block.name}: `{command.strip()}`')} exited $rc >&2; exit 99; fi",
        ]
    script.append('pwd > "$WHERE"')
    where = Path(str(world["cwd"])).parent / "where"
    done = _shell("\n".join(script), cwd, {**env, "WHERE": str(where)})
    assert done.returncode == 0, done.stderr[-3000:]
    if block.directives.get("in") != "example":
        world["cwd"] = Path(where.read_text().strip())


def test_the_runner_reads_a_console_block_and_a_continued_line() -> None:
    assert console(["$ echo a \\", "    b", "a b", "", "$ true"]) == [
        ("echo a      b", "a b\n"),
        ("true", ""),
    ]
    assert normalised("focus task_83f08251\n  x") == normalised("focus   task_0123abcd x")
    assert commands(["a \\", "b", "# c", "d"]) == ["a  b", "d"]
    assert shutil.which("bash")


def test_a_block_that_drifted_fails(world: dict[str, object]) -> None:
    """The runner can fail: a shown output, an exit code or a command the tool no longer has."""
    drifted = [
        Block(1, "console", ["$ ontoloom --version", "ontoloom 0.0.0-never"]),
        Block(2, "console", ["$ ontoloom list --type Nope"], {"exit": "0"}),
        Block(3, "sh", ["ontoloom no-such-command"]),
    ]
    for block in drifted:
        with pytest.raises(AssertionError):
            _run(block, world)
