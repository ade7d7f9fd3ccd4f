"""Every error ontoloom raises names its kind: no JSON says ``"error": "error"``."""

from __future__ import annotations

import ast
from pathlib import Path

from ontoloom import errors

SRC = Path(errors.__file__).parent


def test_every_kind_has_an_outcome_and_the_base_is_no_kind_of_its_own() -> None:
    kinds = {
        cls.kind
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.OntoloomError)
    }
    assert kinds <= set(errors.OUTCOMES)
    assert "error" not in errors.OUTCOMES
    assert errors.OntoloomError("x").to_json()["error"] == "internal"


def test_nothing_raises_the_bare_base_class() -> None:
    """A bare OntoloomError would say only "internal": each raise picks its kind."""
    bare = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                func = node.exc.func
                if isinstance(func, ast.Name) and func.id == "OntoloomError":
                    bare.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert bare == []


def test_a_read_only_write_and_a_storage_failure_name_their_kinds() -> None:
    assert errors.ReadOnly("x").to_json()["error"] == "read_only"
    assert errors.StorageError("x").http_status == 500
    assert errors.revive({"error": "read_only", "message": "m"}).kind == "read_only"
