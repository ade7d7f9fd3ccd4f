// The 3D drawing: WebGL2, a few draw calls whatever the graph's size. All objects are one
// buffer of points drawn as shaded spheres (one call), all confirmed relations one indexed
// line list over the same positions (one call), the unconfirmed proposals one dashed line list
// (one call) and the picked object one more point. The layout (d3-force-3d, layout.js) runs in
// a Web Worker and sends positions; a frame is drawn only when something changed (new
// positions, the camera, the selection), nothing is allocated per frame, and once the layout
// has settled the buffers stay as they are. Picking is on the CPU: the nearest projected
// point under the pointer. Why not 3d-force-graph: it makes a three.js mesh per object and per
// relation (about 40,000 draw calls at 10k objects and 30k relations) and runs the layout on
// the page's thread, which misses the frame-rate target by far (README, `make bench-viewer`).
"use strict";
function ontoloomDrawing3D(box, opts) {
  var FOV = 40 * Math.PI / 180, NODE = 14;  // field of view; a node's diameter in layout units
  // While the picture moves (the layout runs, the pointer turns it, a zoom), at most this many
  // relations are drawn, a fixed random sample (the line list is shuffled once, so the sample is
  // its start); all of them once it rests. Software WebGL spends ~2 µs a line: 30k lines are
  // 55-100 ms a frame there, 8k keep it near 30 frames a second.
  var MOVING_EDGES = 8000, REST_MS = 150;
  var self = { gl: null, canvas: null, frames: 0, calls: 0, layout: null };
  // -- the layout's thread: started first, so the worker loads while the page waits for WebGL
  var layout = (function () {
    var source = document.getElementById("ontoloom-layout-source").textContent, last = null, page = null;
    function onPage() {  // no worker could be made: the same code in slices on this thread
      var receive = ontoloomLayout(function (m) { setTimeout(function () { positions(m); }, 0); }, window.d3);
      page = { post: function (m) { receive(m); }, stop: function () { receive({ type: "stop" }); } };
      self.layout = "page";
      if (last) page.post(last);
      return page;
    }
    try {
      var url = URL.createObjectURL(new Blob([source,
        "\nvar receive = ontoloomLayout(function (m, t) { self.postMessage(m, t); }, self.d3);\n" +
        "self.onmessage = function (e) { receive(e.data); };\n"], { type: "text/javascript" }));
      var worker = new Worker(url);
      self.layout = "worker";
      worker.onmessage = function (e) { if (url) { URL.revokeObjectURL(url); url = null; } positions(e.data); };
      worker.onerror = function (e) { e.preventDefault(); worker.terminate(); worker = null; onPage(); };
      return {
        post: function (m, t) {
          if (m.type === "start") last = m;
          if (worker) worker.postMessage(m, t || []); else page.post(m);
        },
        stop: function () { if (worker) worker.terminate(); else if (page) page.stop(); }
      };
    } catch (err) {
      return onPage();
    }
  })();

  var canvas = document.createElement("canvas");
  canvas.style.display = "block";
  canvas.style.touchAction = "none";
  // (in a browser just started, this waits for its GPU process: up to seconds on software GL)
  var gl = canvas.getContext("webgl2", { antialias: false, alpha: false, depth: true,
                                          preserveDrawingBuffer: false });
  if (!gl) { layout.stop(); throw new Error("no WebGL2 context"); }
  self.gl = gl; self.canvas = canvas;
  box.appendChild(canvas);
  var tip = document.createElement("div");
  tip.className = "graph-tip";
  tip.hidden = true;
  box.appendChild(tip);

  function rgb(hex) {
    var v = parseInt(hex.replace("#", ""), 16);
    return [(v >> 16 & 255) / 255, (v >> 8 & 255) / 255, (v & 255) / 255];
  }
  var BG = rgb(opts.background), EDGE = rgb(opts.edge), UNCONF = rgb(opts.unconfirmed),
      FOCUS = rgb(opts.focus);

  // -- programs ------------------------------------------------------------------------------
  function program(vs, fs) {
    function shader(type, text) {
      var s = gl.createShader(type);
      gl.shaderSource(s, "#version 300 es\nprecision highp float;\n" + text);
      gl.compileShader(s);
      if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
      return s;
    }
    var p = gl.createProgram();
    gl.attachShader(p, shader(gl.VERTEX_SHADER, vs));
    gl.attachShader(p, shader(gl.FRAGMENT_SHADER, fs));
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
    var u = {}, n = gl.getProgramParameter(p, gl.ACTIVE_UNIFORMS);
    for (var i = 0; i < n; i++) { var name = gl.getActiveUniform(p, i).name; u[name] = gl.getUniformLocation(p, name); }
    return { p: p, u: u };
  }
  var points = program(
    "layout(location=0) in vec3 p; layout(location=1) in vec3 c; uniform mat4 m; uniform float s;" +
    "uniform float k; out vec3 vc; void main() { vec4 q = m * vec4(p, 1.0); gl_Position = q;" +
    " gl_PointSize = clamp(k * s / q.w, 3.0 * k, 128.0); vc = c; }",
    "in vec3 vc; uniform vec3 hi; uniform float useHi; out vec4 o; void main() {" +
    " vec2 d = gl_PointCoord * 2.0 - 1.0; float r = dot(d, d); if (r > 1.0) discard;" +
    " o = vec4(mix(vc, hi, useHi) * (0.62 + 0.38 * sqrt(1.0 - r)), 1.0); }");
  var lines = program(
    "layout(location=0) in vec3 p; uniform mat4 m; void main() { gl_Position = m * vec4(p, 1.0); }",
    "uniform vec4 col; out vec4 o; void main() { o = col; }");
  var dashes = program(
    "layout(location=0) in vec3 p; layout(location=2) in float t; uniform mat4 m; out float vt;" +
    " void main() { gl_Position = m * vec4(p, 1.0); vt = t; }",
    "in float vt; uniform vec4 col; out vec4 o; void main() { if (fract(vt) > 0.55) discard; o = col; }");

  var posBuf = gl.createBuffer(), colBuf = gl.createBuffer(), idxBuf = gl.createBuffer(),
      dashPosBuf = gl.createBuffer(), dashTBuf = gl.createBuffer();
  var vaoPoints = gl.createVertexArray(), vaoLines = gl.createVertexArray(), vaoDash = gl.createVertexArray();
  gl.bindVertexArray(vaoPoints);
  gl.bindBuffer(gl.ARRAY_BUFFER, posBuf); gl.enableVertexAttribArray(0); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
  gl.bindBuffer(gl.ARRAY_BUFFER, colBuf); gl.enableVertexAttribArray(1); gl.vertexAttribPointer(1, 3, gl.UNSIGNED_BYTE, true, 0, 0);
  gl.bindVertexArray(vaoLines);
  gl.bindBuffer(gl.ARRAY_BUFFER, posBuf); gl.enableVertexAttribArray(0); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, idxBuf);
  gl.bindVertexArray(vaoDash);
  gl.bindBuffer(gl.ARRAY_BUFFER, dashPosBuf); gl.enableVertexAttribArray(0); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
  gl.bindBuffer(gl.ARRAY_BUFFER, dashTBuf); gl.enableVertexAttribArray(2); gl.vertexAttribPointer(2, 1, gl.FLOAT, false, 0, 0);
  gl.bindVertexArray(null);

  // -- what is drawn -------------------------------------------------------------------------
  var nodes = [], index = new Map(), P = new Float32Array(0), known = false,
      edgeCount = 0, unconf = new Uint32Array(0), dashPos = new Float32Array(0), dashT = new Float32Array(0),
      posDirty = false, gen = 0, running = false, returned = null, hadData = false;

  function setData(list, links) {
    var firstData = !hadData;
    hadData = true;
    nodes = list;
    index = new Map();
    var n = nodes.length, col = new Uint8Array(3 * n), missing = false;
    P = new Float32Array(3 * n);
    for (var i = 0; i < n; i++) {
      var node = nodes[i], c = rgb(node.colour || opts.edge);
      index.set(node.id, i);
      col[3 * i] = c[0] * 255; col[3 * i + 1] = c[1] * 255; col[3 * i + 2] = c[2] * 255;
      if (typeof node.x === "number" && typeof node.y === "number") {
        // from the 2D drawing: no depth yet, a little to start from (the layout spreads it)
        P[3 * i] = node.x; P[3 * i + 1] = node.y; P[3 * i + 2] = typeof node.z === "number" ? node.z : (i % 7 - 3) * 2;
      } else { P[3 * i] = P[3 * i + 1] = P[3 * i + 2] = NaN; missing = true; }
    }
    var pairs = new Int32Array(2 * links.length), conf = [], un = [];
    links.forEach(function (l, k) {
      var s = index.get(typeof l.source === "object" ? l.source.id : l.source),
          t = index.get(typeof l.target === "object" ? l.target.id : l.target);
      pairs[2 * k] = s; pairs[2 * k + 1] = t;
      (l.status === "unconfirmed" ? un : conf).push(s, t);
    });
    var seed = 1;  // shuffled by a fixed sequence: the same sample on every run
    for (var e = conf.length / 2 - 1; e > 0; e--) {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      var r = seed % (e + 1), a = conf[2 * e], b = conf[2 * e + 1];
      conf[2 * e] = conf[2 * r]; conf[2 * e + 1] = conf[2 * r + 1]; conf[2 * r] = a; conf[2 * r + 1] = b;
    }
    edgeCount = conf.length;
    unconf = new Uint32Array(un);
    dashPos = new Float32Array(3 * un.length);
    dashT = new Float32Array(un.length);
    self.links = links.length;
    self.unconfirmed = un.length / 2;
    gl.bindBuffer(gl.ARRAY_BUFFER, colBuf); gl.bufferData(gl.ARRAY_BUFFER, col, gl.STATIC_DRAW);
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, idxBuf); gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, new Uint32Array(conf), gl.STATIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, posBuf); gl.bufferData(gl.ARRAY_BUFFER, P.byteLength || 12, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, dashPosBuf); gl.bufferData(gl.ARRAY_BUFFER, dashPos.byteLength || 12, gl.DYNAMIC_DRAW);
    gl.bindBuffer(gl.ARRAY_BUFFER, dashTBuf); gl.bufferData(gl.ARRAY_BUFFER, dashT.byteLength || 4, gl.DYNAMIC_DRAW);
    if (missing && window.d3) {
      // The layout's own starting places (d3-force-3d puts an object without one on a spiral by
      // its index), computed here too: the first picture need not wait for the worker to start.
      var start = nodes.map(function (_, i) {
        return isNaN(P[3 * i]) ? {} : { x: P[3 * i], y: P[3 * i + 1], z: P[3 * i + 2] };
      });
      window.d3.forceSimulation(start, 3).stop();
      for (var q = 0; q < n; q++) { P[3 * q] = start[q].x; P[3 * q + 1] = start[q].y; P[3 * q + 2] = start[q].z; }
    }
    known = !isNaN(P[0]) || n === 0;
    if (known) { posDirty = true; requestDraw(); }  // drawn at once where it is (or starts)
    if (firstData) follow = true;
    gen++;
    running = n > 0;
    returned = null;
    layout.post({ type: "start", gen: gen, n: n, links: pairs, pos: P.slice(), small: !opts.big, warm: missing });
  }

  function positions(msg) {  // from the layout
    if (msg.gen !== gen) return;
    if (msg.pos.length === P.length) P.set(msg.pos);
    returned = msg.pos;
    known = true;
    posDirty = true;
    requestDraw();
    if (msg.done) {
      running = false;
      writeBack();
      setTimeout(opts.onStop, 0);
    }
  }

  function writeBack() {  // positions onto the page's node objects (kept when switching)
    for (var i = 0; i < nodes.length; i++) {
      if (isNaN(P[3 * i])) continue;
      nodes[i].x = P[3 * i]; nodes[i].y = P[3 * i + 1]; nodes[i].z = P[3 * i + 2];
    }
  }

  // -- camera --------------------------------------------------------------------------------
  var cam = { x: 0, y: 0, z: 0, dist: 600, yaw: 0.6, pitch: 0.35 }, anim = null, follow = true;
  var V = new Float32Array(16), Pr = new Float32Array(16), M = new Float32Array(16),
      eye = new Float32Array(3), W = 1, H = 1, dpr = 1;

  function matrices() {
    var cp = Math.cos(cam.pitch);
    eye[0] = cam.x + cam.dist * cp * Math.sin(cam.yaw);
    eye[1] = cam.y + cam.dist * Math.sin(cam.pitch);
    eye[2] = cam.z + cam.dist * cp * Math.cos(cam.yaw);
    var fx = cam.x - eye[0], fy = cam.y - eye[1], fz = cam.z - eye[2], fl = Math.hypot(fx, fy, fz) || 1;
    fx /= fl; fy /= fl; fz /= fl;
    var sx = -fz, sy = 0, sz = fx, sl = Math.hypot(sx, sz) || 1;  // f × (0, 1, 0)
    sx /= sl; sz /= sl;
    var ux = sy * fz - sz * fy, uy = sz * fx - sx * fz, uz = sx * fy - sy * fx;
    V[0] = sx; V[1] = ux; V[2] = -fx; V[3] = 0;
    V[4] = sy; V[5] = uy; V[6] = -fy; V[7] = 0;
    V[8] = sz; V[9] = uz; V[10] = -fz; V[11] = 0;
    V[12] = -(sx * eye[0] + sy * eye[1] + sz * eye[2]);
    V[13] = -(ux * eye[0] + uy * eye[1] + uz * eye[2]);
    V[14] = fx * eye[0] + fy * eye[1] + fz * eye[2]; V[15] = 1;
    var near = Math.max(cam.dist / 200, 0.5), far = cam.dist * 4 + 20000, f = 1 / Math.tan(FOV / 2);
    Pr.fill(0);
    Pr[0] = f / (W / H); Pr[5] = f; Pr[10] = (far + near) / (near - far); Pr[11] = -1;
    Pr[14] = 2 * far * near / (near - far);
    for (var c = 0; c < 4; c++) {
      for (var r = 0; r < 4; r++) {
        M[c * 4 + r] = Pr[r] * V[c * 4] + Pr[4 + r] * V[c * 4 + 1] + Pr[8 + r] * V[c * 4 + 2] + Pr[12 + r] * V[c * 4 + 3];
      }
    }
  }

  function sizeScale() { return NODE * H * dpr / (2 * Math.tan(FOV / 2)); }  // device px × depth

  // The sphere around what is shown: the camera distance that fits it with `pad` px spare.
  function framing(pad) {
    var lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity], any = false;
    for (var i = 0; i < P.length; i += 3) {
      if (isNaN(P[i])) continue;
      any = true;
      for (var a = 0; a < 3; a++) { var v = P[i + a]; if (v < lo[a]) lo[a] = v; if (v > hi[a]) hi[a] = v; }
    }
    if (!any) return null;
    var cx = (lo[0] + hi[0]) / 2, cy = (lo[1] + hi[1]) / 2, cz = (lo[2] + hi[2]) / 2, r2 = 0;
    for (var j = 0; j < P.length; j += 3) {
      if (isNaN(P[j])) continue;
      var d = (P[j] - cx) * (P[j] - cx) + (P[j + 1] - cy) * (P[j + 1] - cy) + (P[j + 2] - cz) * (P[j + 2] - cz);
      if (d > r2) r2 = d;
    }
    var r = Math.sqrt(r2) + NODE, half = Math.min(FOV, 2 * Math.atan(Math.tan(FOV / 2) * W / H)) / 2;
    var room = Math.max(0.2, 1 - 2 * pad / Math.min(W, H));
    return { x: cx, y: cy, z: cz, dist: Math.max(r / Math.sin(half) / room, 60) };
  }

  function moveTo(to, ms) {
    if (!ms) { anim = null; cam.x = to.x; cam.y = to.y; cam.z = to.z; cam.dist = to.dist; requestDraw(); return; }
    anim = { from: { x: cam.x, y: cam.y, z: cam.z, dist: cam.dist }, to: to, t0: performance.now(), ms: ms };
    schedule();
  }

  function stepAnim(now) {
    var t = Math.min(1, (now - anim.t0) / anim.ms), e = t < 0.5 ? 2 * t * t : 1 - 2 * (1 - t) * (1 - t);
    ["x", "y", "z", "dist"].forEach(function (k) { cam[k] = anim.from[k] + (anim.to[k] - anim.from[k]) * e; });
    if (t >= 1) anim = null;
  }

  // -- drawing -------------------------------------------------------------------------------
  var raf = 0, needsDraw = false, hoverX = -1, hoverY = -1, hoverDue = false, drewFirst = false,
      moving = 0, restTimer = null;
  function moved() {  // the camera moved: a sampled picture now, the whole one once it rests
    moving = performance.now();
    if (restTimer === null) restTimer = setTimeout(rest, REST_MS);
  }
  function rest() {
    restTimer = null;
    var left = moving + REST_MS - performance.now();
    if (left > 0) { restTimer = setTimeout(rest, left); return; }
    moving = 0;
    requestDraw();
  }
  function resting() { return !running && !moving && !anim; }
  function schedule() { if (!raf) raf = requestAnimationFrame(frame); }
  function requestDraw() { needsDraw = true; schedule(); }

  function frame(now) {
    raf = 0;
    if (anim) { stepAnim(now); needsDraw = true; }
    if (needsDraw) { needsDraw = false; draw(); }
    if (hoverDue) { hoverDue = false; hover(); }
    if (anim) schedule();
  }

  function draw() {
    if (posDirty && known) {
      posDirty = false;
      if (follow && !anim) {  // the first layout: the camera backs off as it grows, then fits it
        var f = framing(40);
        if (f && (!running || f.dist > cam.dist)) { cam.x = f.x; cam.y = f.y; cam.z = f.z; cam.dist = f.dist; }
      }
      gl.bindBuffer(gl.ARRAY_BUFFER, posBuf); gl.bufferSubData(gl.ARRAY_BUFFER, 0, P);
      for (var k = 0, j = 0; k < unconf.length; k += 2, j += 6) {
        var s = 3 * unconf[k], t = 3 * unconf[k + 1];
        dashPos[j] = P[s]; dashPos[j + 1] = P[s + 1]; dashPos[j + 2] = P[s + 2];
        dashPos[j + 3] = P[t]; dashPos[j + 4] = P[t + 1]; dashPos[j + 5] = P[t + 2];
        dashT[k] = 0;
        dashT[k + 1] = Math.max(3, Math.hypot(P[t] - P[s], P[t + 1] - P[s + 1], P[t + 2] - P[s + 2]) / 6);
      }
      if (unconf.length) {
        gl.bindBuffer(gl.ARRAY_BUFFER, dashPosBuf); gl.bufferSubData(gl.ARRAY_BUFFER, 0, dashPos);
        gl.bindBuffer(gl.ARRAY_BUFFER, dashTBuf); gl.bufferSubData(gl.ARRAY_BUFFER, 0, dashT);
      }
      if (returned) {  // the layout's buffer goes back: the next positions may come
        var buf = returned; returned = null;
        layout.post({ type: "ack", gen: gen, pos: buf }, [buf.buffer]);
      }
    }
    var calls = paint();
    self.frames++;
    self.calls = calls;
    opts.onDraw();
    if (!drewFirst && known && nodes.length) { drewFirst = true; opts.onFirstFrame(); }
  }

  function paint() {  // the picture from the buffers as they are; the number of draw calls
    matrices();
    gl.viewport(0, 0, canvas.width, canvas.height);
    gl.clearColor(BG[0], BG[1], BG[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    var calls = 0;
    if (known && nodes.length) {
      gl.disable(gl.DEPTH_TEST);
      gl.enable(gl.BLEND);
      gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
      if (edgeCount) {
        gl.useProgram(lines.p);
        gl.uniformMatrix4fv(lines.u.m, false, M);
        gl.uniform4f(lines.u.col, EDGE[0], EDGE[1], EDGE[2], 0.45);
        gl.bindVertexArray(vaoLines);
        var count = resting() ? edgeCount : Math.min(edgeCount, 2 * MOVING_EDGES);
        gl.drawElements(gl.LINES, count, gl.UNSIGNED_INT, 0);
        self.edgesDrawn = count / 2;
        calls++;
      }
      if (unconf.length) {
        gl.useProgram(dashes.p);
        gl.uniformMatrix4fv(dashes.u.m, false, M);
        gl.uniform4f(dashes.u.col, UNCONF[0], UNCONF[1], UNCONF[2], 1);
        gl.bindVertexArray(vaoDash);
        gl.drawArrays(gl.LINES, 0, unconf.length);
        calls++;
      }
      gl.disable(gl.BLEND);
      gl.enable(gl.DEPTH_TEST);
      gl.useProgram(points.p);
      gl.uniformMatrix4fv(points.u.m, false, M);
      gl.uniform1f(points.u.s, sizeScale());
      gl.uniform1f(points.u.k, 1);
      gl.uniform1f(points.u.useHi, 0);
      gl.uniform3f(points.u.hi, FOCUS[0], FOCUS[1], FOCUS[2]);
      gl.bindVertexArray(vaoPoints);
      gl.drawArrays(gl.POINTS, 0, nodes.length);
      calls++;
      var sel = index.get(opts.selected());
      if (sel !== undefined && !isNaN(P[3 * sel])) {  // the picked object: larger, in the focus colour, in front
        gl.disable(gl.DEPTH_TEST);
        gl.uniform1f(points.u.k, 1.7);
        gl.uniform1f(points.u.useHi, 1);
        gl.drawArrays(gl.POINTS, sel, 1);
        calls++;
      }
      gl.bindVertexArray(null);
    }
    return calls;
  }

  // -- picking (CPU): the front-most point whose disc holds (x, y), in CSS px ------------------
  function project(i, out) {
    var x = P[3 * i], y = P[3 * i + 1], z = P[3 * i + 2];
    var w = M[3] * x + M[7] * y + M[11] * z + M[15];
    if (!(w > 0)) return false;
    out[0] = ((M[0] * x + M[4] * y + M[8] * z + M[12]) / w * 0.5 + 0.5) * W;
    out[1] = (0.5 - (M[1] * x + M[5] * y + M[9] * z + M[13]) / w * 0.5) * H;
    out[2] = w;
    return true;
  }
  var scratch = new Float32Array(3);
  function pick(x, y) {
    if (!known) return -1;
    matrices();
    var best = -1, bestW = Infinity, s = sizeScale();
    for (var i = 0; i < nodes.length; i++) {
      if (!project(i, scratch)) continue;
      var r = Math.min(Math.max(s / scratch[2], 3), 128) / dpr / 2 + 2;
      var dx = scratch[0] - x, dy = scratch[1] - y;
      if (dx * dx + dy * dy <= r * r && scratch[2] < bestW) { best = i; bestW = scratch[2]; }
    }
    return best;
  }

  function hover() {
    var i = hoverX < 0 ? -1 : pick(hoverX, hoverY);
    canvas.style.cursor = i >= 0 ? "pointer" : "grab";
    if (i < 0) { tip.hidden = true; return; }
    tip.textContent = opts.tip(nodes[i]);
    tip.style.left = Math.min(hoverX + 12, W - 40) + "px";
    tip.style.top = (hoverY + 12) + "px";
    tip.hidden = false;
  }

  // -- the pointer: drag to turn, right-drag or shift-drag to move, wheel to zoom, click to pick
  var drag = null;
  function local(e) { var b = canvas.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; }
  function onDown(e) {
    var at = local(e);
    drag = { x: at[0], y: at[1], sx: at[0], sy: at[1], pan: e.button !== 0 || e.shiftKey, moved: false };
    canvas.setPointerCapture(e.pointerId);
    tip.hidden = true;
  }
  function onMove(e) {
    var at = local(e);
    if (!drag) { hoverX = at[0]; hoverY = at[1]; hoverDue = true; schedule(); return; }
    var dx = at[0] - drag.x, dy = at[1] - drag.y;
    drag.x = at[0]; drag.y = at[1];
    if (Math.abs(at[0] - drag.sx) + Math.abs(at[1] - drag.sy) > 4) drag.moved = true;
    if (!drag.moved) return;
    follow = false; anim = null;
    moved();
    if (drag.pan) {
      var k = cam.dist * 2 * Math.tan(FOV / 2) / H;  // layout units per px at the target
      cam.x -= (V[0] * dx - V[1] * dy) * k; cam.y -= (V[4] * dx - V[5] * dy) * k; cam.z -= (V[8] * dx - V[9] * dy) * k;
    } else {
      cam.yaw -= dx * 0.006;
      cam.pitch = Math.max(-1.5, Math.min(1.5, cam.pitch + dy * 0.006));
    }
    requestDraw();
  }
  function onUp(e) {
    if (!drag) return;
    var was = drag; drag = null;
    if (canvas.hasPointerCapture(e.pointerId)) canvas.releasePointerCapture(e.pointerId);
    if (was.moved || e.button !== 0) return;
    var at = local(e), i = pick(at[0], at[1]);
    if (i >= 0) opts.onPick(nodes[i]);
  }
  function onWheel(e) {
    e.preventDefault();
    follow = false; anim = null;
    moved();
    cam.dist = Math.max(10, Math.min(1e6, cam.dist * Math.exp(e.deltaY * 0.001)));
    requestDraw();
  }
  function onLeave() { hoverX = -1; tip.hidden = true; }
  function noMenu(e) { e.preventDefault(); }
  canvas.addEventListener("pointerdown", onDown);
  canvas.addEventListener("pointermove", onMove);
  canvas.addEventListener("pointerup", onUp);
  canvas.addEventListener("pointercancel", onUp);
  canvas.addEventListener("pointerleave", onLeave);
  canvas.addEventListener("wheel", onWheel, { passive: false });
  canvas.addEventListener("contextmenu", noMenu);

  function size(w, h) {
    dpr = Math.min(window.devicePixelRatio || 1, 2);
    W = Math.max(1, w); H = Math.max(1, h);
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    canvas.style.width = W + "px"; canvas.style.height = H + "px";
    requestDraw();
  }

  return {
    kind: "3d", graph: self,
    setData: setData,
    redraw: requestDraw,
    centerOn: function (n) {
      var i = index.get(n.id);
      if (i === undefined || isNaN(P[3 * i])) return;
      follow = false;
      moveTo({ x: P[3 * i], y: P[3 * i + 1], z: P[3 * i + 2], dist: Math.min(cam.dist, 160) }, 400);
    },
    screenOf: function (n) {
      var i = index.get(n.id);
      if (i === undefined) return null;
      matrices();
      return project(i, scratch) ? { x: scratch[0], y: scratch[1] } : null;
    },
    fit: function () { var f = framing(40); if (f) moveTo(f, 400); },
    size: size,
    drawn: function () {
      return { nodes: nodes.map(function (n) { return n.id; }), links: self.links || 0,
               unconfirmed: self.unconfirmed || 0,
               private: nodes.filter(function (n) { return n.private; }).map(function (n) { return n.label; }) };
    },
    destroy: function () {
      if (raf) cancelAnimationFrame(raf);
      if (restTimer !== null) clearTimeout(restTimer);
      raf = 0; anim = null;
      layout.stop();
      writeBack();
      var lose = gl.getExtension("WEBGL_lose_context");
      if (lose) lose.loseContext();
    }
  };
}
