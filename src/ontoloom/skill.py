"""The instructions an agent gets with ontoloom: ``ontoloom skill`` prints them, and
``ontoloom install <client>`` writes them where each client reads instructions.

Generated, never hand-kept: the tool list comes from the MCP server's own tool specs and the
schema brief from the live schema (the store's, with any added types and relations, else the
shipped one), so the text cannot drift from what the server does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ontoloom.schema import Schema

__all__ = ["DESCRIPTION", "live_schema", "skill_text"]

NAME = "ontoloom"
DESCRIPTION = (
    "Use the ontoloom MCP tools, the team's shared typed memory (tasks, people, projects, "
    "recurring failures, rules, decisions, runbooks), to look things up before acting, to ask "
    "whether a failure happened before (guard) and why something is so (why), and to record "
    "what was learned as validated entities and relations."
)


def live_schema(data_dir: Path | None = None) -> Schema:
    """The store's schema (opened read-only, never created), else — when there is no store —
    the shipped one, which is what a new store starts with. A store that is there but cannot
    be read is an error, not a silent fall-back (its added types would be missing)."""
    from ontoloom.api import Graph
    from ontoloom.config import resolve_data_dir
    from ontoloom.schema import Schema
    from ontoloom.store import exists

    path = resolve_data_dir(data_dir)
    if not exists(path):
        return Schema.load()
    with Graph.open(path) as g:
        return g.schema


def _first_sentence(text: str) -> str:
    """The first sentence (the first two when the first is a bare restatement of the name)."""
    flat = " ".join(text.split())
    end = flat.find(". ")
    if 0 <= end < 40:
        end = flat.find(". ", end + 2)
    return flat if end < 0 else flat[: end + 1]


def skill_text(schema: Schema, *, frontmatter: bool = True) -> str:
    """The skill as markdown (with the ``name``/``description`` frontmatter skills use)."""
    from ontoloom.ops.memory import memory_operations
    from ontoloom.ops.typed import typed_operations

    lines: list[str] = []
    if frontmatter:
        lines += ["---", f"name: {NAME}", f"description: {DESCRIPTION}", "---", ""]
    lines += [
        "# ontoloom: the team's shared, typed memory",
        "",
        "ontoloom is a knowledge graph that agents and people share: entities (tasks, people, "
        "projects, events, documents…) and the operational record (recurring failures, rules, "
        "decisions, runbooks). Every write is validated against the schema below before "
        "anything is stored.",
        "",
        "## How to work with it",
        "",
        "- Search (`search`, `get_entity`) before you create: duplicates are the usual mistake.",
        "- Something failed? Call `guard` with what went wrong: it says whether this failure "
        "happened before, how often, and the rules and runbooks that cover it.",
        "- Asked why something is so? Call `why` on the rule, action or decision.",
        "- Several related writes: `plan_apply` validates and commits them as one.",
        "- Proposals and hints are unconfirmed until a person confirms them: never present "
        "them as facts.",
        "- Ids look like `task_a1b2c3d4` (entities) or `rule:no-raw-control-bytes` (records).",
        "",
        "## The typed tools",
        "",
        "| tool | what it is for |",
        "| --- | --- |",
    ]
    for spec in typed_operations(schema):
        lines.append(f"| `{spec.name}` | {_first_sentence(spec.description)} |")
    lines += [
        "",
        "## The drop-in memory tools",
        "",
        "The reference memory server's tools work on the same graph, with its arguments: use "
        "them when a prompt, a workflow or code was written for that server, or for free-form "
        "notes about a named thing (`add_observations`). For anything the schema has a type or "
        "a relation for, prefer the typed tools: they check properties, cardinality and "
        "cycles, and their answers carry the ids the other tools take.",
        "",
        "| tool | what it is for |",
        "| --- | --- |",
    ]
    for spec in memory_operations():
        lines.append(f"| `{spec.name}` | {_first_sentence(spec.description)} |")
    lines += [
        "",
        "## How refusals read",
        "",
        "A refused write stores nothing at all. The tool result is an error whose text names "
        "each broken rule and how to fix it (the property to set, the allowed values, the "
        "relation that would close a cycle); its structured content carries the same findings. "
        "Fix the arguments as the message says and call again — do not retry unchanged. A "
        "write that holds a secret (an API key, a token) is refused on purpose: store a "
        "reference to where the secret lives instead.",
        "",
        "## The schema in brief",
        "",
        "Call `schema_list` for the schema as it is now (types and relations can be added).",
        "",
        "Types (required properties):",
        "",
    ]
    for name, type_spec in sorted(schema.types.items()):
        required = ", ".join(type_spec.required) or "-"
        enums = "; ".join(f"{k}: {'|'.join(v)}" for k, v in sorted(type_spec.enums.items()))
        lines.append(f"- `{name}`: {required}" + (f" ({enums})" if enums else ""))
    lines += ["", "Relations (from → to, cardinality):", ""]
    for name, rel in sorted(schema.relations.items()):
        flags = ", acyclic" if rel.acyclic else ""
        lines.append(
            f"- `{name}`: {', '.join(rel.from_types)} → {', '.join(rel.to_types)} "
            f"({rel.cardinality}{flags})"
        )
    return "\n".join(lines) + "\n"
