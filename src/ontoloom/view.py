"""``ontoloom view``: the graph as one self-contained HTML file (and the pages of ``serve --ui``).

The page is drawn by force-graph (2D canvas, d3-force) or, with ``--3d``, by ontoloom's own
WebGL2 drawing (``viewer/drawing3d.js``: a few draw calls whatever the size) over d3-force-3d
run in a Web Worker; the libraries are vendored in ``viewer/vendor/`` by
``scripts/refresh-viewer-assets.sh`` and inlined
into the file, so a file opens offline and needs nothing but a browser. Both drawings share
one page script (``view.js``): search, filters, details and the data are the same in each. :func:`view_data` is the one place that decides what a page may
show: objects of the chosen types, their relations with evidence, pending proposals as
unconfirmed links, and private objects reduced to the word "private" unless asked otherwise.
"""

from __future__ import annotations

import colorsys
import datetime as dt
import json
from collections import Counter
from importlib import resources
from typing import TYPE_CHECKING, Any

from ontoloom.errors import BadInput
from ontoloom.model import vocab_iri, vocab_name
from ontoloom.terms import NamedNode
from ontoloom.vocab import OL, RDF, RDF_TYPE

if TYPE_CHECKING:
    from ontoloom.session import Session

__all__ = [
    "BACKGROUND",
    "CSP",
    "MODES",
    "PALETTE",
    "UI_COLOURS",
    "contrast",
    "render_page",
    "type_colours",
    "view_data",
]

# Colours: every one is text-legible (WCAG contrast ≥ 4.5:1) on the page background, so a
# legend entry, a label or a swatch drawn in it is readable; tests/test_view.py checks them.
BACKGROUND = "#ffffff"
PALETTE = (
    "#0b5cad",  # blue
    "#b3261e",  # red
    "#1d6f35",  # green
    "#8a4b00",  # brown
    "#6b3fa0",  # purple
    "#00697a",  # teal
    "#a3167a",  # magenta
    "#5a6200",  # olive
    "#3d4ea8",  # indigo
    "#9c3a12",  # rust
    "#2f6b5e",  # pine
    "#7a3b5c",  # plum
)
UI_COLOURS = {
    "background": BACKGROUND,
    "text": "#1b1b1f",
    "muted": "#52525b",
    "panel": "#f4f4f5",
    "border": "#71717a",
    "accent": "#0b5cad",
    "focus": "#b3261e",
    "edge": "#6b6b75",
    "unconfirmed": "#a3167a",
    "private": "#52525b",
    "error": "#b3261e",
    "ok": "#1d6f35",
}
MAX_TEXT = 600  # longer property values are cut, saying how much was left out

_VIEWER = "ontoloom.viewer"
# What a page may do: run its own inline scripts and styles, show data:/blob: images, start a
# worker from a blob: it made itself (the 3D layout, from the page's own inline text) and call
# its own server (the live pages); nothing else, no eval.
CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; worker-src blob:; connect-src 'self'"
)


