"""Plans as graph transformations: a list of operations (create with a local alias,
relate, update, delete, unrelate) validated as one delta — cycles and cardinality
included — and committed atomically, or refused whole, naming the failing step.

A plan file is YAML or JSON::

    steps:
      - op: create
        type: Task
        as: fix                      # a local alias, usable in later steps
        properties: {title: Fix the timeout, status: open}
      - op: relate
        from: fix
        rel: blocks
        to: task_deploy
      - {op: update, id: task_deploy, properties: {status: blocked}, unset: [priority]}
      - {op: unrelate, from: task_a, rel: blocks, to: task_b}
      - {op: delete, id: task_old}

A step may also name its operation as a key: ``{create: Task, as: fix, properties: …}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput, NotFound, ParseError, ValidationFailed
from ontoloom.findings import Finding
from ontoloom.terms import Quad

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = ["PlanResult", "apply_plan", "load_plan"]

OPS = ("create", "relate", "update", "delete", "unrelate")
_KEYS = {
    "create": {"type", "id", "properties", "as"},
    "update": {"id", "properties", "unset"},
    "delete": {"id"},
    "relate": {"from", "rel", "to"},
    "unrelate": {"from", "rel", "to"},
}


@dataclass
class PlanResult:
    applied: bool
    steps: int
    aliases: dict[str, str] = field(default_factory=dict)
    adds: list[Quad] = field(default_factory=list)
    removes: list[Quad] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    changes: list[dict[str, Any]] = field(default_factory=list)  # each step, resolved

    @property
    def valid(self) -> bool:
        return not self.findings

    def to_json(self, *, with_delta: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "applied": self.applied,
            "valid": self.valid,
            "steps": self.steps,
            "aliases": self.aliases,
            "delta": {"adds": len(self.adds), "removes": len(self.removes)},
            "changes": self.changes,
        }
        if with_delta:
            out["delta"] = {
                "adds": sorted(str(q) for q in self.adds),
                "removes": sorted(str(q) for q in self.removes),
            }
        if self.findings:
            from ontoloom.findings import refusal_json

            message = f"the plan would be refused: {len(self.findings)} rule(s) broken"
            out.update(refusal_json(self.findings, message))
        return out


def load_plan(path: Path | None, *, text: str | None = None) -> list[dict[str, Any]]:
    """Read a plan file (YAML or JSON), or ``text`` read from standard input (read as YAML,
    of which JSON is a subset). :raises BadInput: with file and line."""
    if text is None:
        assert path is not None
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"{path}: cannot read the plan ({exc})") from None
    label = str(path) if path is not None else "<stdin>"
    if path is not None and path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(exc.msg, file=label, line=exc.lineno, column=exc.colno) from None
    else:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import MarkedYAMLError

        try:
            data = YAML(typ="safe").load(text)
        except MarkedYAMLError as exc:
            mark = exc.problem_mark
            raise ParseError(
                str(exc.problem),
                file=label,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            ) from None
        except ValueError as exc:  # a date YAML reads as one that does not exist: 2026-02-30
            raise ParseError(str(exc), file=label, line=bad_date_line(text)) from None
    if data is None:
        raise BadInput(f"{label}: the plan is empty; write steps: [...]")
    return steps_of(data)


def bad_date_line(text: str) -> int | None:
    """The 1-based line of the first YAML date that is no date (``2026-02-30``), if any.

    >>> bad_date_line("a: 2026-02-28\\nb: 2026-02-30\\n")
    2
    """
    import datetime as dt
    import re

    for number, line in enumerate(text.splitlines(), start=1):
        for y, m, d in re.findall(r"(?<![\w-])(\d{4})-(\d{1,2})-(\d{1,2})(?![\w-])", line):
            try:
                dt.date(int(y), int(m), int(d))
            except ValueError:
                return number
    return None


def steps_of(data: Any) -> list[dict[str, Any]]:
    steps = data.get("steps") if isinstance(data, dict) else data
    if not isinstance(steps, list) or not steps:
        raise BadInput('a plan is a non-empty list of steps, or {"steps": [...]}')
    return [_normalise(i, step) for i, step in enumerate(steps, start=1)]


def _normalise(n: int, step: Any) -> dict[str, Any]:
    if not isinstance(step, dict):
        raise BadInput(f"step {n}: a step is a mapping, e.g. {{op: create, type: Task, ...}}")
    step = dict(step)
    if "op" not in step:
        keyed = [op for op in OPS if op in step]
        if len(keyed) != 1:
            raise BadInput(f"step {n}: say what to do with op: one of {', '.join(OPS)}")
        op = keyed[0]
        target = step.pop(op)
        step["op"] = op
        if op == "create":
            step.setdefault("type", target)
        elif op in ("update", "delete"):
            step.setdefault("id", target)
        elif isinstance(target, list) and len(target) == 3:
            step.update({"from": target[0], "rel": target[1], "to": target[2]})
    if step["op"] not in OPS:
        raise BadInput(f"step {n}: unknown op {step['op']!r}; use one of {', '.join(OPS)}")
    allowed = _KEYS[step["op"]]
    unknown = sorted(set(step) - allowed - {"op"})
    if unknown:
        raise BadInput(
            f"step {n}: unknown key {unknown[0]!r} for {step['op']}; "
            f"use {', '.join(sorted(allowed))}"
        )
    return step


def plan_digest(steps: list[dict[str, Any]]) -> str:
    """A digest of the plan's content (its normalised steps), from which its new ids come."""
    canonical = json.dumps(steps, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def plan_id(type_name: str, digest: str, step: int, attempt: int = 0) -> str:
    """The id a plan's step ``step`` creates: ``{type.lower()[:4]}_{8 hex}`` like any new
    id, but derived from the plan, so that a dry run shows the ids the real run assigns.

    >>> plan_id("Task", "ab" * 32, 1) == plan_id("Task", "ab" * 32, 1) != plan_id("Task", "ab" * 32, 2)
    True
    """
    seed = hashlib.sha256(f"{digest}\n{step}\n{attempt}".encode()).hexdigest()
    return f"{type_name.lower()[:4]}_{seed[:8]}"


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def apply_plan(graph: Session, steps: list[dict[str, Any]], *, dry_run: bool = False) -> PlanResult:
    """Stage every step, validate the whole delta, and commit it unless ``dry_run``.

    A create without an ``id`` gets one derived from the plan's content and the step
    (:func:`plan_id`), the first such id not yet taken: a dry run and the real run after it
    assign the same ids, and applying the same plan again makes new ones.

    :raises ValidationFailed: (not in a dry run) with each finding's step.
    :raises BadInput / NotFound: naming the step that could not be staged.
    """
    changes = graph.changes()
    digest = plan_digest(steps)
    described: list[dict[str, Any]] = []
    aliases: dict[str, str] = {}
    blame = _Blame()

    def ref(step: dict[str, Any], key: str, n: int) -> str:
        value = step.get(key)
        if not isinstance(value, str) or not value:
            raise BadInput(f"step {n}: {step['op']} needs {key!r}")
        return aliases.get(value, value)

    def named(step: dict[str, Any], key: str) -> str:
        """The id a step refers to, with the alias the plan used for it."""
        value = str(step.get(key))
        return f"{aliases[value]} ({value})" if value in aliases else value

    for n, step in enumerate(steps, start=1):
        op = step["op"]
        try:
            if op == "create":
                props = step.get("properties", {})
                if not isinstance(props, dict):
                    raise BadInput(f"step {n}: properties must be a mapping")
                type_name = str(step.get("type", ""))
                given = step.get("id")
                if given is None and type_name in graph.schema.types:
                    attempt = 0
                    given = plan_id(type_name, digest, n)
                    while changes.exists(given):
                        attempt += 1
                        given = plan_id(type_name, digest, n, attempt)
                entity_id = changes.create(type_name, props, given)
                alias = f" (as {step['as']})" if step.get("as") else ""
                if step.get("as"):
                    aliases[str(step["as"])] = entity_id
                blame.created(entity_id, props, n)
                values = ", ".join(f"{k} {_shown(v)}" for k, v in props.items())
                described.append(
                    {
                        "step": n,
                        "op": op,
                        "id": entity_id,
                        "type": type_name,
                        "text": f"create {type_name} {entity_id}{alias}"
                        + (f": {values}" if values else ""),
                    }
                )
            elif op == "update":
                entity_id = ref(step, "id", n)
                props = step.get("properties", {})
                unset = step.get("unset", [])
                changes.update(entity_id, props, unset)
                blame.set(entity_id, [*(props if isinstance(props, dict) else ()), *unset], n)
                parts = []
                if isinstance(props, dict) and props:
                    parts.append("set " + ", ".join(f"{k} = {_shown(v)}" for k, v in props.items()))
                if unset:
                    parts.append("unset " + ", ".join(map(str, unset)))
                described.append(
                    {
                        "step": n,
                        "op": op,
                        "id": entity_id,
                        "text": f"update {named(step, 'id')}"
                        + (": " + "; ".join(parts) if parts else ""),
                    }
                )
            elif op == "delete":
                entity_id = ref(step, "id", n)
                changes.delete(entity_id)
                blame.set(entity_id, (), n)
                described.append(
                    {
                        "step": n,
                        "op": op,
                        "id": entity_id,
                        "text": f"delete {named(step, 'id')} and every relation touching it",
                    }
                )
            else:
                a, rel, b = ref(step, "from", n), str(step.get("rel", "")), ref(step, "to", n)
                note = ""
                if op == "relate":
                    outcome = changes.relate(a, rel, b)
                    blame.added(a, rel, b, n)
                    if not outcome.created:
                        note = " (already related: no change)"
                    for old in outcome.replaced:
                        note += f" (replaces {old.from_id} {old.rel} {old.to_id})"
                else:
                    changes.unrelate(a, rel, b)
                blame.set(a, (), n)
                blame.set(b, (), n)
                described.append(
                    {
                        "step": n,
                        "op": op,
                        "from": a,
                        "rel": rel,
                        "to": b,
                        "text": f"{op} {named(step, 'from')} {rel} {named(step, 'to')}{note}",
                    }
                )
        except ValidationFailed as refused:
            raise ValidationFailed(
                [replace(f, step=n) for f in refused.findings],
                f"refused at step {n} ({op}); nothing was stored",
            ) from None
        except (BadInput, NotFound) as exc:
            message = (
                exc.message
                if exc.message.startswith("step ")
                else f"step {n} ({op}): {exc.message}"
            )
            raise type(exc)(message) from None

    findings = [blame(f) for f in graph.writes.check(changes.delta)]
    result = PlanResult(
        applied=False,
        steps=len(steps),
        aliases=aliases,
        adds=sorted(changes.delta.adds, key=str),
        removes=sorted(changes.delta.removes, key=str),
        findings=findings,
        changes=described,
    )
    if dry_run:
        return result
    if findings:
        raise ValidationFailed(
            findings, f"plan refused: {len(findings)} rule(s) broken; nothing was stored"
        )
    graph.commit(changes)
    result.applied = True
    return result


class _Blame:
    """Which step of a plan a finding comes from: the one that last set (or unset) the
    property at fault, added the relation at fault, or created the object lacking a value —
    not merely the last step that touched the object."""

    def __init__(self) -> None:
        self.touched: dict[str, int] = {}  # id → the last step touching it
        self.properties: dict[tuple[str, str], int] = {}  # (id, property) → the last set
        self.edges: dict[tuple[str, str, str], int] = {}  # relation → the step adding it
        self.creates: dict[str, int] = {}

    def created(self, entity_id: str, props: dict[str, Any], step: int) -> None:
        self.creates[entity_id] = step
        self.set(entity_id, props, step)

    def set(self, entity_id: str, names: Iterable[Any], step: int) -> None:
        self.touched[entity_id] = step
        for name in names:
            self.properties[(entity_id, str(name))] = step

    def added(self, a: str, rel: str, b: str, step: int) -> None:
        self.edges[(a, rel, b)] = step

    def __call__(self, f: Finding) -> Finding:
        path = f.path or ""
        if f.cycle:
            steps = [
                self.edges[(a, path, b)] for a, b in pairwise(f.cycle) if (a, path, b) in self.edges
            ]
            if steps:
                return replace(f, step=max(steps))
        value = None if f.value is None else str(f.value)
        found = (
            self.properties.get((f.focus, path))
            or self.edges.get((f.focus, path, value or ""))
            or self.edges.get((value or "", path, f.focus))
            or max(
                (n for (a, rel, _), n in self.edges.items() if (a, rel) == (f.focus, path)),
                default=None,
            )
            or self.creates.get(f.focus)
            or self.touched.get(f.focus)
            or (self.touched.get(value) if value else None)
        )
        return replace(f, step=found)
