"""Wire ontoloom into Claude Code: the MCP server and both hooks, merged into its settings.

What gets written (``<exe>`` is the absolute path of the running ``ontoloom``):

    --project (default)   <project>/.claude/settings.json   hooks UserPromptSubmit, SessionStart
                          <project>/.mcp.json               mcpServers.ontoloom
    --global              ~/.claude/settings.json           hooks UserPromptSubmit, SessionStart
                          ~/.claude.json                    mcpServers.ontoloom (user scope)

``<project>`` is the root of the enclosing instance (the folder holding ``ontoloom.toml``), else
the working directory. Every other key, hook and server is kept as it was and in its place; an
ontoloom entry already there is replaced in place (so re-running after moving the venv fixes the
paths), and a second run changes nothing. Every file is read and checked before any is written;
each write is atomic and keeps the file's permissions.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import secrets
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ontoloom.config import find_instance
from ontoloom.errors import BadInput

__all__ = ["FileChange", "InstallResult", "install_claude_code", "resolve_executable"]

Action = Literal["created", "updated", "unchanged"]

HOOK_TIMEOUT = 10  # seconds; both hooks answer in milliseconds and stay silent on any failure
HOOKS = (("UserPromptSubmit", "prompt-context"), ("SessionStart", "session-start"))
SERVER_NAME = "ontoloom"
_EXE_NAMES = {"ontoloom", "ontoloom.exe"}


@dataclass
class FileChange:
    path: Path
    action: Action
    diff: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "action": self.action, "diff": self.diff}


@dataclass
class InstallResult:
    scope: str
    dry_run: bool
    files: list[FileChange] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return any(f.action != "unchanged" for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "dry_run": self.dry_run,
            "files": [f.to_json() for f in self.files],
            "changed": self.changed,
        }

    @property
    def text(self) -> str:
        would = {"created": "would create", "updated": "would update"}
        lines = [
            f"{would.get(f.action, f.action) if self.dry_run else f.action}: {f.path}"
            for f in self.files
        ]
        if self.dry_run:
            diffs = [f.diff.rstrip("\n") for f in self.files if f.diff]
            if diffs:
                lines += ["", *diffs]
            lines += ["", "dry run: nothing was written (run again without --dry-run to apply)"]
        elif self.changed:
            lines.append("restart Claude Code to load the MCP server and hooks")
        else:
            lines.append("already installed; nothing to change")
        return "\n".join(lines)


# -- what to install ---------------------------------------------------------------------------
def resolve_executable() -> str:
    """The absolute path of the running ``ontoloom``, so Claude Code finds it off PATH too.

    Symlinks are kept (not resolved): a pipx or Homebrew link survives upgrades, the versioned
    path it points to does not.
    """
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 and _basename(argv0).lower() in _EXE_NAMES:
        if os.sep in argv0 or (os.altsep and os.altsep in argv0):
            return os.path.abspath(argv0)
        found = shutil.which(argv0)
        if found:
            return os.path.abspath(found)
    found = shutil.which("ontoloom")
    return os.path.abspath(found) if found else "ontoloom"


def hook_handler(exe: str, subcommand: str) -> dict[str, Any]:
    return {
        "type": "command",
        "command": f"{shlex.quote(exe)} hook {subcommand}",
        "timeout": HOOK_TIMEOUT,
    }


def server_entry(exe: str) -> dict[str, Any]:
    return {"type": "stdio", "command": exe, "args": ["mcp"], "env": {}}


# -- the entry point ---------------------------------------------------------------------------
def install_claude_code(
    scope: str = "project",
    dry_run: bool = False,
    *,
    project_dir: Path | None = None,
    home: Path | None = None,
    executable: str | None = None,
) -> InstallResult:
    """Merge the MCP server and both hooks into Claude Code's settings files.

    ``scope`` is ``"project"`` (``.claude/settings.json`` and ``.mcp.json`` of the project) or
    ``"global"`` (``~/.claude/settings.json`` and ``~/.claude.json``). With ``dry_run`` nothing
    is written or created; each file's change is returned as a unified diff.
    """
    if scope not in ("project", "global"):
        raise BadInput(f"unknown scope {scope!r}: use 'project' or 'global'")
    exe = executable or resolve_executable()
    if scope == "project":
        if project_dir is None:
            here = Path.cwd()
            project_dir = find_instance(here) or here
        base = Path(os.path.abspath(project_dir))
        settings_path, mcp_path = base / ".claude" / "settings.json", base / ".mcp.json"
    else:
        root = Path(os.path.abspath(home if home is not None else Path.home()))
        settings_path, mcp_path = root / ".claude" / "settings.json", root / ".claude.json"

    # Read and check every file before writing any: one bad file leaves all of them untouched.
    plans = [
        _plan(settings_path, lambda data: _merge_hooks(data, exe), _check_settings),
        _plan(mcp_path, lambda data: _merge_server(data, exe), _check_mcp),
    ]
    result = InstallResult(scope=scope, dry_run=dry_run)
    for plan in plans:
        if plan.action != "unchanged" and not dry_run:
            _write_atomic(plan.path, plan.new_text)
        result.files.append(FileChange(plan.path, plan.action, plan.diff))
    return result


# -- planning: read, check, merge, diff --------------------------------------------------------
@dataclass
class _Plan:
    path: Path
    action: Action
    new_text: str
    diff: str


def _plan(path: Path, merge: Any, check: Any) -> _Plan:
    old_text = _read(path)
    data = _parse(path, old_text) if old_text is not None else {}
    check(path, old_text or "", data)
    merged = merge(copy.deepcopy(data))
    if old_text is not None and merged == data:
        return _Plan(path, "unchanged", old_text, "")
    new_text = json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
    diff = "".join(
        difflib.unified_diff(
            (old_text or "").splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=str(path) if old_text is not None else "/dev/null",
            tofile=str(path),
        )
    )
    return _Plan(path, "created" if old_text is None else "updated", new_text, diff)


def _read(path: Path) -> str | None:
    """The file's text, or None when it does not exist."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise BadInput(f"{path}: is a directory, not a JSON file; move it aside") from None
    except OSError as exc:
        raise BadInput(f"{path}: cannot read ({exc.strerror}); nothing was written") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start].decode("utf-8", "replace")
        line, column = _line_col(before, len(before))
        raise BadInput(
            f"{path}:{line}:{column}: not UTF-8 text; save it as UTF-8 JSON and run again "
            "(nothing was written)"
        ) from None


