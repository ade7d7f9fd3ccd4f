"""The viewer in a real browser (issue 17): Debian's Chromium driven by Playwright by its
executable path — Playwright never downloads a browser. One browser for the module; every
request that is not the file or the local server is refused and counted. Screenshots of the
example instance go to tests/artefacts/ (gitignored) and are checked to be non-blank."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.view_instance import (
    PENDING_RECORD,
    PENDING_SOURCE,
    PRIVATE_TITLE,
    example_instance,
    png_colours,
    scale,
)

from ontoloom.api import Graph
from ontoloom.cli import main
from ontoloom.view import render_page, view_data

CHROMIUM = os.environ.get("ONTOLOOM_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# WebGL for the 3D drawing: headless Chromium has no GPU here, so ANGLE on SwiftShader (CPU).
GL_ARGS = ["--use-angle=swiftshader", "--use-gl=angle", "--enable-unsafe-swiftshader"]
ARTEFACTS = Path(__file__).parent / "artefacts"

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright for Python is not installed (pip install -e '.[dev]')"
)
pytestmark = [
    pytest.mark.skipif(
        not os.access(CHROMIUM, os.X_OK),
        reason=f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does) to run the browser tests",
    ),
    pytest.mark.skipif(sys.platform == "win32", reason="Debian's Chromium"),
]


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
    with playwright_api.sync_playwright() as p:
        yield p


def _launch(p: Any, profile: Path, args: list[str]) -> Any:
    return p.chromium.launch_persistent_context(
        str(profile),  # a fresh user-data-dir
        executable_path=CHROMIUM,
        args=args,
        headless=True,
        viewport={"width": 1280, "height": 800},
    )


@pytest.fixture(scope="module")
def browser(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    context = _launch(playwright, tmp_path_factory.mktemp("chromium-profile"), ARGS)
    yield context
    context.close()


@pytest.fixture(scope="module")
def browser3d(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    args = [a for a in ARGS if a != "--disable-gpu"] + GL_ARGS
    context = _launch(playwright, tmp_path_factory.mktemp("chromium-profile-3d"), args)
    yield context
    context.close()


class Watched:
    """A page whose console errors and refused (non-local) requests are recorded."""

    def __init__(self, context: Any, allowed: str) -> None:
        self.page = context.new_page()
        self.errors: list[str] = []
        self.foreign: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(r: Any) -> None:
            url = r.request.url
            if url.startswith(allowed) or url.startswith("data:") or url.startswith("blob:"):
                r.continue_()
            else:
                self.foreign.append(url)
                r.abort()

        self.page.route("**/*", route)

    def settle(self) -> None:
        self.page.wait_for_function(
            "() => document.getElementById('status').textContent.includes('shown')"
        )
        self.page.wait_for_timeout(1500)  # the layout runs a little before the picture

    def visible(self) -> dict[str, Any]:
        result: dict[str, Any] = self.page.evaluate("window.ontoloomView.visible()")
        return result

    def close(self) -> None:
        assert self.errors == [] and self.foreign == []
        self.page.close()


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return example_instance(tmp_path_factory.mktemp("browser") / "team")


def write_view(root: Path, out: Path, *args: str) -> Path:
    result = CliRunner().invoke(
        main, ["--data-dir", str(root / ".ontoloom"), "view", "-o", str(out), *args]
    )
    assert result.exit_code == 0, result.output
    return out


def unlabelled_controls(page: Any) -> list[str]:
    found: list[str] = page.evaluate(
        """[...document.querySelectorAll('input, select, button')].filter(e =>
             !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim()
           ).map(e => e.outerHTML)"""
    )
    return found


def shot(page: Any, name: str) -> bytes:
    ARTEFACTS.mkdir(exist_ok=True)
    data: bytes = page.screenshot(path=str(ARTEFACTS / name))
    assert png_colours(data) >= 16, f"{name} looks blank"
    return data


def test_the_file_loads_offline_and_search_filter_expand_work(
    browser: Any, example: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = example
    out = write_view(
        root, tmp_path / "graph.html", "--focus", "rule:no-raw-control-bytes", "--depth", "0"
    )
    w = Watched(browser, "file://")
    w.page.goto(out.as_uri())
    w.settle()
    assert w.visible()["nodes"] == ["rule:no-raw-control-bytes"]
    # A file written without --3d carries the 2D library only: its 3D choice is off, saying so.
    assert w.page.evaluate("window.ontoloomView.mode()") == "2d"
    assert w.page.is_disabled("#mode-3d")
    assert "--3d" in w.page.locator("#mode-help").inner_text()
    # Expand: the focus's neighbours join it.
    w.page.click("#expand")
    grown = w.visible()["nodes"]
    assert len(grown) > 1 and "rule:no-raw-control-bytes" in grown
    # Show everything, then search: Enter opens the first match in the details panel.
    w.page.click("#show-all")
    total = len(w.visible()["nodes"])
    w.page.fill("#search", "escape everything")
    assert w.page.locator("#results li").count() == 1
    w.page.press("#search", "Enter")
    assert "decision:2026-11-12-escape-hook-output" in w.page.locator("#details").inner_text()
    assert w.page.evaluate("document.activeElement.id") == "details"
    # Type filter: untick Decision and no decision is drawn; relation filter drops links.
    w.page.get_by_label("Decision (", exact=False).uncheck()
    left = w.visible()["nodes"]
    assert left and not any(n.startswith("decision:") for n in left) and len(left) < total
    links = w.visible()["links"]
    w.page.get_by_label("recurs-as", exact=True).uncheck()
    assert w.visible()["links"] < links
    # The pending proposal is drawn, labelled unconfirmed, in its source's details.
    w.page.fill("#search", PENDING_SOURCE)
    w.page.press("#search", "Enter")
    assert "unconfirmed" in w.page.locator("#details").inner_text()
    w.close()


def test_keyboard_focus_is_visible_and_every_control_labelled(
    browser: Any, example: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = example
    out = write_view(root, tmp_path / "graph.html")
    w = Watched(browser, "file://")
    w.page.goto(out.as_uri())
    w.settle()
    assert unlabelled_controls(w.page) == []
    order = []
    for _ in range(4):
        w.page.keyboard.press("Tab")
        order.append(
            w.page.evaluate("document.activeElement.id || document.activeElement.className")
        )
        outline = w.page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
        assert outline not in ("none", ""), order
    assert order[:2] == ["skip", "search"] and order[2].startswith("type-")
    w.page.fill("#search", "strip control")
    w.page.keyboard.press("Tab")  # from the search box to the first match
    w.page.keyboard.press("Enter")
    assert "action:strip-control-bytes" in w.page.locator("#details").inner_text()
    # A click on a node on the canvas opens it too (once the layout has settled; force-graph
    # finds what is under the pointer on its next frame, so the pointer rests there first).
    w.page.wait_for_function("() => window.ontoloomView.settled()", timeout=30000, polling=100)
    w.page.wait_for_timeout(700)
    at = w.page.evaluate("window.ontoloomView.screenOf('rule:no-raw-control-bytes')")
    box = w.page.locator("#graph").bounding_box()
    x, y = box["x"] + at["x"], box["y"] + at["y"]
    w.page.mouse.move(x, y)
    w.page.wait_for_timeout(300)
    w.page.mouse.move(x + 1, y)
    w.page.wait_for_timeout(300)
    w.page.mouse.click(x + 1, y)
    w.page.wait_for_function(
        "() => document.querySelector('#details h2').textContent.startsWith('Never write')",
        timeout=5000,
        polling=100,
    )
    assert "rule:no-raw-control-bytes" in w.page.locator("#details").inner_text()
    shot(w.page, "view-example.png")
    w.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def live(example: tuple[Path, str], tmp_path: Path) -> Iterator[tuple[str, str, Path, str]]:
    root = tmp_path / "team"
    shutil.copytree(example[0], root)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "ONTOLOOM_TOKEN"}
    env["ONTOLOOM_LOCK_TIMEOUT"] = "10"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ontoloom.entry",
            "--data-dir",
            str(root / ".ontoloom"),
            "serve",
            "--ui",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
    token = (root / ".ontoloom" / "serve.token").read_text().strip()
    try:
        yield f"http://127.0.0.1:{port}", token, root, example[1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_serve_ui_view_and_a_confirm_from_the_review_page(
    browser: Any, live: tuple[str, str, Path, str]
) -> None:
    url, token, root, pid = live
    w = Watched(browser, url)
    # No token in the address: the page asks for it.
    w.page.goto(f"{url}/ui/")
    w.page.fill("#token", token)
    w.page.keyboard.press("Enter")
    w.settle()
    assert PENDING_SOURCE in w.visible()["nodes"]
    assert not w.page.is_disabled("#mode-3d")  # a live page carries both drawings
    w.page.goto(f"{url}/ui/review#token={token}")
    w.page.wait_for_selector(f"article[data-id='{pid}']")
    assert "#token" not in w.page.url  # taken out of the address bar
    assert unlabelled_controls(w.page) == []
    shot(w.page, "review-example.png")
    # The dropdown offers only the relations the schema allows for the pair (never `applies`
    # from a decision to an action), the most specific selected: typing it is accepted.
    candidate = w.page.locator("#candidates article").filter(has_text="decision:2026-11-10")
    options = candidate.locator("select option").all_inner_texts()
    assert options and "applies" not in options
    assert candidate.locator("select").input_value() == options[0]
    candidate.locator("button.type").click()
    w.page.wait_for_selector("#outcome-body .ok")
    assert "Proposed (pending)" in w.page.locator("#outcome-body").inner_text()
    assert w.errors == []
    before = (root / PENDING_RECORD).read_text()
    w.page.locator(f"article[data-id='{pid}'] button.confirm").click()
    w.page.wait_for_selector("#outcome-body .ok:has-text('written back to')")
    assert "written back to " + PENDING_RECORD in w.page.locator("#outcome-body").inner_text()
    after = (root / PENDING_RECORD).read_text()
    assert after != before and "resolved-by" in after
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "ontoloom.entry",
            "--data-dir",
            str(root / ".ontoloom"),
            "--json",
            "proposals",
            "--status",
            "confirmed",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "ONTOLOOM_LOCK_TIMEOUT": "10"},
    )
    assert pid in listed.stdout, listed.stderr
    w.close()


# What the page's drawing holds (force-graph's own data in 2D; in 3D what the WebGL buffers
# were built from), not the page's list.
DRAWN = """() => { const d = window.ontoloomView.drawn();
  return { mode: window.ontoloomView.mode(), nodes: d.nodes.slice().sort(), links: d.links,
           unconfirmed: d.unconfirmed, private: d.private }; }"""
CSP_WATCH = (
    "window.cspViolations = []; document.addEventListener('securitypolicyviolation',"
    " e => window.cspViolations.push(e.violatedDirective));"
)


@pytest.mark.browser3d  # ~30 s on software WebGL: `make test-browser`
def test_the_3d_file_draws_with_webgl_and_the_switch_keeps_search_and_filters(
    browser3d: Any, example: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = example
    out = write_view(root, tmp_path / "graph3d.html", "--3d")
    w = Watched(browser3d, "file://")
    w.page.add_init_script(CSP_WATCH)
    w.page.goto(out.as_uri())
    w.settle()
    page = w.page
    # Drawn in 3D, by WebGL2, every object the page shows, in a few draw calls (relations,
    # the dashed proposal, the objects), laid out in a Web Worker the CSP lets it start.
    assert page.evaluate("window.ontoloomView.graph().gl instanceof WebGL2RenderingContext")
    page.wait_for_function("() => window.ontoloomView.graph().frames > 0", timeout=30000)
    assert page.evaluate("window.ontoloomView.graph().layout") == "worker"
    drawn = page.evaluate(DRAWN)
    shown = w.visible()
    assert drawn["mode"] == "3d" and drawn["nodes"] == sorted(shown["nodes"])
    assert len(drawn["nodes"]) == 31 and drawn["links"] == shown["links"] == 46
    assert drawn["unconfirmed"] == 1 and drawn["private"] == ["private"]
    assert page.evaluate("window.ontoloomView.graph().calls") == 3
    shot(page, "view-example-3d.png")
    # Search and filter in 3D, then switch: the same objects and links, the same matches.
    page.fill("#search", "escape everything")
    page.press("#search", "Enter")
    page.get_by_label("Decision (", exact=False).uncheck()
    page.get_by_label("recurs-as", exact=True).uncheck()
    before = w.visible()
    assert not any(n.startswith("decision:") for n in before["nodes"])
    details = page.locator("#details").inner_text()
    assert "decision:2026-11-12-escape-hook-output" in details
    for mode in ("2d", "3d"):
        page.get_by_label("2D (canvas)" if mode == "2d" else "3D (WebGL)").check()
        drawn = page.evaluate(DRAWN)
        assert drawn["mode"] == mode
        assert drawn["nodes"] == sorted(before["nodes"]) and drawn["links"] == before["links"]
        assert w.visible() == before
        assert page.input_value("#search") == "escape everything"
        assert page.locator("#results li").count() == 1
        assert page.get_by_label("Decision (", exact=False).is_checked() is False
        assert page.locator("#details").inner_text() == details
    # A click on a node in 3D opens it (once the layout has settled).
    page.get_by_label("Decision (", exact=False).check()
    page.wait_for_function("() => window.ontoloomView.settled()", timeout=30000, polling=100)
    page.wait_for_timeout(700)
    at = page.evaluate("window.ontoloomView.screenOf('rule:no-raw-control-bytes')")
    box = page.locator("#graph").bounding_box()
    x, y = box["x"] + at["x"], box["y"] + at["y"]
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)
    page.wait_for_function(
        "() => document.querySelector('#details h2').textContent.startsWith('Never write')",
        timeout=5000,
        polling=100,
    )
    # The CSP holds and bites: nothing was refused while drawing, and eval is refused.
    assert page.evaluate("window.cspViolations") == []
    # (later, from the page's own task: Playwright's evaluate itself is exempt from the CSP)
    page.evaluate(
        "setTimeout(() => { try { eval('1'); window.evalled = 'ran'; }"
        " catch (e) { window.evalled = e.name; } }, 0)"
    )
    assert page.wait_for_function("() => window.evalled").json_value() == "EvalError"
    assert page.evaluate("window.cspViolations") == ["script-src"]
    w.errors = [e for e in w.errors if "unsafe-eval" not in e]  # the refusal just provoked
    w.close()


@pytest.mark.browser3d
def test_a_big_graph_in_3d_is_a_few_draw_calls_and_search_filter_pick_still_work(
    browser3d: Any, example: tuple[Path, str], tmp_path: Path
) -> None:
    """Past 2,000 objects the page draws a big graph (no warm-up, the layout settles in
    seconds): the example scaled to 2,500 objects and 7,500 relations, every copy with its
    private object and its unconfirmed proposal."""
    root, _ = example
    with Graph.open(root / ".ontoloom") as g:
        data = scale(view_data(g), 2500, 7500)
    out = tmp_path / "big3d.html"
    out.write_text(render_page("view", data, mode="3d"), encoding="utf-8")
    w = Watched(browser3d, "file://")
    w.page.add_init_script(CSP_WATCH)
    w.page.goto(out.as_uri())
    page = w.page
    page.wait_for_function("() => window.ontoloomFirstFrame", timeout=60000, polling=200)
    drawn = page.evaluate(DRAWN)
    meta = data["meta"]
    assert drawn["mode"] == "3d" and len(drawn["nodes"]) == 2500 and drawn["links"] == 7500
    assert drawn["unconfirmed"] == meta["unconfirmed"] > 1
    assert drawn["private"] == ["private"] * meta["private_hidden"] and meta["private_hidden"] > 1
    assert page.evaluate("window.ontoloomView.graph().layout") == "worker"
    page.wait_for_function("() => window.ontoloomView.settled()", timeout=60000, polling=200)
    assert page.evaluate("window.ontoloomView.graph().calls") == 3
    # A private object is never a match; a copy's object is, and Enter opens it.
    page.fill("#search", PRIVATE_TITLE)
    assert page.locator("#results li").count() == 0
    copy = next(n for n in data["nodes"] if n["id"] == "decision:2026-11-12-escape-hook-output~3")
    page.fill("#search", copy["label"])
    assert copy["label"].endswith(" (3)") and page.locator("#results li").count() == 1
    page.press("#search", "Enter")
    assert "decision:2026-11-12-escape-hook-output~3" in page.locator("#details").inner_text()
    # Untick a type: the drawing drops its objects and their relations at once.
    page.get_by_label("Decision (", exact=False).uncheck()
    drawn = page.evaluate(DRAWN)
    assert drawn["nodes"] == sorted(w.visible()["nodes"]) and drawn["links"] == w.visible()["links"]
    assert not any(n.startswith("decision:") for n in drawn["nodes"]) and drawn["links"] < 7500
    page.get_by_label("Decision (", exact=False).check()
    page.click("#show-all")  # the camera went to the match; this fits everything again
    page.wait_for_function("() => window.ontoloomView.settled()", timeout=60000, polling=200)
    page.wait_for_timeout(800)  # the zoom to fit
    # A click picks an object drawn under the pointer (the front-most where several are).
    at = page.evaluate("window.ontoloomView.screenOf('rule:no-raw-control-bytes~5')")
    box = page.locator("#graph").bounding_box()
    page.mouse.click(box["x"] + at["x"], box["y"] + at["y"])
    picked = page.wait_for_function(
        "() => window.ontoloomView.selected() !== 'decision:2026-11-12-escape-hook-output~3'"
        " && window.ontoloomView.selected()",
        timeout=5000,
        polling=100,
    ).json_value()
    where = page.evaluate(f"window.ontoloomView.screenOf({picked!r})")
    assert abs(where["x"] - at["x"]) <= 12 and abs(where["y"] - at["y"]) <= 12, (picked, where, at)
    assert page.evaluate("window.cspViolations") == []
    shot(page, "view-big-3d.png")
    w.close()


@pytest.mark.browser3d
def test_where_no_worker_can_be_made_the_3d_layout_runs_on_the_page(
    browser3d: Any, example: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = example
    out = write_view(root, tmp_path / "graph3d.html", "--3d")
    w = Watched(browser3d, "file://")
    w.page.add_init_script("window.Worker = undefined;")  # as in a browser without workers
    w.page.goto(out.as_uri())
    w.settle()
    page = w.page
    page.wait_for_function("() => window.ontoloomView.settled()", timeout=30000, polling=100)
    assert page.evaluate("window.ontoloomView.graph().layout") == "page"
    drawn = page.evaluate(DRAWN)
    assert len(drawn["nodes"]) == 31 and drawn["links"] == 46 and drawn["unconfirmed"] == 1
    # laid out: every object has a place, and not all the same one
    spots = page.evaluate(
        "window.ontoloomView.visible().nodes.map(id => window.ontoloomView.screenOf(id))"
    )
    assert (
        all(s is not None for s in spots)
        and len({(round(s["x"]), round(s["y"])) for s in spots}) > 20
    )
    w.close()


@pytest.mark.browser3d
def test_without_webgl_the_3d_file_draws_in_2d_and_says_why(
    playwright: Any, example: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = example
    out = write_view(root, tmp_path / "graph3d.html", "--3d")
    context = _launch(
        playwright, tmp_path / "profile", [*ARGS, "--disable-webgl", "--disable-3d-apis"]
    )
    try:
        w = Watched(context, "file://")
        w.page.goto(out.as_uri())
        w.settle()
        assert w.page.evaluate("window.ontoloomView.mode()") == "2d"
        assert len(w.visible()["nodes"]) == 31
        assert w.page.is_disabled("#mode-3d") and w.page.is_checked("#mode-2d")
        assert "3D needs WebGL" in w.page.locator("#mode-help").inner_text()
        # Chromium may say it could not make a WebGL context: the one error allowed here
        w.errors = [e for e in w.errors if "WebGL" not in e]
        w.close()
    finally:
        context.close()
