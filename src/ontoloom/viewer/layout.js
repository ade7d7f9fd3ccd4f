// The 3D layout: d3-force-3d (vendored) run off the page's thread, in a Web Worker made from
// this file and the d3 modules (drawing3d.js starts it), or on the page in short slices where
// a worker cannot be made. It speaks in flat arrays only: node i's position is
// pos[3i..3i+2]; links are index pairs. Messages in: {type: "start", gen, n, links, pos, small,
// warm} (pos: NaN where a node has no place yet; warm: start afresh rather than move on from
// places every node already had), {type: "ack", gen, pos} (the page drew the last
// positions and hands their buffer back) and {type: "stop"}. Out: {type: "tick", gen, pos,
// done}. A new set of positions goes out only once the page has drawn the last one (so a slow
// drawing never queues frames), while the simulation keeps ticking; the last one always goes.
"use strict";
function ontoloomLayout(post, d3) {
  var sim = null, nodes = null, gen = 0, spare = null, waiting = false, done = true,
      started = 0, ticks = 0, cfg = null, timer = null;
  var now = typeof performance !== "undefined" ? function () { return performance.now(); } : Date.now;

  function stopTimer() { if (timer !== null) { clearTimeout(timer); timer = null; } }

  function send(last) {
    var pos = spare && spare.length === nodes.length * 3 ? spare : new Float32Array(nodes.length * 3);
    spare = null;
    for (var i = 0, j = 0; i < nodes.length; i++, j += 3) {
      pos[j] = nodes[i].x; pos[j + 1] = nodes[i].y; pos[j + 2] = nodes[i].z;
    }
    waiting = true;
    post({ type: "tick", gen: gen, pos: pos, done: last }, [pos.buffer]);
  }

  function finished() {
    return sim.alpha() < sim.alphaMin() || ticks >= cfg.maxTicks || now() - started > cfg.maxMs;
  }

  function step() {
    timer = null;
    if (done) return;
    var t0 = now();
    do { sim.tick(); ticks++; } while (now() - t0 < 12 && !finished());
    if (finished()) { done = true; send(true); return; }
    if (!waiting) send(false);
    timer = setTimeout(step, 0);  // lets an ack or a new start in between slices
  }

  function start(msg) {
    stopTimer();
    gen = msg.gen;
    var n = msg.n, pos = msg.pos, links = [];
    nodes = new Array(n);
    for (var i = 0; i < n; i++) {
      var x = pos[3 * i], y = pos[3 * i + 1], z = pos[3 * i + 2];
      nodes[i] = isNaN(x) ? { index: i } : { index: i, x: x, y: y, z: isNaN(z) ? (i % 7 - 3) : z };
    }
    for (var k = 0; k < msg.links.length; k += 2) links.push({ source: msg.links[k], target: msg.links[k + 1] });
    // 3d-force-graph's settings for the same sizes: a small graph spread for legibility and
    // mostly laid out before its first picture; a big one drawn at once, settling within seconds.
    cfg = msg.small ? { warmup: 100, maxTicks: 200, maxMs: 15000, decay: 0.0228 }
                    : { warmup: 0, maxTicks: Infinity, maxMs: 8000, decay: 0.05 };
    sim = d3.forceSimulation(nodes, 3).stop().alphaDecay(cfg.decay)
      .force("link", d3.forceLink(links).distance(msg.small ? 45 : 30))
      .force("charge", d3.forceManyBody().strength(msg.small ? -90 : -30))
      .force("center", d3.forceCenter());
    if (!msg.warm) sim.alpha(0.3);  // every object had a place (a filter changed): it moves, not restarts
    // the warm-up spends at most 0.1 s: on a slow machine the first picture comes
    // sooner and the rest of the settling is watched
    var w0 = now();
    for (var w = 0; w < cfg.warmup && now() - w0 < 100; w++) sim.tick();
    started = now(); ticks = 0; done = false; waiting = false;
    send(false);
    timer = setTimeout(step, 0);
  }

  return function receive(msg) {
    if (msg.type === "start") start(msg);
    else if (msg.type === "ack") {
      if (msg.gen === gen) { spare = msg.pos; waiting = false; }
    } else if (msg.type === "stop") { done = true; stopTimer(); }
  };
}
