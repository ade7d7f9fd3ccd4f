// Shared by the pages: building elements (text only, never HTML from data) and, on a page
// served by `ontoloom serve --ui`, calling the server with the bearer token.
"use strict";
var ontoloom = (function () {
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "onclick") node.addEventListener("click", attrs[k]);
      else if (attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false) node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  // The token comes in the address's fragment (never sent to the server, never logged),
  // is kept for this tab only and taken out of the address bar.
  function token() {
    var m = /(?:^#|&)token=([^&]+)/.exec(location.hash || "");
    if (m) {
      sessionStorage.setItem("ontoloom-token", decodeURIComponent(m[1]));
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem("ontoloom-token");
  }

  // No token yet (or a refused one): a labelled field asks for it, then the page starts.
  function askToken(then, refused) {
    if (document.getElementById("token-form")) return;
    var input = el("input", { type: "password", id: "token", autocomplete: "off", required: "required" });
    var form = el("form", { id: "token-form", "class": "card", "aria-labelledby": "token-heading" }, [
      el("h2", { id: "token-heading", text: refused ? "The token was refused" : "Access token" }),
      el("label", { "for": "token", text: "Token (ONTOLOOM_TOKEN, else the data dir's serve.token)" }), input,
      el("p", {}, [el("button", { type: "submit", "class": "primary", text: "Open" })])]);
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      sessionStorage.setItem("ontoloom-token", input.value.trim());
      form.remove();
      then();
    });
    document.body.insertBefore(form, document.body.children[1] || null);
    input.focus();
  }

  function withToken(then) {
    if (token()) then(); else askToken(then, false);
  }

  function api(method, path, body) {
    var headers = { "Authorization": "Bearer " + (token() || "") };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) {
        return r.json().catch(function () { return { error: "bad_response", message: "the server answered " + r.status }; })
          .then(function (data) {
            if (r.status === 401) {
              sessionStorage.removeItem("ontoloom-token");
              askToken(function () { location.reload(); }, true);
            }
            return { status: r.status, data: data };
          });
      });
  }

  function live() { return document.body.getAttribute("data-live") === "true"; }

  function status(text) { document.getElementById("status").textContent = text; }

  return { el: el, api: api, token: token, live: live, status: status, withToken: withToken };
})();
