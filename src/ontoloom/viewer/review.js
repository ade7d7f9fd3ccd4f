// The review page: pending proposals and wikilink candidates, each decided through the
// server, which runs the same command line the CLI would (`ontoloom proposals confirm …`).
"use strict";
(function () {
  var el = ontoloom.el;

  function evidence(ev) {
    var where = ev.source || ev.transcript || null;
    var parts = [el("div", { "class": "help", text: where ? "evidence: " + where + (ev.line ? ":" + ev.line : " (line not recorded)") : "evidence: none recorded" })];
    if (ev.quote) parts.push(el("blockquote", { text: ev.quote }));
    return parts;
  }

  function outcome(title, ok, report) {
    var body = document.getElementById("outcome-body");
    var kids = [el("p", { "class": ok ? "ok" : "error", text: title })];
    if (report) kids.push(el("pre", { text: report }));
    body.replaceChildren.apply(body, kids);
    document.getElementById("outcome").focus();
  }

  function describe(data) {  // a refusal's report: the message and every finding with its fix
    var lines = [data.message || (data.error === "validation" ? "refused by a rule:" : data.error || "refused")];
    (data.results || data.findings || []).forEach(function (f) {
      lines.push("- " + (f.focus ? f.focus + " " : "") + (f.path ? f.path + ": " : "") +
        (f.message || JSON.stringify(f)) + (f.fix ? " \u2014 fix: " + f.fix : ""));
    });
    return lines.join("\n");
  }

  function act(action, body, done) {
    ontoloom.api("POST", "api/review/" + action, body).then(function (r) {
      if (r.status === 200) {
        outcome(done(r.data), true);
        reload();
      } else {
        outcome("Refused (" + (r.data.error || r.status) + "): nothing was stored.", false, describe(r.data));
      }
    }).catch(function (err) { outcome("Could not reach the server: " + err.message, false); });
  }

  function proposalCard(p) {
    var reason = el("input", { type: "text", id: "reason-" + p.id, name: "reason" });
    return el("article", { "class": "card", "data-id": p.id, "aria-labelledby": "p-" + p.id }, [
      el("h3", { id: "p-" + p.id }, [p.source + " ", el("strong", { text: p.rel }), " " + p.target]),
      el("p", {}, [el("span", { "class": "badge unconfirmed", text: "unconfirmed" }), " tier " + p.tier + " \u00b7 from " + p.origin + " \u00b7 id " + p.id])
    ].concat(evidence(p.evidence || {})).concat([
      el("div", { "class": "actions" }, [
        el("button", { type: "button", "class": "primary confirm", text: "Confirm", "aria-describedby": "p-" + p.id,
          onclick: function () { act("confirm", { id: p.id }, function (d) {
            var wb = d.writeback;
            return (d.already ? "Already confirmed: " : "Confirmed: ") + p.source + " " + p.rel + " " + p.target +
              (wb && wb.written ? " \u2014 written back to " + wb.path : wb ? " \u2014 not written back to " + wb.path + ": " + wb.reason : "");
          }); } }),
        el("label", { "for": "reason-" + p.id }, ["Reason (optional)", reason]),
        el("button", { type: "button", "class": "reject", text: "Reject", "aria-describedby": "p-" + p.id,
          onclick: function () { act("reject", { id: p.id, reason: reason.value || null }, function () {
            return "Rejected " + p.id + ": it will not be proposed again."; }); } })
      ])
    ]));
  }

  function candidateCard(c) {
    // only the relations the schema allows for this pair, the most specific first (selected);
    // none: the button is disabled and says why, instead of offering a refusal
    var select = el("select", { id: "rel-" + c.id, name: "rel" });
    var fitting = c.relations || [];
    fitting.forEach(function (r) { select.appendChild(el("option", { value: r, text: r })); });
    var typeButton = el("button", { type: "button", "class": "primary type", text: "Type as relation", "aria-describedby": "c-" + c.id,
      onclick: function () { act("type", { id: c.id, rel: select.value }, function (d) {
        return "Proposed (pending): " + d.source + " " + d.rel + " " + d.target + " [" + d.id + "]"; }); } });
    if (!fitting.length) {
      select.appendChild(el("option", { value: "", text: "no relation of the schema fits these two" }));
      select.disabled = true;
      typeButton.disabled = true;
    }
    return el("article", { "class": "card", "data-id": c.id, "aria-labelledby": "c-" + c.id }, [
      el("h3", { id: "c-" + c.id, text: c.source + " \u2192 " + (c.target || c.target_text) }),
      el("div", { "class": "help", text: "evidence: " + c.path + ":" + c.line }),
      el("blockquote", { text: c.sentence }),
      el("div", { "class": "actions" }, [
        el("label", { "for": "rel-" + c.id }, ["Relation", select]),
        typeButton,
        el("button", { type: "button", "class": "dismiss", text: "Dismiss", "aria-describedby": "c-" + c.id,
          onclick: function () { act("dismiss", { id: c.id }, function () { return "Dismissed " + c.id + "."; }); } })
      ])
    ]);
  }

  function fill(id, items, make, empty) {
    var box = document.getElementById(id);
    box.replaceChildren();
    if (!items.length) box.appendChild(el("p", { "class": "help", text: empty }));
    items.forEach(function (i) { box.appendChild(make(i)); });
  }

  function reload() {
    return ontoloom.api("GET", "api/review").then(function (r) {
      if (r.status !== 200) { ontoloom.status("Could not load the queue: " + (r.data.message || r.status)); return; }
      fill("proposals", r.data.proposals, proposalCard, "No pending proposals.");
      fill("candidates", r.data.candidates, candidateCard, "The worklist is empty.");
      ontoloom.status(r.data.proposals.length + " pending proposal(s), " + r.data.candidates.length + " wikilink candidate(s)");
    }).catch(function (err) { ontoloom.status("Could not reach the server: " + err.message); });
  }
  ontoloom.withToken(reload);
})();
