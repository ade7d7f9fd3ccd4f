"""The example instance the viewer tests look at: examples/team built from its records, its
entities.json loaded, and one wikilink candidate typed into a pending proposal."""

from __future__ import annotations

import copy
import json
import random
import shutil
import struct
import zlib
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from ontoloom.cli import main
from ontoloom.resources import resource_dir

PENDING_SOURCE = "failure:2026-11-09-ansi-in-changelog"
PENDING_RECORD = "records/failures/2026-11-09-ansi-in-changelog.md"
PRIVATE_TITLE = "Payroll notes"  # docs/projects/billing/salaries.md, privacy: private


def run(root: Path, *args: str, ok: tuple[int, ...] = (0,)) -> str:
    result = CliRunner().invoke(main, ["--data-dir", str(root / ".ontoloom"), *args])
    assert result.exit_code in ok, result.output
    return result.stdout


def example_instance(root: Path) -> tuple[Path, str]:
    """Build the example at ``root``; (root, the pending proposal's id)."""
    shutil.copytree(
        resource_dir("examples") / "team", root, ignore=shutil.ignore_patterns(".ontoloom")
    )
    run(root, "init", str(root))
    from ontoloom.api import Graph
    from ontoloom.demo import load_entities

    with Graph.open(root / ".ontoloom", write=True) as g:
        load_entities(g, root / "entities.json")
    run(root, "rebuild", ok=(0, 1))  # 1: the example keeps a few unresolved links on purpose
    items = json.loads(run(root, "--json", "links"))
    candidate = next(i["id"] for i in items if i["source"] == PENDING_SOURCE)
    proposal = json.loads(run(root, "--json", "links", "type", candidate, "resolved-by"))
    return root, proposal["id"]


def png_colours(data: bytes, limit: int = 64) -> int:
    """How many distinct pixel colours an 8-bit RGB(A) PNG holds (counting stops at
    ``limit``): a blank screenshot has one or two."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    depth = colour_type = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, _, depth, colour_type = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert depth == 8 and colour_type in (2, 6), "an 8-bit RGB or RGBA PNG"
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev, seen, i = bytearray(stride), set(), 0
    while i < len(raw) and len(seen) < limit:
        kind, line = raw[i], bytearray(raw[i + 1 : i + 1 + stride])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        seen.update(bytes(line[x : x + 3]) for x in range(0, stride, bpp * 7))
        prev, i = line, i + 1 + stride
    return len(seen)


def scale(data: dict[str, Any], objects: int, relations: int, seed: int = 0) -> dict[str, Any]:
    """``data`` copied until it holds ``objects`` objects, then cross-copy relations added
    until it holds ``relations``; legend counts and meta follow."""
    copies = -(-objects // len(data["nodes"]))
    nodes: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for c in range(copies):

        def rename(node_id: str, c: int = c) -> str:
            return node_id if c == 0 else f"{node_id}~{c}"

        for n in data["nodes"]:
            m = copy.deepcopy(n)
            m["id"] = rename(n["id"])
            if not m.get("private"):
                m["label"] = f"{n['label']} ({c})" if c else n["label"]
            nodes.append(m)
        for link in data["links"]:
            m = copy.deepcopy(link)
            m["source"], m["target"] = rename(link["source"]), rename(link["target"])
            links.append(m)
    nodes = nodes[:objects]
    kept = {n["id"] for n in nodes}
    links = [lk for lk in links if lk["source"] in kept and lk["target"] in kept]
    rng = random.Random(seed)
    rels = [r for r in data["relations"]] or ["related-to"]
    ids = [n["id"] for n in nodes]
    while len(links) < relations:
        i = rng.randrange(len(ids))
        j = min(len(ids) - 1, max(0, i + rng.randint(-200, 200)))  # mostly near: clusters
        if i != j:
            links.append(
                {"source": ids[i], "target": ids[j], "rel": rng.choice(rels), "status": "confirmed"}
            )
    out = dict(data)
    counts: dict[str, int] = {}
    for n in nodes:
        key = "private" if n.get("private") else n["type"]
        counts[key] = counts.get(key, 0) + 1
    out["legend"] = [dict(t, count=counts.get(t["type"], 0)) for t in data["legend"]]
    out["nodes"], out["links"] = nodes, links
    out["meta"] = dict(
        data["meta"],
        nodes=len(nodes),
        links=len(links),
        unconfirmed=sum(1 for lk in links if lk["status"] == "unconfirmed"),
        private_hidden=counts.get("private", 0),
    )
    return out
