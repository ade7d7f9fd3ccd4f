"""`ontoloom view` and `serve --ui` without a browser (issue 17): what a page may hold, the
command's refusals, the palette's contrast, the vendored library's pin, the UI's API.
The browser tests are in test_view_browser.py."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient
from tests.view_instance import PENDING_RECORD, PENDING_SOURCE, PRIVATE_TITLE, example_instance

from ontoloom.cli import main
from ontoloom.serve import build_app
from ontoloom.view import BACKGROUND, PALETTE, UI_COLOURS, contrast, type_colours


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return example_instance(tmp_path_factory.mktemp("view") / "team")


def view(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--data-dir", str(root / ".ontoloom"), "view", *args])
    return result.exit_code, result.stdout, result.stderr


def data(root: Path, *args: str) -> dict:
    code, out, err = view(root, "--format", "json", "-o", "-", *args)
    assert code == 0, err
    return json.loads(out)


# -- contrast -------------------------------------------------------------------------------
def test_every_colour_a_page_draws_text_in_reaches_4_5_to_1() -> None:
    text_colours = [*PALETTE, *type_colours([f"T{i}" for i in range(40)]).values()]
    text_colours += [
        UI_COLOURS[k]
        for k in (
            "text",
            "muted",
            "accent",
            "focus",
            "unconfirmed",
            "private",
            "error",
            "ok",
            "edge",
        )
    ]
    for colour in text_colours:
        for background in (BACKGROUND, UI_COLOURS["panel"]):
            assert contrast(colour, background) >= 4.5, (colour, background)
    # A primary button: background-coloured text on the accent.
    assert contrast(UI_COLOURS["background"], UI_COLOURS["accent"]) >= 4.5
    assert len(set(type_colours([f"T{i}" for i in range(40)]).values())) == 40


# -- the file -------------------------------------------------------------------------------
VENDOR = resources.files("ontoloom.viewer") / "vendor"
PINS = json.loads((VENDOR / "ASSETS.json").read_text())
# The one policy every page carries, read here from the spec the pages were built to (issues
# 17 and 37): inline scripts and styles, data:/blob: images, a worker from a blob: the page
# made (the 3D layout), calls to its own server; no eval.
EXPECTED_CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; worker-src blob:; connect-src 'self'"
)
# The 3D drawing's layout: d3-force-3d and the d3 modules it needs, in dependency order.
LAYOUT_3D = ("d3-dispatch", "d3-timer", "d3-quadtree", "d3-binarytree", "d3-octree", "d3-force-3d")


def library(package: str) -> str:
    pin = next(a for a in PINS["assets"] if a["package"] == package)
    return (VENDOR / pin["file"]).read_text(encoding="utf-8")


def csp_of(html: str) -> str:
    found = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    assert len(found) == 1, found
    return found[0]


def test_every_vendored_library_is_pinned_by_version_hash_and_licence() -> None:
    script = (Path(__file__).parent.parent / "scripts" / "refresh-viewer-assets.sh").read_text()
    pinned = dict(re.findall(r'^  "([\w-]+)@([\d.]+)\s', script, re.M))
    assert pinned == {
        "force-graph": "1.52.0",
        "d3-dispatch": "3.0.2",
        "d3-timer": "3.0.2",
        "d3-quadtree": "3.0.2",
        "d3-binarytree": "1.0.2",
        "d3-octree": "1.1.0",
        "d3-force-3d": "3.0.8",
    }
    assert {a["package"]: a["version"] for a in PINS["assets"]} == pinned
    licences = {
        "MIT": "MIT License",
        "ISC": "Permission to use, copy, modify, and/or distribute this software for any purpose",
    }
    for pin in PINS["assets"]:
        data = (VENDOR / pin["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == pin["sha256"], pin["file"]
        assert licences[pin["license"]] in (VENDOR / pin["license_file"]).read_text()
        head = data[:200].decode()
        assert pin["package"] in head and pin["version"] in head, pin["file"]
    bundled = (VENDOR / "THIRD_PARTY_LICENSES.txt").read_text()
    assert "kapsule@" in bundled and "d3-zoom@" in bundled  # what force-graph's build bundles
    for package in LAYOUT_3D:  # each 3D layout file is its package alone, and says so
        assert f"{package}.min.js is {package}@{pinned[package]} alone" in bundled
    # d3-force-3d's UMD file takes its dependencies from the global d3, not from a bundle
    assert 'require("d3-octree")' in library("d3-force-3d")


def test_the_file_is_self_contained_and_pins_its_library(
    example: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = example
    out = tmp_path / "graph.html"
    code, stdout, _ = view(root, "-o", str(out))
    assert code == 0 and "wrote" in stdout
    html = out.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=|<link|@import|url\(", html)
    assert csp_of(html) == EXPECTED_CSP  # nothing may load, even if something tried
    assert library("force-graph") in html and 'data-mode="2d"' in html
    # A 2D file leaves the 3D drawing and its layout out: its switch says how to get them.
    assert library("d3-force-3d") not in html and "function ontoloomDrawing3D" not in html


def test_view_3d_writes_both_drawings_offline_under_the_same_policy(
    example: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = example
    out = tmp_path / "graph3d.html"
    code, stdout, _ = view(root, "--3d", "-o", str(out), "--json")
    assert code == 0, stdout
    assert json.loads(stdout)["drawing"] == "3d"
    html = out.read_text(encoding="utf-8")
    assert csp_of(html) == EXPECTED_CSP and "unsafe-eval" not in html[:2000]
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|@import", html)
    assert library("force-graph") in html and "function ontoloomDrawing3D" in html
    assert 'data-mode="3d"' in html
    # The layout's code twice: run on the page (where no worker can be made) and as the
    # text the page makes its worker from, in dependency order, one element that stays whole.
    source = re.search(
        r'<script id="ontoloom-layout-source" type="text/plain">(.*?)</script>', html, re.S
    )
    assert source is not None
    at = [source.group(1).index(library(p)) for p in LAYOUT_3D]
    assert at == sorted(at) and "function ontoloomLayout" in source.group(1)
    assert html.count(library("d3-force-3d")) == 2
    # The same data as the 2D file and as --format json: one data path for both drawings.
    payload = re.search(r'<script id="ontoloom-data" type="application/json">(.*?)</script>', html)
    assert payload is not None
    drawn = json.loads(payload.group(1))
    plain = data(root)
    for key in ("nodes", "links", "legend", "relations"):
        assert drawn[key] == plain[key], key
    assert drawn["meta"]["unconfirmed"] == 1 and drawn["meta"]["private_hidden"] == 1
    assert PRIVATE_TITLE not in html


def test_view_3d_with_json_is_refused(example: tuple[Path, str]) -> None:
    code, out, err = view(example[0], "--3d", "--format", "json", "-o", "-")
    assert code == 2 and out == ""
    assert "--3d" in err and "--format json" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (["-o", "g.txt"], "g.txt"),
        (["-o", "graph"], "graph"),
        (["--format", "json", "-o", "g.html"], "g.html"),
    ],
)
def test_an_output_name_that_says_another_format_is_refused(
    example: tuple[Path, str], tmp_path: Path, args: list[str], name: str
) -> None:
    code, out, err = view(example[0], *args)
    assert code == 2, out + err
    assert name in err and (".json" if "json" in args else ".html") in err
    assert not (tmp_path / name).exists()


def test_the_output_name_follows_the_format(example: tuple[Path, str], tmp_path: Path) -> None:
    assert view(example[0], "-o", str(tmp_path / "G.HTM"))[0] == 0
    assert view(example[0], "--format", "json")[0] == 0  # by default ontoloom-view.json, here
    assert json.loads((tmp_path / "ontoloom-view.json").read_text())["nodes"]
    assert not (tmp_path / "ontoloom-view.html").exists()


def test_a_private_object_is_only_private_unless_asked(
    example: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = example
    full = data(root, "--include-private")
    private = [n for n in full["nodes"] if n.get("privacy") == "private"]
    assert [n["label"] for n in private] == [PRIVATE_TITLE]
    secret = private[0]
    out = tmp_path / "graph.html"
    assert view(root, "-o", str(out))[0] == 0
    html = out.read_text(encoding="utf-8")
    for text in (secret["id"], PRIVATE_TITLE, secret["source"], "Salary bands"):
        assert text not in html
    shown = data(root)
    stand_in = [n for n in shown["nodes"] if n.get("private")]
    assert stand_in == [{"id": "private-1", "private": True, "type": None, "label": "private"}]
    assert shown["meta"]["private_hidden"] == 1
    assert {"type": "private", "colour": UI_COLOURS["private"], "count": 1} in shown["legend"]


def test_a_pending_proposal_is_an_unconfirmed_link_with_its_evidence(
    example: tuple[Path, str],
) -> None:
    root, pid = example
    links = [link for link in data(root)["links"] if link["status"] == "unconfirmed"]
    assert links == [
        {
            "source": PENDING_SOURCE,
            "target": "action:strip-control-bytes",
            "rel": "resolved-by",
            "status": "unconfirmed",
            "proposal": pid,
            "tier": links[0]["tier"],
            "origin": "wikilink",
            "evidence": {
                "source": PENDING_RECORD,
                "line": 7,
                "quote": links[0]["evidence"]["quote"],
            },
        }
    ]
    trusted = [
        link
        for link in data(root)["links"]
        if link["status"] == "confirmed" and link.get("evidence")
    ]
    assert all(link["evidence"]["source"].endswith(".md") for link in trusted) and trusted


def test_type_and_focus_choose_what_the_page_holds_and_shows(example: tuple[Path, str]) -> None:
    root, _ = example
    rules = data(root, "--type", "Rule")
    assert {n["type"] for n in rules["nodes"]} == {"Rule"} and len(rules["nodes"]) == 2
    ids = {n["id"] for n in rules["nodes"]}
    assert all(link["source"] in ids and link["target"] in ids for link in rules["links"])
    focused = data(root, "--focus", "Never write raw control bytes into text files", "--depth", "2")
    assert focused["meta"]["focus"] == "rule:no-raw-control-bytes" and focused["meta"]["depth"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--type", "Nope"], "--type Nope: unknown entity type 'Nope'"),
        (["--type", "Rul"], "(did you mean 'Rule'?)"),
        (["--depth", "2"], "--depth N goes with --focus ID"),
        (["--focus", "nothing-like-this"], "nothing-like-this"),
        (["--focus", "rule:no-raw-control-bytes", "--type", "Decision"], "left out by --type"),
        (["--focus", "Payroll notes"], "add --include-private"),
        (["-o", "no/such/dir/x.html"], "cannot write no/such/dir/x.html"),
        (["--depth", "11", "--focus", "x"], "11"),
    ],
)
def test_refusals_are_one_line_and_exit_2(
    example: tuple[Path, str], args: list[str], message: str
) -> None:
    code, out, err = view(example[0], *args)
    assert code == 2 and message in err and "Traceback" not in err + out


def test_no_store_is_refused(tmp_path: Path) -> None:
    code, _, err = view(tmp_path / "nothing", "-o", str(tmp_path / "x.html"))
    assert code == 2 and err.startswith("error: ") and not (tmp_path / "x.html").exists()


# -- serve --ui, its API --------------------------------------------------------------------
@pytest.fixture
def client(example: tuple[Path, str], tmp_path: Path) -> Iterator[tuple[TestClient, Path, str]]:
    import shutil

    root = tmp_path / "team"
    shutil.copytree(example[0], root)
    with TestClient(build_app(root / ".ontoloom", "s3cret", ui=True)) as c:
        yield c, root, example[1]


AUTH = {"Authorization": "Bearer s3cret"}


def test_ui_pages_carry_no_data_and_the_api_needs_the_token(
    client: tuple[TestClient, Path, str],
) -> None:
    c, _, _ = client
    page = c.get("/ui/")
    assert page.status_code == 200 and 'data-live="true"' in page.text
    # A live page carries both drawings (the switch works), under the files' policy.
    assert library("d3-force-3d") in page.text and library("force-graph") in page.text
    assert "function ontoloomDrawing3D" in page.text
    assert csp_of(page.text) == EXPECTED_CSP
    assert PENDING_SOURCE not in page.text and page.headers["cache-control"] == "no-store"
    assert c.get("/ui/review").status_code == 200
    assert c.get("/ui/api/view").status_code == 401
    assert c.get("/ui/api/view", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert c.post("/ui/api/review/confirm", json={"id": "x"}).status_code == 401
    got = c.get("/ui/api/view", headers=AUTH)
    assert got.status_code == 200 and got.json()["meta"]["private_hidden"] == 1
    full = c.get("/ui/api/view?include_private=1&type=Doc", headers=AUTH).json()
    assert PRIVATE_TITLE in {n["label"] for n in full["nodes"]}


def test_a_confirm_from_the_review_api_lands_in_the_store_and_the_record(
    client: tuple[TestClient, Path, str],
) -> None:
    c, root, pid = client
    queue = c.get("/ui/api/review", headers=AUTH).json()
    assert [p["id"] for p in queue["proposals"]] == [pid]
    assert queue["proposals"][0]["evidence"]["quote"] and "resolved-by" in queue["relations"]
    before = (root / PENDING_RECORD).read_text()
    done = c.post("/ui/api/review/confirm", json={"id": pid}, headers=AUTH)
    assert done.status_code == 200 and done.json()["writeback"]["written"] is True
    after = (root / PENDING_RECORD).read_text()
    assert after != before and "resolved-by" in after
    confirmed = c.post("/api/proposals_list", json={"status": "confirmed"}, headers=AUTH).json()
    assert [p["id"] for p in confirmed] == [pid]
    assert c.get("/ui/api/review", headers=AUTH).json()["proposals"] == []


def test_review_refusals_come_back_with_their_report(client: tuple[TestClient, Path, str]) -> None:
    c, _, _ = client
    queue = c.get("/ui/api/review", headers=AUTH).json()
    candidate = next(i for i in queue["candidates"] if i["target"] == "action:strip-control-bytes")
    refused = c.post(
        "/ui/api/review/type", json={"id": candidate["id"], "rel": "applies"}, headers=AUTH
    )
    assert refused.status_code == 422
    body = refused.json()
    assert body["error"] == "validation" and any(
        "is not one" in f["message"] for f in body["results"]
    )
    assert c.post("/ui/api/review/confirm", json={"id": "nope"}, headers=AUTH).status_code == 404
    assert c.post("/ui/api/review/confirm", json={}, headers=AUTH).status_code == 400
    assert c.post("/ui/api/review/confirm", content=b"{", headers=AUTH).status_code == 400
    assert c.post("/ui/api/review/explode", json={"id": "x"}, headers=AUTH).status_code == 404
    # An id that looks like an option is an id, not an option.
    assert c.post("/ui/api/review/confirm", json={"id": "--help"}, headers=AUTH).status_code == 404
    dismissed = c.post("/ui/api/review/dismiss", json={"id": candidate["id"]}, headers=AUTH)
    assert dismissed.status_code == 200
    left = c.get("/ui/api/review", headers=AUTH).json()["candidates"]
    assert candidate["id"] not in {i["id"] for i in left}


def test_a_candidate_offers_exactly_the_relations_typing_it_accepts(
    client: tuple[TestClient, Path, str],
) -> None:
    """The review page's dropdown offered all the schema's relations, defaulting to one the
    schema refuses for the pair: each candidate now lists what fits, the oracle being the
    write path itself (every relation left out is refused; the first offered is accepted)."""
    c, _, _ = client
    queue = c.get("/ui/api/review", headers=AUTH).json()
    candidate = next(i for i in queue["candidates"] if i["target"] == "action:strip-control-bytes")
    offered = candidate["relations"]
    assert offered and "applies" not in offered
    for rel in sorted(set(queue["relations"]) - set(offered)):
        typed = c.post(
            "/ui/api/review/type", json={"id": candidate["id"], "rel": rel}, headers=AUTH
        )
        assert typed.status_code == 422, (rel, typed.json())
    first = c.post(
        "/ui/api/review/type", json={"id": candidate["id"], "rel": offered[0]}, headers=AUTH
    )
    assert first.status_code == 200, first.json()


def test_serve_without_ui_has_no_pages(example: tuple[Path, str]) -> None:
    with TestClient(build_app(example[0] / ".ontoloom", "s3cret")) as c:
        assert c.get("/ui/").status_code == 404


def test_a_bad_view_parameter_is_a_400_with_the_reason(
    client: tuple[TestClient, Path, str],
) -> None:
    c, _, _ = client
    bad = c.get("/ui/api/view?focus=rule:no-raw-control-bytes&depth=abc", headers=AUTH)
    assert bad.status_code == 400 and "abc" in bad.json()["message"]
    unknown = c.get("/ui/api/view?type=Nope", headers=AUTH)
    assert unknown.status_code == 400 and "unknown entity type" in unknown.json()["message"]
    missing = c.get("/ui/api/view?focus=nothing-like-this", headers=AUTH)
    assert missing.status_code == 404


def test_text_from_the_graph_cannot_end_the_data_script(tmp_path: Path) -> None:
    from ontoloom.api import Graph
    from ontoloom.view import render_page, view_data

    hostile = "</script><script>alert(1)</script><!--"
    with Graph.open(tmp_path / "d", write=True, create=True) as g:
        g.create("Task", {"title": hostile, "status": "open"})
        html = render_page("view", view_data(g))
    assert hostile not in html and "alert(1)" in html
    assert html.count("</script>") == html.count("<script")


def test_an_empty_store_makes_a_page_saying_so(tmp_path: Path) -> None:
    from ontoloom.api import Graph

    with Graph.open(tmp_path / ".ontoloom", write=True, create=True):
        pass
    code, out, _ = view(tmp_path, "-o", str(tmp_path / "empty.html"))
    assert code == 0 and "0 objects, 0 relations" in out


def test_serve_and_view_document_their_options() -> None:
    runner = CliRunner()
    assert "--ui" in runner.invoke(main, ["serve", "--help"]).stdout
    text = runner.invoke(main, ["view", "--help"]).stdout
    for option in ("--output", "--focus", "--depth", "--type", "--include-private", "--format"):
        assert option in text
