"""The model role policy: enrichment workers are named by role (``economy``, ``standard``)
and resolved to a concrete model id per backend — from the policy shipped in the package,
overridden by ``[models.<role>]`` in ontoloom.toml. Anything unknown fails closed."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ontoloom.errors import BadInput

__all__ = ["BACKENDS", "resolve_model"]

BACKENDS = ("claude", "codex")
_SHIPPED = Path(__file__).with_name("models.toml")


def _roles(overrides: dict[str, Any] | None) -> dict[str, dict[str, str]]:
    roles = {
        k: dict(v) for k, v in tomllib.loads(_SHIPPED.read_text(encoding="utf-8"))["roles"].items()
    }
    for role, backends in (overrides or {}).items():
        if not isinstance(backends, dict):
            raise BadInput(f"ontoloom.toml: [models.{role}] must map backends to model ids")
        roles.setdefault(role, {}).update({k: str(v) for k, v in backends.items()})
    return roles


def resolve_model(role: str, backend: str, overrides: dict[str, Any] | None = None) -> str:
    """The model id for ``role`` on ``backend``. :raises BadInput: when there is none."""
    roles = _roles(overrides)
    if role not in roles:
        raise BadInput(
            f"unknown model role {role!r}: known roles are {', '.join(sorted(roles))}; "
            "add [models.<role>] to ontoloom.toml to define one"
        )
    model = roles[role].get(backend)
    if not model:
        raise BadInput(
            f"no model for role {role!r} on backend {backend!r}: set [models.{role}] "
            f'{backend} = "<model id>" in ontoloom.toml (there is no default)'
        )
    return model
