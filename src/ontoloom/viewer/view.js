// The graph page: force-graph on a canvas (2D) or ontoloom's WebGL2 drawing (3D), with search,
// filters and a details panel that make every object reachable by keyboard too. The data,
// the filters, the search and the details are this file's and the same in both drawings; a
// drawing is only an adapter (make2D, make3D) that takes the visible nodes and links and
// reports clicks, so switching keeps every choice made on the page.
"use strict";
(function () {
  var el = ontoloom.el;
  var css = getComputedStyle(document.documentElement);
  function colour(name) { return css.getPropertyValue("--" + name).trim(); }
  var EDGE = colour("edge"), UNCONFIRMED = colour("unconfirmed"), TEXT = colour("text"),
      BG = colour("background"), FOCUS = colour("focus"), PRIVATE = colour("private");
  var LIMIT = 50;  // search matches listed at once

  var state = { data: null, nodes: {}, adj: {}, shown: null, typeOn: {}, relOn: {},
                unconfirmed: true, selected: null, visible: { nodes: [], links: [] }, fit: true,
                mode: "2d" };
  var fg = null;  // the drawing: { kind, setData, redraw, centerOn, screenOf, destroy, graph }

  function typeKey(n) { return n.private ? "private" : n.type; }

  function load() {
    var embedded = JSON.parse(document.getElementById("ontoloom-data").textContent);
    if (embedded) return Promise.resolve(embedded);
    var params = new URLSearchParams(location.search);
    params.delete("view");
    if (document.getElementById("include-private").checked) params.set("include_private", "1");
    return ontoloom.api("GET", "api/view?" + params.toString()).then(function (r) {
      if (r.status !== 200) throw new Error(r.data.message || ("the server answered " + r.status));
      return r.data;
    });
  }

  function neighbourhood(start, depth) {
    var seen = new Set([start]), frontier = [start];
    for (var d = 0; d < depth; d++) {
      var next = [];
      frontier.forEach(function (id) {
        (state.adj[id] || []).forEach(function (l) {
          var other = l.source === id ? l.target : l.source;
          if (!seen.has(other)) { seen.add(other); next.push(other); }
        });
      });
      frontier = next;
    }
    return seen;
  }

  function init(data) {
    state.data = data;
    state.nodes = {}; state.adj = {};
    var colours = {};
    data.legend.forEach(function (t) { colours[t.type] = t.colour; });
    data.nodes.forEach(function (n) {
      n.colour = n.private ? PRIVATE : colours[n.type];
      state.nodes[n.id] = n; state.adj[n.id] = [];
    });
    data.links.forEach(function (l) { state.adj[l.source].push(l); state.adj[l.target].push(l); });
    state.shown = data.meta.focus ? neighbourhood(data.meta.focus, data.meta.depth || 0) : null;
    buildFilters(data);
    buildLegend(data);
    state.selected = null;
    state.fit = true;
    refresh();
    if (data.meta.focus) select(data.meta.focus, false);
    else document.getElementById("details").replaceChildren(el("h2", { text: "Details" }),
      el("p", { "class": "help", text: "Pick an object: click it, or search for it." }));
    search();
  }

  function checkbox(id, label, checked, onchange, swatch) {
    var box = el("input", { type: "checkbox", id: id });
    box.checked = checked;
    box.addEventListener("change", function () { onchange(box.checked); });
    return el("label", { "for": id }, [box, " ", swatch ? el("span", { "class": "swatch", style: "background:" + swatch, "aria-hidden": "true" }) : null, label]);
  }

  function buildFilters(data) {
    var types = document.getElementById("type-filter");
    types.replaceChildren(el("legend", { text: "Types" }));
    data.legend.forEach(function (t, i) {
      if (!(t.type in state.typeOn)) state.typeOn[t.type] = true;
      types.appendChild(checkbox("type-" + i, t.type + " (" + t.count + ")", state.typeOn[t.type],
        function (on) { state.typeOn[t.type] = on; refresh(); }, t.colour));
    });
    var rels = document.getElementById("relation-filter");
    rels.replaceChildren(el("legend", { text: "Relations" }));
    if (!data.relations.length) rels.appendChild(el("p", { "class": "help", text: "No relations." }));
    data.relations.forEach(function (r, i) {
      if (!(r in state.relOn)) state.relOn[r] = true;
      rels.appendChild(checkbox("rel-" + i, r, state.relOn[r], function (on) { state.relOn[r] = on; refresh(); }));
    });
  }

  function buildLegend(data) {
    var list = document.getElementById("legend-list");
    list.replaceChildren();
    data.legend.forEach(function (t) {
      list.appendChild(el("li", {}, [el("span", { "class": "swatch", style: "background:" + t.colour, "aria-hidden": "true" }),
        el("span", { style: "color:" + t.colour, text: t.type }), " (" + t.count + ")"]));
    });
  }

  function isVisible(n) {
    return n && (state.shown === null || state.shown.has(n.id)) && state.typeOn[typeKey(n)] !== false;
  }

  function refresh() {
    state.settled = false;
    var nodes = state.data.nodes.filter(isVisible);
    var links = state.data.links.filter(function (l) {
      return state.relOn[l.rel] !== false && (state.unconfirmed || l.status !== "unconfirmed") &&
        isVisible(state.nodes[l.source]) && isVisible(state.nodes[l.target]);
    });
    state.visible = { nodes: nodes, links: links };
    var m = state.data.meta;
    var text = nodes.length + " of " + m.nodes + " objects and " + links.length + " of " + m.links + " relations shown";
    if (m.unconfirmed) text += "; " + m.unconfirmed + " unconfirmed proposal(s) drawn dashed";
    if (m.private_hidden) text += "; " + m.private_hidden + " private object(s) shown only as \u201cprivate\u201d";
    ontoloom.status(text);
    if (!fg) return;
    fg.setData(nodes, links.map(function (l) {
      return { source: l.source, target: l.target, rel: l.rel, status: l.status, ref: l };
    }));
  }

  function label(n) { return n.private ? "private" : n.label; }

  function drawNode(n, ctx, scale) {
    var few = state.visible.nodes.length <= 150;
    if (state.selected === n.id) {
      ctx.beginPath(); ctx.arc(n.x, n.y, 7, 0, 2 * Math.PI);
      ctx.lineWidth = 2 / scale; ctx.strokeStyle = FOCUS; ctx.stroke();
    }
    if (!(few || scale >= 2.5 || state.selected === n.id)) return;
    var size = 12 / scale;
    ctx.font = size + "px system-ui, sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    ctx.lineWidth = 3 / scale; ctx.strokeStyle = BG; ctx.strokeText(label(n), n.x, n.y + 5);
    ctx.fillStyle = n.private ? PRIVATE : TEXT; ctx.fillText(label(n), n.x, n.y + 5);
  }

  function drawLink(l, ctx, scale) {
    if (l.status !== "unconfirmed" || typeof l.source !== "object") return;
    if (!(state.visible.links.length <= 300 || scale >= 2)) return;
    var x = (l.source.x + l.target.x) / 2, y = (l.source.y + l.target.y) / 2;
    ctx.font = (10 / scale) + "px system-ui, sans-serif";
    ctx.textAlign = "center"; ctx.textBaseline = "bottom";
    ctx.lineWidth = 3 / scale; ctx.strokeStyle = BG; ctx.strokeText("unconfirmed", x, y);
    ctx.fillStyle = UNCONFIRMED; ctx.fillText("unconfirmed", x, y);
  }

  function text(s) {  // force-graph puts tooltips in as HTML: only escaped text goes in
    var d = document.createElement("div"); d.textContent = s; return d.innerHTML;
  }

  // Every picture a drawing paints is counted (the bench reads it: frames drawn, not only
  // frames the browser offered, while the view is dragged).
  function drew() { window.ontoloomDrawn = (window.ontoloomDrawn || 0) + 1; }

  function firstFrame() {  // when a graph was first drawn (ms since the page began): the bench reads it
    if (!window.ontoloomFirstFrame && state.visible.nodes.length) window.ontoloomFirstFrame = performance.now();
  }

  function engineStop() {
    state.settled = true;
    if (fg.kind === "2d") fg.graph.enablePointerInteraction(true);
    if (!window.ontoloomSettled) window.ontoloomSettled = performance.now();  // the bench reads it
    if (state.fit) { state.fit = false; fg.fit(); }
  }

  function nodeTip(n) { return text(n.private ? "private" : n.label + " (" + n.id + ", " + n.type + ")"); }
  function linkTip(l) { return text(l.rel + (l.status === "unconfirmed" ? " (unconfirmed proposal)" : "")); }
  function linkColour(l) { return l.status === "unconfirmed" ? UNCONFIRMED : EDGE; }

  // The 2D drawing: force-graph on a canvas, labels drawn on a small graph.
  function make2D(box, big) {
    var g = ForceGraph()(box)
      .backgroundColor(BG)
      .nodeId("id")
      .nodeRelSize(4)
      .nodeColor(function (n) { return n.colour; })
      .nodeLabel(nodeTip)
      .nodeCanvasObjectMode(function () { return "after"; })
      .nodeCanvasObject(drawNode)
      .linkColor(linkColour)
      .linkLineDash(function (l) { return l.status === "unconfirmed" ? [4, 3] : null; })
      .linkWidth(function (l) { return l.status === "unconfirmed" ? 1.5 : 1; })
      .linkLabel(linkTip)
      .linkCanvasObjectMode(function () { return "after"; })
      .linkCanvasObject(drawLink)
      .linkDirectionalArrowLength(big ? 0 : 3.5)
      .linkDirectionalArrowRelPos(1)
      .onNodeClick(function (n) { select(n.id, false); })
      .onRenderFramePost(function () { drew(); firstFrame(); })
      .onEngineStop(engineStop);
    // A big graph draws at once and settles within seconds; a small one is laid out mostly
    // before its first picture.
    // A big graph: no hover picking while the layout runs (force-graph repaints its picking
    // canvas, a second drawing of everything, every 800 ms); it comes back when it settles.
    if (big) g.cooldownTime(8000).d3AlphaDecay(0.05).warmupTicks(0).enablePointerInteraction(false);
    else {
      // Labels are drawn on a small graph: spread it so they have room.
      g.warmupTicks(100).cooldownTicks(200);
      g.d3Force("charge").strength(-90);
      g.d3Force("link").distance(45);
    }
    return {
      kind: "2d", graph: g,
      setData: function (nodes, links) { g.graphData({ nodes: nodes, links: links }); },
      redraw: function () { g.nodeColor(g.nodeColor()); },  // the selection ring, layout untouched
      centerOn: function (n) { if (typeof n.x === "number") g.centerAt(n.x, n.y, 400); },
      screenOf: function (n) { return g.graph2ScreenCoords(n.x, n.y); },
      fit: function () { g.zoomToFit(400, 40); },
      size: function (w, h) { g.width(w).height(h); },
      drawn: function () {  // what force-graph holds, not the page's list
        var d = g.graphData();
        return { nodes: d.nodes.map(function (n) { return n.id; }), links: d.links.length,
                 unconfirmed: d.links.filter(function (l) { return l.status === "unconfirmed"; }).length,
                 private: d.nodes.filter(function (n) { return n.private; }).map(function (n) { return n.label; }) };
      },
      destroy: function () { g.pauseAnimation(); g._destructor(); }
    };
  }

  // The 3D drawing: ontoloom's own WebGL2 drawing (drawing3d.js) over d3-force-3d run in a Web
  // Worker (layout.js): a few draw calls whatever the size. No text is drawn in the scene: the
  // name shows on hover and in the details panel; an unconfirmed proposal is dashed, as in 2D.
  function make3D(box, big) {
    return ontoloomDrawing3D(box, {
      big: big, background: BG, edge: EDGE, unconfirmed: UNCONFIRMED, focus: FOCUS,
      selected: function () { return state.selected; },
      tip: function (n) { return n.private ? "private" : n.label + " (" + n.id + ", " + n.type + ")"; },
      onPick: function (n) { select(n.id, false); },
      onDraw: drew,
      onFirstFrame: firstFrame,  // drawn in this frame: on screen with the next, which the bench takes
      onStop: engineStop
    });
  }

  function can3D() { return typeof ontoloomDrawing3D === "function"; }

  function resize() {
    if (!fg) return;
    var box = document.getElementById("graph").getBoundingClientRect();
    fg.size(box.width, box.height);
  }

  // Draw with `mode` ("2d" or "3d"); the page's state (filters, search, selection) stays.
  function makeGraph(mode) {
    var box = document.getElementById("graph");
    var note = document.getElementById("mode-help");
    if (fg) {
      fg.destroy();
      fg = null;
      // The library's own marks on the shared node objects (picking colours, scene objects)
      // belong to the drawing just left; positions (x, y, z) carry over.
      state.data.nodes.forEach(function (n) {
        Object.keys(n).forEach(function (k) { if (k.indexOf("__") === 0) delete n[k]; });
      });
      box.replaceChildren();
    }
    var big = state.data.nodes.length > 2000;
    state.settled = false;
    window.ontoloomFirstFrame = window.ontoloomSettled = undefined;
    if (mode === "3d" && can3D()) {
      try {
        fg = make3D(box, big);
      } catch (err) {  // no WebGL here: say so and draw in 2D
        box.replaceChildren();
        fg = null;
        note.textContent = "3D needs WebGL, which this browser does not offer (" + err.message + "); drawn in 2D.";
        document.getElementById("mode-3d").disabled = true;
        mode = "2d";
      }
    }
    if (!fg) fg = make2D(box, big);
    state.mode = fg.kind;
    document.getElementById("mode-" + fg.kind).checked = true;
    box.setAttribute("data-mode", fg.kind);
    resize();
  }

  // -- search -------------------------------------------------------------------------------
  function matches(q) {
    q = q.trim().toLowerCase();
    if (!q) return [];
    return state.data.nodes.filter(function (n) {
      if (n.private) return false;
      if (n.id.toLowerCase().indexOf(q) >= 0 || String(n.label).toLowerCase().indexOf(q) >= 0) return true;
      return (n.aliases || []).some(function (a) { return a.toLowerCase().indexOf(q) >= 0; });
    });
  }

  function search() {
    var q = document.getElementById("search").value;
    var found = matches(q);
    var list = document.getElementById("results");
    list.replaceChildren();
    found.slice(0, LIMIT).forEach(function (n) {
      list.appendChild(el("li", {}, [el("button", { type: "button", "data-id": n.id,
        text: n.label + " \u2014 " + n.type + " (" + n.id + ")", onclick: function () { select(n.id, true); } })]));
    });
    document.getElementById("results-count").textContent = !q.trim() ? "" :
      found.length + " match(es)" + (found.length > LIMIT ? ", the first " + LIMIT + " listed" : "");
    return found;
  }

  // -- details ------------------------------------------------------------------------------
  function reveal(id) {  // whether the object had to be brought into view
    var n = state.nodes[id], changed = false;
    if (state.shown !== null && !state.shown.has(id)) { state.shown.add(id); changed = true; }
    if (state.typeOn[typeKey(n)] === false) {
      state.typeOn[typeKey(n)] = true;
      buildFilters(state.data);
      changed = true;
    }
    return changed;
  }

  function expand(id) {
    if (state.shown === null) return;
    (state.adj[id] || []).forEach(function (l) { state.shown.add(l.source); state.shown.add(l.target); });
    refresh();
    select(id, false);
  }

  function focusOn(id) {
    state.shown = neighbourhood(id, 1);
    state.fit = true;
    refresh();
    select(id, false);
  }

  function evidenceText(ev) {
    if (!ev || !ev.source) return "evidence: none recorded (written directly, not read from a record)";
    return "evidence: " + ev.source + (ev.line ? ":" + ev.line : " (line not recorded)");
  }

  function relationItem(id, l) {
    var out = l.source === id;
    var other = state.nodes[out ? l.target : l.source];
    var parts = [out ? l.rel + " \u2192 " : "\u2190 " + l.rel + " ",
      el("button", { type: "button", "class": "linklike", "data-id": other.id, text: label(other),
        onclick: function () { select(other.id, true); } })];
    if (l.status === "unconfirmed") {
      parts.push(el("span", { "class": "badge unconfirmed", text: "unconfirmed" + (l.tier ? ", " + l.tier : "") }));
    }
    if (!other.private && !state.nodes[id].private) {
      parts.push(el("div", { "class": "help", text: evidenceText(l.evidence) }));
      if (l.evidence && l.evidence.quote) parts.push(el("blockquote", { "class": "help", text: l.evidence.quote }));
    }
    return el("li", {}, parts);
  }

  function select(id, moveFocus) {
    var n = state.nodes[id];
    if (!n) return;
    state.selected = id;
    if (reveal(id)) refresh();
    else if (fg) fg.redraw();  // redraw the selection mark, layout untouched
    var panel = document.getElementById("details");
    var kids = [el("h2", { id: "details-title", text: label(n) })];
    if (n.private) {
      kids.push(el("p", { "class": "private", text: "A private object: its id, type, title, properties and evidence are left out of this view. " +
        (ontoloom.live() ? "Tick \u201cShow private objects\u201d to see it." : "`ontoloom view --include-private` shows it.") }));
    } else {
      var dl = el("dl");
      [["id", n.id], ["type", n.type], ["privacy class", n.privacy || "none set"],
       ["record", n.source ? n.source : "none (written directly, not read from a record)"]].forEach(function (kv) {
        dl.appendChild(el("dt", { text: kv[0] })); dl.appendChild(el("dd", { text: kv[1] }));
      });
      kids.push(dl);
      var props = el("dl");
      Object.keys(n.props || {}).forEach(function (k) {
        var v = n.props[k];
        props.appendChild(el("dt", { text: k }));
        props.appendChild(el("dd", { text: Array.isArray(v) ? v.join(", ") : String(v) }));
      });
      kids.push(el("h3", { text: "Properties" }), props);
    }
    var rels = state.adj[id] || [];
    var hiddenNeighbours = rels.filter(function (l) {
      return !isVisible(state.nodes[l.source === id ? l.target : l.source]);
    }).length;
    var expandButton = el("button", { type: "button", id: "expand", onclick: function () { expand(id); } });
    expandButton.textContent = hiddenNeighbours ? "Expand neighbours (" + hiddenNeighbours + " hidden)" : "All neighbours shown";
    expandButton.disabled = !hiddenNeighbours || state.shown === null;
    kids.push(el("div", { "class": "actions" }, [expandButton, " ",
      el("button", { type: "button", id: "focus-here", text: "Show only this and its neighbours", onclick: function () { focusOn(id); } })]));
    kids.push(el("h3", { text: "Relations (" + rels.length + ")" }));
    var list = el("ul", { "class": "rels" });
    rels.forEach(function (l) { list.appendChild(relationItem(id, l)); });
    kids.push(list);
    panel.replaceChildren.apply(panel, kids);
    if (moveFocus) panel.focus();
    if (fg) setTimeout(function () { if (fg) fg.centerOn(n); }, 50);
  }

  // -- wiring -------------------------------------------------------------------------------
  document.getElementById("search").addEventListener("input", search);
  document.getElementById("search").addEventListener("keydown", function (e) {
    if (e.key === "Enter") { var found = search(); if (found.length) select(found[0].id, true); }
  });
  document.getElementById("show-unconfirmed").addEventListener("change", function (e) {
    state.unconfirmed = e.target.checked; refresh();
  });
  document.getElementById("show-all").addEventListener("click", function () { state.shown = null; state.fit = true; refresh(); });
  document.getElementById("include-private").addEventListener("change", function () { start(); });
  ["2d", "3d"].forEach(function (mode) {
    document.getElementById("mode-" + mode).addEventListener("change", function (e) {
      if (e.target.checked && state.data && mode !== state.mode) { makeGraph(mode); state.fit = true; refresh(); }
    });
  });
  window.addEventListener("resize", resize);

  function start() {
    load().then(function (data) {
      if (!fg) { state.data = data; makeGraph(state.mode); }
      init(data);
    }).catch(function (err) { ontoloom.status("Could not load the graph: " + err.message); });
  }

  // The drawing the page opens in: the file's (`view --3d`), or a live page's `?view=3d`.
  var asked = new URLSearchParams(location.search).get("view") || document.body.getAttribute("data-mode");
  state.mode = asked === "3d" ? "3d" : "2d";
  if (!can3D()) {
    document.getElementById("mode-3d").disabled = true;
    document.getElementById("mode-help").textContent =
      "This file holds the 2D drawing only; `ontoloom view --3d` writes one with both.";
  }

  window.ontoloomView = {
    select: function (id) { select(id, false); },
    visible: function () { return { nodes: state.visible.nodes.map(function (n) { return n.id; }),
      links: state.visible.links.length }; },
    screenOf: function (id) { return fg.screenOf(state.nodes[id]); },
    graph: function () { return fg.graph; },
    drawn: function () { return fg.drawn(); },
    mode: function () { return fg ? fg.kind : null; },
    setMode: function (mode) { document.getElementById("mode-" + mode).click(); },
    settled: function () { return !!state.settled; },
    selected: function () { return state.selected; }
  };
  if (ontoloom.live()) ontoloom.withToken(start); else start();
})();
