"""A fixture instance covering every row and rule of RECORDS.md, written fresh per test
(symlinks and a non-UTF-8 file are easier made than committed)."""

from __future__ import annotations

import os
from pathlib import Path

TOML = """\
[records]
failures = "records/failures"
decisions = "records/decisions"
memory = "records/memory"
runbooks = "records/runbooks"

[[documents]]
root = "docs/a"
privacy = "public"

[[documents]]
root = "docs/b"
privacy = "Classified"
"""

FILES = {
    "records/failures/2026-11-02-ctrl-bytes.md": """\
---
class: literal-control-bytes
date: 2026-11-02
title: Control bytes broke the commit message
covered-by: [no-raw-control-bytes]
resolved-by: [action:strip-control-bytes]
class-aliases: [escape bytes in output]
covered_by: kept as a plain property
---
The hook wrote a literal \\x1b into COMMIT_EDITMSG. See [[no-raw-control-bytes]].
""",
    "records/failures/2026-11-09-again.md": (
        "---\r\nclass: Literal Control Bytes\r\ndate: 2026-11-09\r\ntitle: ANSI codes in the changelog\r\n"
        "covered-by: [Never write raw control bytes]\r\nprivacy: PRIVATE\r\n---\r\n"
        "Coloured output went straight into CHANGELOG.md. Fixed with [[Strip control bytes]].\r\n"
    ),
    "records/failures/bad-yaml.md": "---\nclass: x\ncovered-by: [unclosed\n---\nbody\n",
    "records/failures/two-blocks.md": "---\nclass: two-blocks\n---\n\n---\nsecond: block\n---\nbody text\n",
    "records/failures/no-class.md": "---\ntitle: Something went wrong\n---\nno class given\n",
    "records/memory/no-raw-control-bytes.md": """\
---
title: Never write raw control bytes
aliases: [no control bytes]
relations:
  - enforced-by: action:strip-control-bytes
  - sibling-of: [rule:escape-terminal-output]
---
Escape bytes below 0x20 before writing text files.
""",
    "records/memory/escape-terminal-output.md": """\
---
title: Escape terminal output
relations:
  - sibling-of: no-raw-control-bytes
---
Terminal output is escaped before it is logged.
""",
    "records/memory/broken-links.md": """\
---
title: A rule with broken links
privacy: Top-Secret
relations:
  - applies: decision:2026-10-01-use-sagas
  - inspires: rule:no-raw-control-bytes
  - relates-to: nothing-like-this-exists
  - enforced-by: [strip-control-bytes]
---
Body.
""",
    "records/memory/custom.md": '---\nid: "rule:Café Menü"\ntitle: Custom id\n---\nx\n',
    "records/memory/wrong-prefix.md": "---\nid: action:not-a-rule\n---\nx\n",
    "records/runbooks/strip-control-bytes.md": "---\ntitle: Strip control bytes\n---\nRun the clean-output helper.\n",
    "records/decisions/2026-10-01-use-sagas.md": """\
---
title: Use sagas for payments
date: 2026-10-01
relations:
  applies: [rule:no-raw-control-bytes]
  builds-on: decision:2026-10-03-b
---
A saga keeps the ledger consistent. See [[Event sourcing for ledger]].
""",
    "records/decisions/2026-10-03-b.md": """\
---
title: Decision B
relations:
  builds-on: [use sagas for payments, decision:2026-09-15-event-sourcing-for-ledger]
---
B.
""",
    "records/decisions/decision-log.md": """\
---
privacy: private
---
# Decision log

## 2026-09-15 Event sourcing for ledger

Every change is an event. Reviewed with [[Strip control bytes]].

## 2026-09-20 Keep one region

We stay in one region for now.
""",
    "docs/a/billing/tax summary.md": "---\ntitle: Tax summary\n---\nVAT per line, see [[Keep one region]].\n",
    "docs/a/secret.md": "---\ntitle: Payroll\nprivacy: private\n---\nSalaries.\n",
    "docs/a/plain.md": "# A plain note\n\nNo frontmatter at all.\n",
    "docs/b/billing/tax-summary.md": "---\ntitle: Another tax summary\n---\nDuplicate id.\n",
    "docs/b/other.md": "---\ntitle: Other doc\n---\nfrom root b, see [[Nowhere Page]].\n",
}


def build(root: Path, extra: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "ontoloom.toml").write_text(TOML)
    for rel, text in {**FILES, **(extra or {})}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    (root / "records/failures/latin1.md").write_bytes(b"---\nclass: x\n---\nfa\xe7ade\n")
    (root / "docs/a/image.md").write_bytes(b"\x89PNG\x00\x00binary")
    os.symlink(root / "docs/a", root / "docs/a/loop")
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "leak.md").write_text("---\ntitle: Leak\n---\nmust not be read\n")
    os.symlink(outside, root / "docs/a/escape")
    os.symlink(outside / "leak.md", root / "docs/a/leak.md")
    return root


# Private records beside public ones that name, link to or quote them: what the egress gate
# (enrich --emit) must keep in. Built with build(root, extra=PRIVATE_FILES).
PRIVATE_FILES = {
    "records/memory/vault-rotation.md": """\
---
title: Rotate the vault keys monthly
aliases: [vault rotation, quarterly key ceremony]
privacy: private
---
The ceremony happens in room 4B with two officers present. Keys are split three ways
between the officers and the escrow box.
""",
    "records/runbooks/unlock-escrow.md": """\
---
title: Unlock the escrow box
privacy: " Private "
---
Dial 31-07-88 on the escrow box, then turn the brass handle twice.
""",
    "records/decisions/2026-10-20-hire-auditor.md": """\
---
title: Hire an external auditor
aliases: [auditor hiring]
privacy: secret
relations:
  applies: [rule:vault-rotation]
---
The auditor from Halden & Voss reviews the ceremony each spring.
""",
    "records/memory/share-release-notes.md": """\
---
title: Share release notes
privacy: public
relations:
  relates-to: rule:vault-rotation
---
Release notes are public. Before a release, hold the [[quarterly key ceremony]].
""",
    "records/memory/quote-the-ceremony.md": """\
---
title: Quote the ceremony rule
---
As written elsewhere: the ceremony happens in room 4B with two officers present.
""",
    "records/memory/mentions-auditor.md": """\
---
title: Mentions the auditor decision
---
This follows from Hire an external auditor, which stays private.
""",
    "records/memory/names-by-id.md": """\
---
title: Names the runbook by id
---
See action:unlock-escrow for the steps.
""",
    "records/memory/plain-public.md": """\
---
title: Plain public rule
privacy: PUBLIC
---
Nothing here points anywhere. Link to [[Share release notes]] for context.
""",
}
