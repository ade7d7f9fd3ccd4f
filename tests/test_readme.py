"""The README is the reference: every command and option of the CLI is in it, every command
has its exit codes there, and it links nothing outside the repository.

Like sqlite-utils' documentation tests, these walk the click command tree, so a command or
option added later fails here, by name, until it is documented.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from ontoloom.cli import main

ROOT = Path(__file__).resolve().parents[1]
README_PATH = ROOT / "README.md"
README = README_PATH.read_text(encoding="utf-8")


def _commands(
    group: click.Group = main, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, click.Command]]:
    """Every command path under ``group`` ("schema add-type", "plan", "plan apply"…)."""
    for name, command in sorted(group.commands.items()):
        if command.hidden:
            continue
        path = (*prefix, name)
        yield " ".join(path), command
        if isinstance(command, click.Group):
            yield from _commands(command, path)


COMMANDS = dict(_commands())
# --data-dir, --json (on the root and on every command) and --help are described once, in
# the introduction to the command table.
GLOBAL = {spelling for p in main.params for spelling in (*p.opts, *p.secondary_opts)} | {
    "-h",
    "--help",
}


def _blocks(text: str) -> list[tuple[str, str]]:
    """The README cut into the pieces an option can be documented in, each as (what must
    name the command, the text the option must be in): each table row, each paragraph or
    list item run, each fenced code block, and each whole section by its heading (so a
    section whose heading names a command documents its options anywhere inside)."""
    blocks: list[str] = []
    current: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            current.append(line)
            fenced = not fenced
            if not fenced:
                blocks.append("\n".join(current))
                current = []
            continue
        if fenced:
            current.append(line)
        elif line.startswith("|"):
            blocks.append(line)
        elif not line.strip() or line.startswith("#"):
            if current:
                blocks.append("\n".join(current))
            current = [line] if line.startswith("#") else []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    sections = re.split(r"(?m)^(?=#{2,6} )", text)
    return [(b, b) for b in blocks] + [
        (s.splitlines()[0], s) for s in sections if s.startswith("#")
    ]


BLOCKS = _blocks(README)


def _names(block: str, path: str) -> bool:
    """Whether ``block`` is about the command ``path``: ``ontoloom PATH`` or `` `PATH``."""
    words = r"\s+".join(map(re.escape, path.split()))
    return re.search(rf"(ontoloom\s+{words}|`{words})(?![\w-])", block) is not None


def _mentions(block: str, spelling: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(spelling)}(?![\w-])", block) is not None


def test_every_command_is_in_the_readme() -> None:
    missing = [
        path for path in COMMANDS if not re.search(rf"ontoloom\s+{re.escape(path)}\b", README)
    ]
    assert not missing, (
        "README.md does not document these commands (write `ontoloom COMMAND` in the command "
        f"table or the command's section): {', '.join(missing)}"
    )


def _options() -> list[tuple[str, click.Option]]:
    found = [("", p) for p in main.params if isinstance(p, click.Option)]
    for path, command in COMMANDS.items():
        found += [(path, p) for p in command.params if isinstance(p, click.Option)]
    return found


@pytest.mark.parametrize(
    ("path", "option"),
    _options(),
    ids=[f"{path or 'ontoloom'} {'/'.join(o.opts)}" for path, o in _options()],
)
def test_every_option_is_documented_with_its_command(path: str, option: click.Option) -> None:
    spellings = [*option.opts, *option.secondary_opts]
    if not path:  # an option of `ontoloom` itself: anywhere in the README
        assert any(_mentions(README, s) for s in spellings), (
            f"README.md never mentions the option {'/'.join(spellings)} of `ontoloom`"
        )
        return
    if set(spellings) <= GLOBAL:
        return
    about = [text for key, text in BLOCKS if _names(key, path)]
    assert about, f"README.md never names the command `ontoloom {path}`"
    assert any(_mentions(b, s) for b in about for s in spellings), (
        f"README.md does not document the option {'/'.join(spellings)} of `ontoloom {path}`: "
        f"mention it in the command table row or a paragraph that names `ontoloom {path}`"
    )


def _exit_code_rows() -> dict[str, str]:
    """The rows of the README's per-command exit code table: command → codes."""
    section = README.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`"):
            for name in re.findall(r"`(?:ontoloom )?([^`]+)`", cells[0]):
                rows[name] = cells[1]
    return rows


def test_every_command_has_its_exit_codes_in_the_readme() -> None:
    rows = _exit_code_rows()
    groups = {
        p
        for p, c in COMMANDS.items()
        if isinstance(c, click.Group) and not c.invoke_without_command
    }
    missing = [p for p in COMMANDS if p not in rows and p not in groups]
    assert not missing, (
        "README.md's exit code table (section '## Exit codes') has no row for: "
        + ", ".join(missing)
    )
    for path, codes in rows.items():
        assert re.search(r"\b[0-9]\b", codes), f"the exit code row of `{path}` names no code"


def test_guard_exit_3_is_documented() -> None:
    assert re.search(r"\b3\b", _exit_code_rows()["guard"])


LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<a\s+href=\"([^\"]+)\"")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_relative_link_resolves_inside_the_repository() -> None:
    anchors = {_slug(h) for h in re.findall(r"(?m)^#{1,6} (.+)$", README)}
    broken = []
    for match in LINK.finditer(README):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: — not a file
            continue
        path, _, anchor = target.partition("#")
        if not path:
            if anchor not in anchors:
                broken.append(f"{target} (no such heading)")
            continue
        resolved = (README_PATH.parent / path).resolve()
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{target} (outside the repository)")
        elif not resolved.exists():
            broken.append(f"{target} (no such file)")
    assert not broken, "README.md links: " + "; ".join(broken)


def test_the_readme_names_no_path_outside_the_repository() -> None:
    """Not as a link, not as a `code` path either: a user has only the repository."""
    outside = re.findall(r"(?<![\w.])\.\./[\w./-]+", README)
    assert not outside, f"README.md refers outside the repository: {', '.join(outside)}"
