"""Wire ontoloom into an agent: its MCP server (and, for Claude Code, both hooks) merged into
the client's own config, and the instructions (``ontoloom skill``) where the client reads them.

What gets written (``<exe>`` is the running ``ontoloom``: in a project's files, which are
shared through git, its bare name when ``ontoloom`` on PATH is that one, else its absolute
path; in per-user files its absolute path, so a client started off PATH finds it; ``<project>`` is
the root of the enclosing instance — the folder holding ``ontoloom.toml`` — else the working
directory; ``~`` is the home folder):

    client          --project (default)                 --global
    claude-code     <project>/.claude/settings.json     ~/.claude/settings.json   (hooks)
                    <project>/.mcp.json                 ~/.claude.json            (mcpServers)
                    <project>/.claude/skills/ontoloom/SKILL.md   ~/.claude/skills/ontoloom/SKILL.md
    cursor          <project>/.cursor/mcp.json          ~/.cursor/mcp.json        (mcpServers)
                    <project>/.cursor/rules/ontoloom.mdc  (user rules live in Cursor's settings)
    codex           <project>/.codex/config.toml        $CODEX_HOME/config.toml   ([mcp_servers])
                    <project>/AGENTS.md                 $CODEX_HOME/AGENTS.md     (~/.codex)
    gemini          <project>/.gemini/settings.json     ~/.gemini/settings.json   (mcpServers)
                    <project>/GEMINI.md                 ~/.gemini/GEMINI.md
    opencode        <project>/opencode.json             ~/.config/opencode/opencode.json  ("mcp")
                    <project>/AGENTS.md                 ~/.config/opencode/AGENTS.md
    claude-desktop  claude_desktop_config.json of the platform (one per user; mcpServers)

Every other key, hook and server is kept as it was and in its place; an ontoloom entry already
there is updated in place (so re-running after moving the venv fixes the paths; variables the
user set in its env are kept), and a second run changes nothing. Instructions go into a file of
ontoloom's own (SKILL.md, the Cursor rule) or, in a file the user owns (AGENTS.md, GEMINI.md),
between two marker lines that later runs replace. Every file is read and checked before any is
written — a malformed one is refused with its line and column, and nothing is written; each
write is atomic and keeps the file's permissions.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ontoloom.config import find_instance
from ontoloom.errors import BadInput

__all__ = [
    "CLIENTS",
    "FileChange",
    "InstallResult",
    "claude_desktop_config",
    "install",
    "install_claude_code",
    "resolve_executable",
    "skill_folders",
]

Action = Literal["created", "updated", "unchanged"]

HOOK_TIMEOUT = 10  # seconds; both hooks answer in milliseconds and stay silent on any failure
HOOKS = (("UserPromptSubmit", "prompt-context"), ("SessionStart", "session-start"))
SERVER_NAME = "ontoloom"
# The clients ``install`` knows, and the name each is shown by.
CLIENTS = {
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "codex": "Codex CLI",
    "gemini": "Gemini CLI",
    "opencode": "OpenCode",
    "claude-desktop": "Claude Desktop",
}
BEGIN = (
    "<!-- ontoloom:begin — written by `ontoloom install`; this block is replaced on every run -->"
)
END = "<!-- ontoloom:end -->"
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
    client: str = "claude-code"
    notes: list[str] = field(default_factory=list)  # what was not done, and why

    @property
    def changed(self) -> bool:
        return any(f.action != "unchanged" for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "scope": self.scope,
            "dry_run": self.dry_run,
            "files": [f.to_json() for f in self.files],
            "changed": self.changed,
            "notes": self.notes,
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
            what = "the MCP server and hooks" if self.client == "claude-code" else "the MCP server"
            lines.append(f"restart {CLIENTS.get(self.client, self.client)} to load {what}")
        else:
            lines.append("already installed; nothing to change")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


# -- what to install ---------------------------------------------------------------------------
def skill_folders(home: Path | None = None, project_dir: Path | None = None) -> list[Path]:
    """The folders skills are installed in (where ``install claude-code`` writes its
    SKILL.md): the project's ``.claude/skills`` — the enclosing instance's root, else the
    working directory — and the user's ``~/.claude/skills``; each once."""
    if project_dir is None:
        here = Path.cwd()
        project_dir = find_instance(here) or here
    home_dir = home if home is not None else Path.home()
    found = [Path(project_dir) / ".claude" / "skills", home_dir / ".claude" / "skills"]
    return list(dict.fromkeys(Path(os.path.abspath(p)) for p in found))


