"""Write the two sh:select queries of ol:NoSecrets into shapes/core.ttl, as
ontoloom.secret_text.no_secrets_selects() generates them from its tables, and print the
digests into NO_SECRETS_JUDGES. Run after editing those tables:

    .venv/bin/python scripts/write_secret_rule.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ontoloom.secret_text import no_secrets_selects
from ontoloom.shacl.native import digest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "shapes" / "core.ttl"
JUDGES = ROOT / "src" / "ontoloom" / "secret_text.py"


def turtle_long_string(text: str) -> str:
    """``text`` as the body of a Turtle \"\"\"…\"\"\" string: ASCII, every quote escaped."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(
        c if c < "\x80" else (f"\\u{ord(c):04X}" if ord(c) < 0x10000 else f"\\U{ord(c):08X}")
        for c in out
    )


def main() -> int:
    text = CORE.read_text(encoding="utf-8")
    start = text.index("ol:NoSecrets a sh:NodeShape")
    end = text.index("\n\n", start)
    rule = text[start:end]
    blocks = list(re.finditer(r'sh:select """(.*?)"""', rule, re.S))
    if len(blocks) != 2:
        print("expected two sh:select in ol:NoSecrets", file=sys.stderr)
        return 2
    for block, query in reversed(list(zip(blocks, no_secrets_selects(), strict=True))):
        rule = rule[: block.start(1)] + turtle_long_string(query) + rule[block.end(1) :]
    CORE.write_text(text[:start] + rule + text[end:], encoding="utf-8")
    source = JUDGES.read_text(encoding="utf-8")
    for query, judge in zip(no_secrets_selects(), ("secret_property", "secret_value"), strict=True):
        source = re.sub(f'"[0-9a-f]{{64}}": {judge},', f'"{digest(query)}": {judge},', source)
        print(digest(query), judge)
    JUDGES.write_text(source, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
