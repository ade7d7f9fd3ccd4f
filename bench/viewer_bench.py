"""``make bench-viewer``: both drawings of a big graph in headless Chromium.

The example instance (examples/team, as tests/view_instance.py builds it) goes through
:func:`ontoloom.view.view_data` — the code path ``ontoloom view`` uses — and its data is then
scaled: the objects and relations copied N times (ids suffixed ``~N``, the private object
still "private", the pending proposal still unconfirmed), plus relations between copies until
the wanted count. :func:`ontoloom.view.render_page` writes the page in 2D and in 3D; each is
opened in Debian's Chromium (no GPU: the 2D canvas rasterised on the CPU, 3D's WebGL by
ANGLE on SwiftShader) and the page itself
counts, on its own clock from navigation start: time to first frame (the graph drawn and on
screen), frames per second (requestAnimationFrame) while the layout runs and the longest
frame, when the layout settled, and frames per second for 2 s from 1 s after it settled (the
page zooms to fit when the layout stops), then pictures painted per second while the
pointer drags across the drawing for 2 s (3D turns, 2D pans: a full redraw each). Targets:
≤ 3 s to first frame, ≥ 30 fps after settling. ``--sizes`` says which scales (default 1k
objects/3k relations and 10k/30k).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.view_instance import scale  # noqa: E402  (the scaling the big-graph browser test uses too)

CHROMIUM = os.environ.get("ONTOLOOM_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# The 2D canvas rasterised on the CPU (as with no GPU); 3D on WebGL by ANGLE on SwiftShader.
MODE_ARGS = {
    "2d": ["--disable-gpu"],
    "3d": ["--use-angle=swiftshader", "--use-gl=angle", "--enable-unsafe-swiftshader"],
}
COUNT_FRAMES = """(ms) => new Promise(r => { let n = 0; const t0 = performance.now();
  function f() { n++; const t = performance.now() - t0;
                 if (t < ms) requestAnimationFrame(f); else r(n * 1000 / t); }
  requestAnimationFrame(f); })"""


def example_data(work: Path) -> dict[str, Any]:
    from tests.view_instance import example_instance

    from ontoloom.api import Graph
    from ontoloom.view import view_data

    root, _ = example_instance(work / "team")
    with Graph.open(root / ".ontoloom") as g:
        return view_data(g)


# Every frame the page starts, from navigation on, noted by the page itself: nothing here
# depends on the page answering Playwright while it is busy.
FRAMES = """window.ontoloomFrames = [];
(function frame() { window.ontoloomFrames.push(performance.now()); requestAnimationFrame(frame); })();"""


FIT_MS = 1000


def measure(page: Any, path: Path, sample_ms: int, settle_s: float) -> dict[str, Any]:
    """From the page's own clock (ms from navigation start): the first frame drawn (the frame
    after the one the library first drew the graph in, i.e. once that picture was on screen),
    frames per second from then until the layout stopped, when it stopped, and frames per
    second for ``sample_ms`` after that."""
    page.add_init_script(FRAMES)
    page.goto(path.as_uri())
    page.wait_for_function("() => window.ontoloomFirstFrame", timeout=120000, polling=500)
    settled = page.wait_for_function(
        "() => window.ontoloomSettled", timeout=settle_s * 1000, polling=500
    ).json_value()
    # after it settled, the page zooms to fit (a 400 ms move, redrawn every frame): count
    # from 1 s after the layout stopped
    page.wait_for_function(
        f"() => performance.now() > window.ontoloomSettled + {FIT_MS + sample_ms}", polling=250
    )
    dragged = drag(page, sample_ms)
    drew = page.evaluate("window.ontoloomFirstFrame")
    frames: list[float] = page.evaluate("window.ontoloomFrames")
    shown = next((t for t in frames if t > drew), drew)
    during = [t for t in frames if shown <= t <= settled]
    after = [t for t in frames if settled + FIT_MS < t <= settled + FIT_MS + sample_ms]
    gaps = [b - a for a, b in itertools.pairwise(during)]
    return {
        "mode": page.evaluate("window.ontoloomView.mode()"),
        "first": shown / 1000,
        # None: the layout stopped before a second frame (its clock ran out while the first
        # frame was being drawn), so there is no rate to give
        "running": len(during) * 1000 / (settled - shown) if len(during) > 1 else None,
        "frames": len(during),
        "worst": max(gaps, default=0.0) / 1000,
        "settle": settled / 1000,
        "after": len(after) * 1000 / sample_ms,
        "dragged": dragged,
    }


def drag(page: Any, ms: int) -> float:
    """Pictures painted per second while the pointer drags across the drawing for ``ms`` (3D:
    the scene turns; 2D: it pans), on the page's clock: every one a full redraw of the graph,
    unlike the settled rate, which counts frames the browser offered whether or not the
    drawing painted anything."""
    box = page.locator("#graph").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    start = page.evaluate("[performance.now(), window.ontoloomDrawn || 0]")
    step = 0
    while page.evaluate("performance.now()") < start[0] + ms:
        step += 1
        page.mouse.move(x + 150 * math.sin(step / 8), y + 60 * math.cos(step / 11))
    end = page.evaluate("[performance.now(), window.ontoloomDrawn || 0]")
    page.mouse.up()
    return float((end[1] - start[1]) * 1000 / (end[0] - start[0]))


def sizes(text: str) -> list[tuple[int, int]]:
    """``"1000x3000,10000x30000"`` → [(1000, 3000), (10000, 30000)]."""
    out = []
    for part in text.split(","):
        objects, _, relations = part.partition("x")
        out.append((int(objects), int(relations)))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=sizes,
        default=sizes("1000x3000,10000x30000"),
        help="objects x relations, comma-separated (default 1000x3000,10000x30000)",
    )
    parser.add_argument("--sample", type=float, default=2.0, help="seconds of frame counting")
    parser.add_argument("--drawings", default="2d,3d", help="which: 2d, 3d or both")
    parser.add_argument("--settle", type=float, default=60.0, help="seconds to wait to settle")
    args = parser.parse_args(argv)
    if not os.access(CHROMIUM, os.X_OK):
        sys.exit(
            f"no Chromium at {CHROMIUM}: apt-get install chromium (ONTOLOOM_CHROMIUM names another)"
        )
    os.environ["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
    from playwright.sync_api import sync_playwright

    from ontoloom.view import render_page

    header = (
        f"{'drawing':<10}{'objects':>9}{'relations':>11}{'HTML MB':>9}{'first frame s':>15}"
        f"{'layout frames':>14}{'fps layout':>12}{'worst frame s':>15}{'settled s':>11}"
        f"{'fps settled':>13}{'fps dragged':>13}"
    )
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        work = Path(tmp)
        example = example_data(work)
        print(header, flush=True)
        for objects, relations in args.sizes:
            data = scale(example, objects, relations)
            for mode in args.drawings.split(","):
                path = work / f"view-{mode}-{objects}.html"
                path.write_text(render_page("view", data, mode=mode), encoding="utf-8")
                context = p.chromium.launch_persistent_context(
                    str(work / f"profile-{mode}-{objects}"),
                    executable_path=CHROMIUM,
                    args=ARGS + MODE_ARGS[mode],
                    headless=True,
                    viewport={"width": 1280, "height": 800},
                )
                page = context.new_page()
                m = measure(page, path, int(args.sample * 1000), args.settle)
                context.close()
                size = path.stat().st_size / 1e6
                running = "-" if m["running"] is None else f"{m['running']:.1f}"
                print(
                    f"{m['mode']!s:<10}{data['meta']['nodes']:>9}{data['meta']['links']:>11}"
                    f"{size:>9.1f}{m['first']:>15.2f}{m['frames']:>14}{running:>12}"
                    f"{m['worst']:>15.2f}{m['settle']:>11.1f}{m['after']:>13.1f}"
                    f"{m['dragged']:>13.1f}",
                    flush=True,
                )
    print(
        "targets: first frame ≤ 3 s, ≥ 30 fps after the layout settles. Headless Chromium with "
        "no GPU (2D rasterised on the CPU, 3D's WebGL on SwiftShader) on a shared CPU."
    )


if __name__ == "__main__":
    main()