def resolve_executable(*, portable: bool = False) -> str:
    """The absolute path of the running ``ontoloom``, so Claude Code finds it off PATH too;
    ``portable`` (a project's files, shared through git): the bare name when ``ontoloom`` on
    PATH is the running one — an absolute virtualenv path works on this machine only.

    Symlinks are kept (not resolved): a pipx or Homebrew link survives upgrades, the versioned
    path it points to does not.
    """
    found = _running_executable()
    if portable and found != "ontoloom":
        on_path = shutil.which("ontoloom")
        try:
            if on_path and os.path.samefile(on_path, found):
                return "ontoloom"
        except OSError:
            pass
    return found


def _running_executable() -> str:
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
    skill: str | None = None,
) -> InstallResult:
    """Merge the MCP server and both hooks into Claude Code's settings files, and write the
    skill (see :func:`install`)."""
    return install(
        "claude-code",
        scope,
        dry_run,
        project_dir=project_dir,
        home=home,
        executable=executable,
        skill=skill,
    )


def install(
    client: str,
    scope: str = "project",
    dry_run: bool = False,
    *,
    project_dir: Path | None = None,
    home: Path | None = None,
    executable: str | None = None,
    skill: str | None = None,
    environ: dict[str, str] | None = None,
    platform: str | None = None,
) -> InstallResult:
    """Merge the MCP server into ``client``'s config and write its instructions.

    ``scope`` is ``"project"`` or ``"global"`` (Claude Desktop has only its per-user file, so
    it takes ``"global"``). With ``dry_run`` nothing is written or created; each file's change
    is returned as a unified diff. ``skill`` is the instructions' text (default: generated
    from the live schema); ``environ`` and ``platform`` default to the process's.
    """
    if client not in CLIENTS:
        raise BadInput(f"unknown client {client!r}: use one of {', '.join(CLIENTS)}")
    if scope not in ("project", "global"):
        raise BadInput(f"unknown scope {scope!r}: use 'project' or 'global'")
    if client == "claude-desktop" and scope != "global":
        raise BadInput(
            "Claude Desktop has one config per user, no project config: "
            "run `ontoloom install claude-desktop` (it is always --global)"
        )
    exe = executable or resolve_executable(portable=scope == "project")
    env = dict(os.environ if environ is None else environ)
    home_dir = Path(os.path.abspath(home if home is not None else Path.home()))
    if project_dir is None:
        here = Path.cwd()
        project_dir = find_instance(here) or here
    base = Path(os.path.abspath(project_dir))
    if skill is None:
        from ontoloom.skill import live_schema, skill_text

        skill = skill_text(live_schema())
    body = _without_frontmatter(skill)
    glob = scope == "global"
    notes: list[str] = []
    plans: list[Callable[[], _Plan]] = []

    def json_file(path: Path, merge: Callable[[Any], Any], keys: tuple[str, ...]) -> None:
        plans.append(lambda: _plan(path, merge, lambda p, t, d: _check_objects(p, t, d, keys)))

    if client == "claude-code":
        root = home_dir if glob else base
        settings = root / ".claude" / "settings.json"
        mcp = home_dir / ".claude.json" if glob else base / ".mcp.json"
        plans.append(lambda: _plan(settings, lambda d: _merge_hooks(d, exe), _check_settings))
        json_file(mcp, lambda d: _merge_server(d, exe), ("mcpServers",))
        skill_path = root / ".claude" / "skills" / SERVER_NAME / "SKILL.md"
        plans.append(lambda: _plan_text(skill_path, skill, whole=True))
    elif client == "cursor":
        root = home_dir if glob else base
        json_file(
            root / ".cursor" / "mcp.json",
            lambda d: _merge_entry(d, ("mcpServers",), _stdio_entry(exe)),
            ("mcpServers",),
        )
        if glob:
            notes.append(
                "Cursor keeps user rules in its settings, not in a file: paste the output of "
                "`ontoloom skill --plain` into Cursor Settings → Rules to give every project "
                "the instructions (a project gets them from `ontoloom install cursor`)"
            )
        else:
            rule = _cursor_rule(body)
            rule_path = base / ".cursor" / "rules" / f"{SERVER_NAME}.mdc"
            plans.append(lambda: _plan_text(rule_path, rule, whole=True))
    elif client == "codex":
        codex_home = Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home_dir / ".codex"
        root = codex_home if glob else base / ".codex"
        config = root / "config.toml"
        plans.append(lambda: _plan_toml(config, exe))
        agents = codex_home / "AGENTS.md" if glob else base / "AGENTS.md"
        plans.append(lambda: _plan_text(agents, body, whole=False))
        if not glob:
            notes.append(
                "Codex reads a project's .codex/config.toml only once the project is trusted"
            )
    elif client == "gemini":
        root = home_dir if glob else base
        json_file(
            root / ".gemini" / "settings.json",
            lambda d: _merge_entry(d, ("mcpServers",), _stdio_entry(exe)),
            ("mcpServers",),
        )
        gemini_md = home_dir / ".gemini" / "GEMINI.md" if glob else base / "GEMINI.md"
        plans.append(lambda: _plan_text(gemini_md, body, whole=False))
    elif client == "opencode":
        xdg = env.get("XDG_CONFIG_HOME")
        root = (Path(xdg) if xdg else home_dir / ".config") / "opencode" if glob else base
        for jsonc in (root / "opencode.jsonc",):
            if jsonc.exists():
                raise BadInput(
                    f"{jsonc}: OpenCode reads this JSONC file, and ontoloom merges plain JSON "
                    f'only; add under "mcp": "{SERVER_NAME}": '
                    f"{json.dumps(_opencode_entry(exe, {}, v2=False))} by hand (nothing was written)"
                )
        plans.append(
            lambda: _plan(
                root / "opencode.json",
                lambda d: _merge_opencode(d, exe),
                lambda p, t, d: _check_objects(p, t, d, ("mcp",)),
            )
        )
        plans.append(lambda: _plan_text(root / "AGENTS.md", body, whole=False))
    else:  # claude-desktop
        config = claude_desktop_config(home_dir, env, platform or sys.platform)
        pinned = _pinned_home(base)
        json_file(
            config,
            lambda d: _merge_entry(d, ("mcpServers",), _stdio_entry(exe), pinned),
            ("mcpServers",),
        )
        if pinned:
            notes.append(
                f"Claude Desktop starts servers outside any project: ONTOLOOM_HOME is set to "
                f"{pinned['ONTOLOOM_HOME']} (the instance install was run in)"
            )
        notes.append(
            "Claude Desktop reads no instruction file: the MCP server gives it short "
            "instructions itself; for the full text, paste `ontoloom skill --plain` into a "
            "Claude Project's instructions"
        )

    if executable is None and not glob and os.path.isabs(exe):
        notes.append(
            f"the project's files name {exe}: `ontoloom` on PATH is not the one you ran, so "
            "they work on this machine only — put ontoloom on PATH and run install again "
            "before sharing them"
        )
    # Read and check every file before writing any: one bad file leaves all of them untouched.
    planned = [make() for make in plans]
    result = InstallResult(scope=scope, dry_run=dry_run, client=client, notes=notes)
    for plan in planned:
        if plan.action != "unchanged" and not dry_run:
            _write_atomic(plan.path, plan.new_text)
        result.files.append(FileChange(plan.path, plan.action, plan.diff))
    return result


