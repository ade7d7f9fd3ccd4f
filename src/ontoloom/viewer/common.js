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

  function api(method, path, body) {
    var headers = { "Authorization": "Bearer " + (token() || "") };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) {
        return r.json().catch(function () { return { error: "bad_response", message: "the server answered " + r.status }; })
          .then(function (data) { return { status: r.status, data: data }; });
      });
  }

  function live() { return document.body.getAttribute("data-live") === "true"; }

  function status(text) { document.getElementById("status").textContent = text; }

  return { el: el, api: api, token: token, live: live, status: status };
})();