def _parse(path: Path, text: str) -> Any:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
        problem = _nonstandard(text)
    except json.JSONDecodeError as exc:
        raise BadInput(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); fix the syntax "
            "(or move the file aside) and run again (nothing was written)"
        ) from None
    except RecursionError:
        raise BadInput(f"{path}:1:1: JSON nested too deeply; nothing was written") from None
    if problem is not None:
        # Python reads these, but other readers of the file (Claude Code) do not, or read
        # them otherwise (which duplicate wins?): writing the file back would change it.
        line, column = _line_col(text, problem[0])
        raise BadInput(
            f"{path}:{line}:{column}: not standard JSON ({problem[1]}); fix it and run again "
            "(nothing was written)"
        )
    return data


def _check_settings(path: Path, text: str, data: Any) -> None:
    _require_object(path, text, data, ())
    if "hooks" not in data:
        return
    hooks = data["hooks"]
    _require_object(path, text, hooks, ("hooks",))
    for event, _ in HOOKS:
        if event in hooks and not isinstance(hooks[event], list):
            _refuse(
                path,
                text,
                ("hooks", event),
                f'"hooks.{event}" must be a list of matcher groups, found {_kind(hooks[event])}',
            )


def _check_mcp(path: Path, text: str, data: Any) -> None:
    _require_object(path, text, data, ())
    if "mcpServers" in data:
        _require_object(path, text, data["mcpServers"], ("mcpServers",))


def _require_object(path: Path, text: str, value: Any, keys: tuple[str, ...]) -> None:
    if isinstance(value, dict):
        return
    where = f'"{".".join(keys)}"' if keys else "the top level"
    _refuse(path, text, keys, f"{where} must be a JSON object {{...}}, found {_kind(value)}")


def _refuse(path: Path, text: str, keys: tuple[str, ...], problem: str) -> None:
    line, column = _line_col(text, _value_offset(text, keys))
    raise BadInput(f"{path}:{line}:{column}: {problem}; fix it and run again (nothing was written)")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )


# -- merging -----------------------------------------------------------------------------------
def _merge_hooks(settings: dict[str, Any], exe: str) -> dict[str, Any]:
    """Put our two hook handlers in place: replace existing ontoloom ones, else append a group."""
    hooks = settings.setdefault("hooks", {})
    for event, subcommand in HOOKS:
        handler = hook_handler(exe, subcommand)
        groups = hooks.get(event)
        if groups is None:
            hooks[event] = [{"hooks": [handler]}]
            continue
        placed = False
        merged_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                merged_groups.append(group)
                continue
            kept, ours = [], False
            for existing in group["hooks"]:
                if _is_ontoloom_hook(existing, subcommand):
                    ours = True
                    if not placed:  # the first one is replaced in place, later copies dropped
                        kept.append(handler)
                        placed = True
                else:
                    kept.append(existing)
            if ours and not kept:
                continue
            merged_groups.append({**group, "hooks": kept} if ours else group)
        if not placed:
            merged_groups.append({"hooks": [handler]})
        hooks[event] = merged_groups
    return settings


def _merge_server(config: dict[str, Any], exe: str) -> dict[str, Any]:
    servers = config.setdefault("mcpServers", {})
    entry = server_entry(exe)
    previous = servers.get(SERVER_NAME)
    if isinstance(previous, dict) and isinstance(previous.get("env"), dict):
        entry["env"] = previous["env"]  # variables the user set (e.g. ONTOLOOM_HOME) are kept
    servers[SERVER_NAME] = entry  # an existing key keeps its place in the dict
    return config


def _is_ontoloom_hook(handler: Any, subcommand: str) -> bool:
    """A handler running ``… ontoloom … hook <subcommand>`` (any path to the executable)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    command = handler["command"]
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if len(words) < 3 or words[-2:] != ["hook", subcommand]:
        return False
    return any(_basename(word).lower() in _EXE_NAMES for word in words[:-2])


def _basename(word: str) -> str:
    return re.split(r"[\\/]", word)[-1]


# -- writing -----------------------------------------------------------------------------------
def _write_atomic(path: Path, text: str) -> None:
    """Write via a temp file in the same folder and ``os.replace``; keep the file's mode.

    A symlinked settings file (dotfiles) is written through: its target is replaced, the link
    stays.
    """
    target = path.resolve() if path.is_symlink() else path
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode: int | None = target.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise BadInput(f"{path}: cannot write ({exc.strerror or exc})") from None


# -- locating a key in JSON text, for error messages -------------------------------------------
def _value_offset(text: str, keys: tuple[str, ...]) -> int:
    """Offset of the value at ``keys`` (objects only) in valid JSON text; best effort."""
    decoder = json.JSONDecoder()
    i = _skip_ws(text, 0)
    try:
        for key in keys:
            if i >= len(text) or text[i] != "{":
                return i
            i, found = i + 1, None
            while True:
                i = _skip_ws(text, i)
                if text[i] == "}":
                    break
                name, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
                i = _skip_ws(text, _skip_ws(text, i) + 1)  # past ':'
                start = i
                _, i = decoder.raw_decode(text, i)
                if name == key:
                    found = start  # the last duplicate wins, as in json.loads
                i = _skip_ws(text, i)
                if text[i] == ",":
                    i += 1
            if found is None:
                return i
            i = found
    except (ValueError, IndexError):
        return 0
    return i


def _nonstandard(text: str) -> tuple[int, str] | None:
    """The offset and description of the first NaN, Infinity or duplicate key in ``text``
    (JSON that :func:`json.loads` accepts), or None."""
    decoder = json.JSONDecoder()

    def value(i: int) -> int:
        i = _skip_ws(text, i)
        if text[i] in "{[":
            close, seen = ("}" if text[i] == "{" else "]"), set()
            i = _skip_ws(text, i + 1)
            while text[i] != close:
                if close == "}":
                    name, after = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
                    if name in seen:
                        raise _Found(i, f"duplicate key {json.dumps(name)}")
                    seen.add(name)
                    i = _skip_ws(text, after) + 1  # past ':'
                i = _skip_ws(text, value(i))
                if text[i] == ",":
                    i = _skip_ws(text, i + 1)
            return i + 1
        for constant in ("NaN", "Infinity", "-Infinity"):
            if text.startswith(constant, i):
                raise _Found(i, f"{constant} is no JSON number")
        return decoder.raw_decode(text, i)[1]

    try:
        value(0)
    except _Found as found:
        return found.offset, found.problem
    return None


class _Found(Exception):
    def __init__(self, offset: int, problem: str) -> None:
        self.offset, self.problem = offset, problem


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n\ufeff":
        i += 1
    return i


def _line_col(text: str, offset: int) -> tuple[int, int]:
    offset = min(offset, len(text))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