def claude_desktop_config(home: Path, environ: dict[str, str], platform: str) -> Path:
    """Where Claude Desktop reads its config on ``platform`` (``sys.platform`` values)."""
    name = "claude_desktop_config.json"
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / name
    if platform.startswith(("win", "cygwin")):
        appdata = environ.get("APPDATA")
        return (Path(appdata) if appdata else home / "AppData" / "Roaming") / "Claude" / name
    xdg = environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else home / ".config") / "Claude" / name


def _pinned_home(base: Path) -> dict[str, str]:
    """``ONTOLOOM_HOME`` for a client that starts servers outside any project: the data dir of
    the instance ``install`` runs in, or nothing (the server then finds its own)."""
    from ontoloom.config import DATA_DIR_NAME, INSTANCE_MARKER

    if (base / INSTANCE_MARKER).is_file():
        return {"ONTOLOOM_HOME": str(base / DATA_DIR_NAME)}
    return {}


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
    return _changed(path, old_text, json.dumps(merged, indent=2, ensure_ascii=False) + "\n")


def _changed(path: Path, old_text: str | None, new_text: str) -> _Plan:
    if old_text == new_text:
        return _Plan(path, "unchanged", new_text, "")
    diff = "".join(
        difflib.unified_diff(
            (old_text or "").splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=str(path) if old_text is not None else "/dev/null",
            tofile=str(path),
        )
    )
    return _Plan(path, "created" if old_text is None else "updated", new_text, diff)


