""" "Did you mean": the known names closest to a name that is not known (standard library
``difflib``), for every message that refuses a type, a relation, an id or a command.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]

CUTOFF = 0.6  # difflib's own default: a typo or two in a short name


def did_you_mean(name: str, known: Iterable[str], *, cutoff: float = CUTOFF, n: int = 3) -> str:
    """`` (did you mean 'X'?)`` naming up to ``n`` of ``known`` closest to ``name``, best
    first (case counts for nothing), ready to follow the name in a message; ``""`` when none
    is close. Only known names are quoted: the text given is never printed back here.

    >>> did_you_mean("Tsk", ["Task", "Thing", "Person"])
    " (did you mean 'Task'?)"
    >>> did_you_mean("task", ["Task"])
    " (did you mean 'Task'?)"
    >>> did_you_mean("blocx", ["blocks", "block_of", "has_owner"])
    " (did you mean 'blocks' or 'block_of'?)"
    >>> did_you_mean("xyzzy", ["Task", "Person"])
    ''
    """
    by_folded: dict[str, str] = {}
    for candidate in known:
        by_folded.setdefault(candidate.casefold(), candidate)
    found = difflib.get_close_matches(name.casefold(), by_folded, n=n, cutoff=cutoff)
    names = [repr(by_folded[f]) for f in found if by_folded[f] != name]
    if not names:
        return ""
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f" (did you mean {listed}?)"
