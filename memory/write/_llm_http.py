"""One deadline over a whole HTTP request to the model server: connect, send, status line, headers, body.

httpx's timeouts are per socket operation, so a server that sends one header line a second resets the read
timeout at every line and keeps a write waiting as long as it likes. Here every socket operation of the
request gets at most the time left before the request's deadline, and none once it has passed: the request
ends with a timeout (`httpx.TimeoutException`) at the deadline, however the server paces its bytes.
"""

from __future__ import annotations

import ssl
import time
import typing
import urllib.request
from typing import Any

import httpcore
import httpx

__all__ = ["DeadlineTransport", "environment_proxy"]


def environment_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, minus
    `NO_PROXY`), as httpx would use it had it built the transport itself."""
    target = httpx.URL(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(target.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(target.host):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport, whose connections read and write within `deadline` (a `time.monotonic()`
    value; None: only httpx's per-operation timeouts)."""

    def __init__(self, proxy: str | None = None) -> None:
        super().__init__(proxy=proxy)
        self.deadline: float | None = None
        # The same pool httpx builds, over a network backend that clamps each operation's timeout. (Behind
        # a SOCKS proxy httpx's own pool stays: its timeouts are per operation there.)
        ssl_context = httpx.create_ssl_context()
        if proxy is None:
            self._pool = httpcore.ConnectionPool(ssl_context=ssl_context, network_backend=_Backend(self))
            return
        via = httpx.Proxy(proxy)
        if via.url.scheme in ("http", "https"):
            self._pool = httpcore.HTTPProxy(
                proxy_url=httpcore.URL(
                    scheme=via.url.raw_scheme,
                    host=via.url.raw_host,
                    port=via.url.port,
                    target=via.url.raw_path,
                ),
                proxy_auth=via.raw_auth,
                proxy_headers=via.headers.raw,
                ssl_context=ssl_context,
                proxy_ssl_context=via.ssl_context,
                network_backend=_Backend(self),
            )

    def left(self, timeout: float | None, error: type[Exception]) -> float | None:
        """The timeout for one socket operation: at most what is left before the deadline."""
        if self.deadline is None:
            return timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise error("the request's deadline passed")
        return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, owner: DeadlineTransport) -> None:
        self._inner = inner
        self._owner = owner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._owner.left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._owner.left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(
            ssl_context, server_hostname, self._owner.left(timeout, httpcore.ConnectTimeout)
        )
        return _Stream(inner, self._owner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, owner: DeadlineTransport) -> None:
        self._inner = httpcore.SyncBackend()
        self._owner = owner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = self._owner.left(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return _Stream(stream, self._owner)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        timeout = self._owner.left(timeout, httpcore.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, timeout, socket_options), self._owner)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)