def _plan_toml(path: Path, exe: str) -> _Plan:
    """Codex's ``[mcp_servers.ontoloom]``: command and args set, everything else in the file
    (comments, layout, the user's other keys on our table) kept as written."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    old_text = _read(path)
    try:
        doc = tomlkit.parse(old_text or "")
    except ParseError as exc:
        raise BadInput(
            f"{path}:{exc.line}:{exc.col}: not valid TOML ({str(exc).split(' at line')[0]}); "
            "fix the syntax (or move the file aside) and run again (nothing was written)"
        ) from None

    def refuse(key: str, found: Any) -> None:
        at = (old_text or "").find(key)
        line = (old_text or "").count("\n", 0, max(at, 0)) + 1
        raise BadInput(
            f'{path}:{line}: "{key}" must be a table, found {_kind(found)}; fix it and run '
            "again (nothing was written)"
        )

    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        refuse("mcp_servers", servers)
    ours = servers.get(SERVER_NAME) if servers is not None else None
    if ours is not None and not isinstance(ours, dict):
        refuse(f"mcp_servers.{SERVER_NAME}", ours)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    if ours is None:
        ours = tomlkit.table()
        servers[SERVER_NAME] = ours
    # Set only what differs, so an unchanged entry leaves the text byte for byte.
    if ours.get("command") != exe:
        ours["command"] = exe
    if ours.get("args") != ["mcp"]:
        ours["args"] = ["mcp"]
    new_text = tomlkit.dumps(doc)
    if old_text is not None and new_text == old_text:
        return _Plan(path, "unchanged", old_text, "")
    return _changed(path, old_text, new_text)


def _plan_text(path: Path, text: str, *, whole: bool) -> _Plan:
    """Instructions: the whole file when it is ontoloom's own (``whole``), else a block
    between the BEGIN and END lines in a file the user owns, replaced in place, appended when
    there is none."""
    old_text = _read(path)
    if whole:
        return _changed(path, old_text, text)
    block = f"{BEGIN}\n{text.rstrip()}\n{END}\n"
    if old_text is None or not old_text.strip():
        return _changed(path, old_text, block)
    lines = old_text.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines) if line.startswith("<!-- ontoloom:begin")]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\r\n") == END]
    if not begins and not ends:
        sep = "" if old_text.endswith("\n") else "\n"
        return _changed(path, old_text, f"{old_text}{sep}\n{block}")
    if len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0]:
        new_text = "".join(lines[: begins[0]]) + block + "".join(lines[ends[0] + 1 :])
        return _changed(path, old_text, new_text)
    line = (begins or ends)[0] + 1 if len(begins) <= 1 else begins[1] + 1
    raise BadInput(
        f"{path}:{line}: the ontoloom block's marker lines do not pair up (found "
        f"{len(begins)} begin and {len(ends)} end line(s)); leave one '<!-- ontoloom:begin' "
        f"line and one '{END}' line after it, or delete the block, and run again "
        "(nothing was written)"
    )


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


def _check_objects(path: Path, text: str, data: Any, keys: tuple[str, ...]) -> None:
    """The top level, and each of ``keys`` in turn where present, must be JSON objects."""
    _require_object(path, text, data, ())
    for i in range(len(keys)):
        value: Any = data
        for key in keys[: i + 1]:
            if not isinstance(value, dict) or key not in value:
                return
            value = value[key]
        _require_object(path, text, value, keys[: i + 1])


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


def _stdio_entry(exe: str) -> dict[str, Any]:
    return {"command": exe, "args": ["mcp"], "env": {}}


def _merge_entry(
    config: dict[str, Any],
    keys: tuple[str, ...],
    entry: dict[str, Any],
    env: dict[str, str] | None = None,
    env_key: str = "env",
) -> dict[str, Any]:
    """Put ``entry`` at ``keys`` + the server's name; the env the user set there is kept (and
    ``env`` set on top of it), the other keys they added to our entry too."""
    table = config
    for key in keys:
        table = table.setdefault(key, {})
    previous = table.get(SERVER_NAME)
    merged = dict(entry)
    if isinstance(previous, dict):
        merged = {**previous, **entry}
        if isinstance(previous.get(env_key), dict):
            merged[env_key] = previous[env_key]
    if env:
        merged[env_key] = {**(merged.get(env_key) or {}), **env}
    table[SERVER_NAME] = merged  # an existing key keeps its place in the dict
    return config


def _opencode_entry(exe: str, previous: Any, *, v2: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "local", "command": [exe, "mcp"]}
    if not v2:
        entry["enabled"] = True
    return entry


def _merge_opencode(config: dict[str, Any], exe: str) -> dict[str, Any]:
    """OpenCode's ``"mcp"``: servers by name (``{"type": "local", "command": [...]}``), or
    under ``"mcp.servers"`` when the file already uses that newer layout."""
    mcp = config.get("mcp")
    v2 = isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict)
    keys = ("mcp", "servers") if v2 else ("mcp",)
    return _merge_entry(config, keys, _opencode_entry(exe, None, v2=v2), env_key="environment")


def _cursor_rule(body: str) -> str:
    from ontoloom.skill import DESCRIPTION

    return f"---\ndescription: {DESCRIPTION}\nalwaysApply: false\n---\n{body}"


def _without_frontmatter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end >= 0:
            return text[end + 5 :].lstrip("\n")
    return text


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
