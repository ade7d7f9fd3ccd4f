"""A fault-injecting HTTP proxy on loopback, in front of one upstream (issue 13, "Faults").

The proxy listens on 127.0.0.1 and forwards each request, with the same path and query, to
the upstream origin, unless its :attr:`FaultProxy.mode` says otherwise:

``pass``
    forward and answer as the upstream did.
``down``
    the listening socket is closed: a new connection is refused (switching to another mode
    listens again on the same port).
``slow``
    wait :attr:`FaultProxy.delay` seconds, then forward and answer.
``error``
    answer :attr:`FaultProxy.status` (503 unless set) without forwarding.
``truncate``
    forward, then send the upstream's status line and headers (its full ``Content-Length``)
    and only the first half of its body, and close; an answer with an empty body (an update's
    204) is cut inside its headers instead, so the client never sees a whole response.
``drop_after_forward``
    forward (so an update IS applied upstream), then close the client's connection without
    a byte of answer: the lost acknowledgement of an endpoint restarted mid-write.

``set_mode(mode, only=updates, times=1)`` aims a fault at one kind of request (here: the
next update or Graph Store Protocol write; queries pass) and at so many of them.

An upstream that cannot be reached is answered 502 (in every mode that forwards). Every
answer closes its connection (``Connection: close``), so a mode switch applies to the
very next request, whatever the client's connection pool holds. :attr:`FaultProxy.counts`
counts requests by the mode they met (a connection refused in ``down`` never reaches the
proxy, so it is not counted), :attr:`FaultProxy.forwarded` those that reached the
upstream and :attr:`FaultProxy.forwarded_by` these by the mode they met (a test waits on
``forwarded_by["slow"]`` for a held request to have reached the upstream and been
answered). Standard library only (``http.server``, ``http.client``), threaded.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import socket
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qs, urlsplit, urlunsplit

__all__ = ["MODES", "FaultProxy", "Mode", "Request", "commits", "read_backs", "updates"]

Mode = Literal["pass", "down", "slow", "error", "truncate", "drop_after_forward"]
MODES: tuple[Mode, ...] = ("pass", "down", "slow", "error", "truncate", "drop_after_forward")

# Hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own business on each side.
_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
}
UPSTREAM_TIMEOUT = 300.0


@dataclass(frozen=True)
class Request:
    """A request as the proxy received it (for ``set_mode(only=…)``)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def is_update(self) -> bool:
        """A SPARQL update (form field or body) or a Graph Store Protocol write."""
        kind = next((v for k, v in self.headers.items() if k.lower() == "content-type"), "")
        if self.method in ("PUT", "DELETE", "PATCH"):
            return True
        if self.method != "POST":
            return False
        if kind.startswith("application/sparql-update"):
            return True
        if kind.startswith("application/x-www-form-urlencoded"):
            return "update" in parse_qs(self.body.decode("utf-8", "replace"))
        return not kind.startswith("application/sparql-query")  # an RDF payload: a GSP POST


def updates(request: Request) -> bool:
    """``only=updates``: the fault meets updates and GSP writes; queries pass."""
    return request.is_update


def commits(request: Request) -> bool:
    """``only=commits``: the fault meets ontoloom's guarded commits (the updates that move the
    generation), not the claims a writer takes first, nor queries."""
    if not request.is_update:
        return False
    text = parse_qs(request.body.decode("utf-8", "replace")).get("update", [""])[0]
    return "ontoloom.dev/ns#lastChange" in text  # what a commit (or a fence) stamps


def read_backs(request: Request) -> bool:
    """``only=read_backs``: the queries that ask whether a commit applied (its token)."""
    if request.is_update:
        return False
    body = request.body.decode("utf-8", "replace")
    text = (
        parse_qs(body).get("query", [body])[0]
        + parse_qs(urlsplit(request.path).query).get("query", [""])[0]
    )
    return "ontoloom.dev/ns#commit" in text