# -- colours ------------------------------------------------------------------------------------
def _luminance(colour: str) -> float:
    channels = [int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    """The WCAG 2 contrast ratio of two ``#rrggbb`` colours.

    >>> round(contrast("#000000", "#ffffff"), 1), round(contrast("#767676", "#ffffff"), 2)
    (21.0, 4.54)
    """
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def type_colours(names: list[str]) -> dict[str, str]:
    """A colour per type name (sorted): the palette first, then further hues darkened until
    they reach 4.5:1 on the page and panel backgrounds, so any number of types gets legible
    colours."""
    out: dict[str, str] = {}
    for i, name in enumerate(sorted(names)):
        if i < len(PALETTE):
            out[name] = PALETTE[i]
            continue
        hue = (i * 0.381966) % 1.0  # golden-angle steps: neighbours differ in hue
        lightness = 0.45
        while True:
            r, g, b = colorsys.hls_to_rgb(hue, lightness, 0.75)
            colour = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
            legible = min(contrast(colour, BACKGROUND), contrast(colour, UI_COLOURS["panel"]))
            if legible >= 4.5 or lightness <= 0.05:
                break
            lightness -= 0.03
        out[name] = colour
    return out


# -- the data a page draws ----------------------------------------------------------------------
def _cut(value: Any) -> Any:
    if isinstance(value, list):
        return [_cut(v) for v in value]
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return value[:MAX_TEXT] + f"… ({len(value) - MAX_TEXT} more characters)"
    return value


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [str(v) for v in items]


def _evidence(graph: Session) -> dict[tuple[str, str, str], dict[str, Any]]:
    """The record each trusted relation was read from: (from, rel, to) → path, line, quote."""
    query = (
        f"SELECT ?s ?p ?o ?source ?line ?quote WHERE {{ ?ev {RDF_TYPE} <{RDF}Statement> ; "
        f"<{RDF}subject> ?s ; <{RDF}predicate> ?p ; <{RDF}object> ?o ; "
        f"{vocab_iri('source')} ?source . OPTIONAL {{ ?ev {vocab_iri('line')} ?line }} "
        f"OPTIONAL {{ ?ev {vocab_iri('quote')} ?quote }} }} ORDER BY ?source ?line"
    )
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in graph.backend.select(query):
        if not (graph.ids.is_instance(r["s"]) and graph.ids.is_instance(r["o"])):
            continue
        if not isinstance(r["p"], NamedNode):
            continue
        key = (graph.ids.id_of(r["s"]), r["p"].value, graph.ids.id_of(r["o"]))
        found.setdefault(
            key,
            {
                "source": r["source"].value,
                "line": int(r["line"].value) if r["line"] is not None else None,
                "quote": r["quote"].value if r["quote"] is not None else None,
            },
        )
    return found


def view_data(
    graph: Session,
    *,
    focus: str | None = None,
    depth: int = 1,
    types: tuple[str, ...] | list[str] = (),
    include_private: bool = False,
) -> dict[str, Any]:
    """What a page shows, as JSON: nodes, links (trusted and unconfirmed), the legend.

    ``types`` keeps only objects of these types (and the links among them); ``focus`` and
    ``depth`` say what the page shows first — the page holds every object that passes the
    filter, so expanding a node works offline. A private object (privacy class ``private``,
    an unrecognised value, or a failure class with a private occurrence) keeps only its links
    and is shown as "private": no id, type, title, properties or evidence, unless
    ``include_private``.

    :raises BadInput: an unknown type, or a focus outside what is shown.
    :raises NotFound: a focus that names no object.
    """
    from ontoloom.actions import resolve_object
    from ontoloom.egress import Gate
    from ontoloom.proposals.store import list_proposals

    unknown = sorted(set(types) - set(graph.schema.types))
    if unknown:
        raise BadInput(
            f"--type {unknown[0]}: {graph.schema.unknown_type(unknown[0])} "
            "(`ontoloom schema list` shows them)"
        )
    wanted: set[str] = set()  # a type stands for its subtypes too, as in `list --type`
    for name in types:
        below = graph.schema.hierarchy.subclasses(graph.schema.types[name].iri)
        wanted |= {n for n, spec in graph.schema.types.items() if spec.iri in below}
    entities = [e for e in graph.entities() if not types or e.type in wanted]
    by_id = {e.id: e for e in entities}
    focus_id = None
    if focus is not None:
        focus_id = resolve_object(graph, focus)
        if focus_id not in by_id:
            raise BadInput(
                f"--focus {focus}: {focus_id} is not among the objects shown (its type is "
                "left out by --type); add its type or drop --focus"
            )
    gate = Gate.from_graph(graph)

    def private(oid: str) -> bool:
        known = gate.objects.get(oid)
        return known is not None and known.privacy.cls == "private"

    hidden: dict[str, str] = {}  # a private object's id → the id the page knows it by
    if not include_private:
        for n, oid in enumerate(sorted(i for i in by_id if private(i)), 1):
            hidden[oid] = f"private-{n}"
    if focus_id is not None and focus_id in hidden:
        raise BadInput(
            f"--focus {focus}: the object is private, so the view shows it only as "
            '"private"; add --include-private to centre on it'
        )

    def node_id(oid: str) -> str:
        return hidden.get(oid, oid)

    nodes: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    for e in sorted(entities, key=lambda e: e.id):
        if e.id in hidden:
            nodes.append({"id": hidden[e.id], "private": True, "type": None, "label": "private"})
            counts["private"] += 1
            continue
        known = gate.objects.get(e.id)
        props = {k: _cut(v) for k, v in sorted(e.properties.items()) if k != "privacy"}
        nodes.append(
            {
                "id": e.id,
                "type": e.type,
                "label": e.label,
                "aliases": _strings(e.properties.get("aliases")),
                "privacy": known.privacy.cls if known is not None else None,
                "source": e.properties.get("source"),
                "props": props,
            }
        )
        counts[e.type] += 1

    evidence = _evidence(graph)
    links: list[dict[str, Any]] = []
    rel_names: set[str] = set()
    # One pass over the trusted graph: per-object relation lookups cost ~1 ms each at 10k.
    iri_ids = {graph.ids.iri(oid).value: oid for oid in by_id}
    query = (
        f"SELECT DISTINCT ?s ?p ?o WHERE {{ ?s ?p ?o FILTER(isIRI(?o) && ?p != {RDF_TYPE} "
        f"&& STRSTARTS(STR(?p), {json.dumps(OL)})) }}"
    )
    found = set()
    for row in graph.backend.select(query):
        from_id, to_id = iri_ids.get(row["s"].value), iri_ids.get(row["o"].value)
        if from_id is not None and to_id is not None:
            found.add((from_id, vocab_name(row["p"]), to_id, row["p"].value))
    for from_id, rel, to_id, rel_iri in sorted(found):
        link: dict[str, Any] = {
            "source": node_id(from_id),
            "target": node_id(to_id),
            "rel": rel,
            "status": "confirmed",
        }
        if from_id not in hidden and to_id not in hidden:
            link["evidence"] = evidence.get((from_id, rel_iri, to_id))
        links.append(link)
        rel_names.add(rel)
    for p in list_proposals(graph, status="pending"):
        if p.source not in by_id or p.target not in by_id:
            continue
        link = {
            "source": node_id(p.source),
            "target": node_id(p.target),
            "rel": p.rel,
            "status": "unconfirmed",
            "proposal": p.id,
            "tier": p.tier,
            "origin": p.origin,
        }
        if p.source not in hidden and p.target not in hidden:
            ev = p.evidence
            link["evidence"] = {
                "source": ev.get("source") or ev.get("transcript"),
                "line": ev.get("line"),
                "quote": ev.get("quote"),
            }
        links.append(link)
        rel_names.add(p.rel)

    colours = type_colours([t for t in counts if t != "private"])
    legend = [{"type": t, "colour": c, "count": counts[t]} for t, c in colours.items()]
    if counts["private"]:
        legend.append(
            {"type": "private", "colour": UI_COLOURS["private"], "count": counts["private"]}
        )
    return {
        "meta": {
            "generated": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            "focus": focus_id,
            "depth": depth if focus_id is not None else None,
            "types": sorted(types),
            "include_private": include_private,
            "private_hidden": len(hidden),
            "nodes": len(nodes),
            "links": len(links),
            "unconfirmed": sum(1 for link in links if link["status"] == "unconfirmed"),
        },
        "legend": legend,
        "relations": sorted(rel_names),
        "nodes": nodes,
        "links": links,
    }


# -- pages --------------------------------------------------------------------------------------
def _asset(name: str) -> str:
    return (resources.files(_VIEWER) / name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``</script>``, no ``<!--``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _css_variables() -> str:
    return "".join(f"--{k}:{v};" for k, v in UI_COLOURS.items())


MODES = ("2d", "3d")
_LIBRARY_2D = "vendor/force-graph.min.js"
# The 3D layout's code, in dependency order: d3-force-3d and the d3 modules it needs, then
# ontoloom's driver of it. It runs in a Web Worker made from the page's copy of this text (a
# `text/plain` script) and, where no worker can be made, on the page itself.
_LAYOUT_3D = (
    "vendor/d3-dispatch.min.js",
    "vendor/d3-timer.min.js",
    "vendor/d3-quadtree.min.js",
    "vendor/d3-binarytree.min.js",
    "vendor/d3-octree.min.js",
    "vendor/d3-force-3d.min.js",
    "layout.js",
)
_DRAWING_3D = "drawing3d.js"


def render_page(kind: str, data: dict[str, Any] | None = None, *, mode: str = "2d") -> str:
    """A page: ``view`` (``data`` inlined, or fetched live when None) or ``review`` (live).

    ``mode`` is the drawing a view opens in: ``2d`` (force-graph on a canvas) or ``3d``
    (WebGL2, the layout by d3-force-3d in a worker). A file written in 3D and a live page carry
    both drawings, so the page's 2D/3D switch works; a 2D file carries only the 2D one (about
    90 kB less) and its switch says how to get the other.
    """
    if mode not in MODES:
        raise BadInput(f"the view's drawing is one of {', '.join(MODES)}, not {mode!r}")
    title = {"view": "ontoloom — graph view", "review": "ontoloom — review"}[kind]
    scripts = []
    layout = ""
    if kind == "view":
        scripts.append(_asset(_LIBRARY_2D))
        if mode == "3d" or data is None:
            source = "\n".join(_asset(name) for name in _LAYOUT_3D)
            layout = f'<script id="ontoloom-layout-source" type="text/plain">{source}</script>\n'
            scripts += [source, _asset(_DRAWING_3D)]
    scripts.append(_asset("common.js"))
    scripts.append(_asset(f"{kind}.js"))
    body = _asset(f"{kind}.html")
    payload = _script_json(data) if data is not None else "null"
    licence = _asset("vendor/ASSETS.json")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # Nothing may load from anywhere: every script and style is inline, images are data:.
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{title}</title>"
        f"<style>:root{{{_css_variables()}}}\n{_asset('viewer.css')}</style></head>\n"
        f'<body data-page="{kind}" data-live="{"false" if data is not None else "true"}" '
        f'data-mode="{mode}">\n'
        f"{body}\n"
        f'<script id="ontoloom-data" type="application/json">{payload}</script>\n'
        "<!-- force-graph (MIT) and d3-force-3d (MIT) with the d3 modules it needs (ISC, MIT); "
        "licences: ontoloom/viewer/vendor/ -->\n"
        f'<script id="ontoloom-assets" type="application/json">{_script_json(json.loads(licence))}</script>\n'
        + layout
        + "".join(f"<script>{s}</script>\n" for s in scripts)
        + "</body></html>\n"
    )