class FaultProxy:
    """``FaultProxy(upstream_url)``; :attr:`url` is the same URL through the proxy."""

    def __init__(self, upstream: str, *, delay: float = 5.0, status: int = 503) -> None:
        parts = urlsplit(upstream)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the fault proxy forwards to http:// URLs only, not {upstream!r}")
        self.upstream = upstream
        self._upstream_host = parts.hostname
        self._upstream_port = parts.port or 80
        self._upstream_netloc = parts.netloc
        self.delay = delay
        self.status = status
        self.counts: Counter[str] = Counter()
        self.forwarded = 0
        self.forwarded_by: Counter[str] = Counter()
        self._mode: Mode = "pass"
        self._only: Callable[[Request], bool] | None = None
        self._left: int | None = None
        self._then: Mode = "pass"
        self._lock = threading.Lock()
        self._closing = threading.Event()  # wakes the slow ones when the proxy closes
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self._listen()
        self.url = self.url_for(upstream)

    # -- public ---------------------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        return self._mode

    @mode.setter
    def mode(self, mode: Mode) -> None:
        self.set_mode(mode)

    def set_mode(
        self,
        mode: Mode,
        *,
        delay: float | None = None,
        status: int | None = None,
        only: Callable[[Request], bool] | None = None,
        times: int | None = None,
        then: Mode = "pass",
    ) -> None:
        """Switch to ``mode``; with ``only``, the fault meets just the requests it accepts
        (the others pass), and with ``times``, just that many, then the proxy is in ``then``
        (``pass`` unless set; for every request). ``down`` closes the port for every request,
        so it takes neither."""
        if mode not in MODES:
            raise ValueError(f"unknown fault mode {mode!r}; one of {', '.join(MODES)}")
        if mode == "down" and (only is not None or times is not None):
            raise ValueError("`down` closes the port for every request: no `only`, no `times`")
        if times is not None and times < 1:
            raise ValueError(f"times must be at least 1, not {times}")
        if delay is not None:
            self.delay = delay
        if status is not None:
            self.status = status
        with self._lock:
            self._mode = mode
            self._only = only
            self._left = times
            self._then = then
        if mode == "down":
            self._unlisten()
        elif self._server is None:
            self._listen()

    def url_for(self, upstream_url: str) -> str:
        """``upstream_url`` (on the same origin as the upstream) through this proxy."""
        parts = urlsplit(upstream_url)
        if parts.netloc != self._upstream_netloc:
            raise ValueError(f"{upstream_url} is not on the proxied origin {self._upstream_netloc}")
        return urlunsplit(parts._replace(netloc=f"127.0.0.1:{self.port}"))

    def reset_counts(self) -> None:
        with self._lock:
            self.counts.clear()
            self.forwarded = 0
            self.forwarded_by.clear()

    def close(self) -> None:
        self._closing.set()
        self._unlisten()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<FaultProxy {self.url} -> {self.upstream} mode={self._mode}>"

    # -- listening ------------------------------------------------------------------------------
    def _listen(self) -> None:
        handler = _handler_for(self)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def _unlisten(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()  # the port refuses connections from here on

    # -- forwarding -----------------------------------------------------------------------------
    def _count(self, request: Request) -> Mode:
        """The mode this request meets (counted), ``pass`` when it is not the fault's."""
        with self._lock:
            mode = self._mode
            if mode != "pass" and self._only is not None and not self._only(request):
                mode = "pass"
            elif mode != "pass" and self._left is not None:
                self._left -= 1
                if self._left == 0:
                    self._mode, self._only, self._left = self._then, None, None
            self.counts[mode] += 1
            return mode

    def _forward(
        self, method: str, path: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(
            self._upstream_host, self._upstream_port, timeout=UPSTREAM_TIMEOUT
        )
        try:
            connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            connection.putheader("Host", self._upstream_netloc)
            for name, value in headers:
                if name.lower() not in _HOP and name.lower() != "host":
                    connection.putheader(name, value)
            connection.putheader("Content-Length", str(len(body)))
            connection.putheader("Connection", "close")
            connection.endheaders(body)
            response = connection.getresponse()
            payload = response.read()
            with self._lock:
                self.forwarded += 1
            kept = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP]
            return response.status, response.reason, kept, payload
        finally:
            connection.close()


def _handler_for(proxy: FaultProxy) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # Content-Length framing; each answer still closes

        def _any(self) -> None:
            self.close_connection = True
            body = self._read_body()
            mode = proxy._count(Request(self.command, self.path, dict(self.headers.items()), body))
            if mode == "down":  # a request that raced the switch: refused like the rest
                self._abort()
                return
            if mode == "error":
                self._answer(proxy.status, "Injected fault", [], b"injected fault\n")
                return
            if mode == "slow" and proxy._closing.wait(proxy.delay):
                self._abort()
                return
            try:
                status, reason, headers, payload = proxy._forward(
                    self.command, self.path, list(self.headers.items()), body
                )
            except OSError as exc:
                self._answer(502, "Bad Gateway", [], f"upstream: {exc}\n".encode())
                return
            with proxy._lock:
                proxy.forwarded_by[mode] += 1
            if mode == "drop_after_forward":
                self._abort()
            elif mode == "truncate":
                self._truncated(status, reason, headers, payload)
            else:
                self._answer(status, reason, headers, payload)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _any

        def _read_body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks: list[bytes] = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass  # trailers
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _head(
            self, status: int, reason: str, headers: list[tuple[str, str]], size: int
        ) -> bytes:
            lines = [f"HTTP/1.1 {status} {reason}"]
            lines += [f"{k}: {v}" for k, v in headers]
            lines += [f"Content-Length: {size}", "Connection: close", "", ""]
            return "\r\n".join(lines).encode("latin-1")

        def _answer(
            self, status: int, reason: str, headers: list[tuple[str, str]], payload: bytes
        ) -> None:
            self.wfile.write(self._head(status, reason, headers, len(payload)) + payload)
            self.wfile.flush()

        def _truncated(
            self, status: int, reason: str, headers: list[tuple[str, str]], payload: bytes
        ) -> None:
            head = self._head(status, reason, headers, len(payload))
            cut = head + payload[: len(payload) // 2] if payload else head[: len(head) // 2]
            self.wfile.write(cut)
            self.wfile.flush()
            self._abort()

        def _abort(self) -> None:
            """Close the client's connection now, with nothing more sent."""
            self.close_connection = True
            with contextlib.suppress(OSError):  # the client may have gone already
                self.connection.shutdown(socket.SHUT_RDWR)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler
