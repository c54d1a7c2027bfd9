"""HTTP plumbing shared by the Prometheus and web providers (the only httpx users of the layer).

Every failure becomes a :class:`~kruise.core.errors.ProviderError` whose message names the URL
and what went wrong (``timed out after 2s``, ``connection failed: ...``), which the providers
turn into Error measurements. ``timeout`` bounds the whole exchange (connect, send, wait, read),
not just each socket operation, as Go's ``http.Client.Timeout`` and ``context.WithTimeout`` do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

from kruise.analysis.api import Authentication, WebMetricHeader
from kruise.core.errors import ProviderError

__all__ = ["HttpRequest", "send"]


@dataclass(frozen=True)
class HttpRequest:
    """One request: ``timeout`` in seconds for the whole exchange; ``insecure`` skips TLS checks."""

    method: str
    url: str
    timeout: float
    headers: Sequence[WebMetricHeader] = ()
    insecure: bool = False
    authentication: Authentication | None = None
    content: bytes | None = None
    form: Mapping[str, str] | None = None
    content_type: str | None = None


def _seconds(value: float) -> str:
    return f"{value:g}s"


async def _oauth2_token(client: httpx.AsyncClient, auth: Authentication) -> str:
    oauth = auth.oauth2
    assert oauth is not None
    if not oauth.token_url:
        raise ProviderError("oauth2 authentication needs a tokenUrl")
    form = {"grant_type": "client_credentials"}
    if oauth.client_id:
        form["client_id"] = oauth.client_id
    if oauth.client_secret:
        form["client_secret"] = oauth.client_secret
    if oauth.scopes:
        form["scope"] = " ".join(oauth.scopes)
    answer = await client.post(oauth.token_url, data=form)
    if answer.status_code // 100 != 2:
        raise ProviderError(f"oauth2 token request to {oauth.token_url} answered {answer.status_code}")
    try:
        return str(answer.json()["access_token"])
    except (ValueError, KeyError, TypeError) as err:
        raise ProviderError(f"oauth2 token answer from {oauth.token_url} has no access_token") from err


async def _exchange(client: httpx.AsyncClient, request: HttpRequest) -> httpx.Response:
    headers = {h.key: h.value for h in request.headers}
    if request.content_type and "content-type" not in {k.lower() for k in headers}:
        headers["Content-Type"] = request.content_type
    auth: httpx.Auth | None = None
    if request.authentication is not None:
        if request.authentication.sigv4 is not None:
            raise ProviderError("sigv4 authentication is not supported by kruise")
        if request.authentication.oauth2 is not None:
            headers["Authorization"] = f"Bearer {await _oauth2_token(client, request.authentication)}"
        basic = request.authentication.basic_auth
        if basic is not None:
            auth = httpx.BasicAuth(basic.username or "", basic.password or "")
    return await client.request(
        request.method,
        request.url,
        headers=headers,
        content=request.content,
        data=dict(request.form) if request.form is not None else None,
        auth=auth,
    )


async def send(request: HttpRequest, transport: httpx.AsyncBaseTransport | None = None) -> httpx.Response:
    """Send ``request`` and return the answer (any status code), body read.

    Raises :class:`ProviderError` on a timeout, a connection or TLS failure, an invalid URL, or
    an authentication that cannot be performed.
    """
    timeout = httpx.Timeout(request.timeout)
    try:
        async with (
            asyncio.timeout(request.timeout),
            httpx.AsyncClient(timeout=timeout, verify=not request.insecure, transport=transport) as client,
        ):
            answer = await _exchange(client, request)
            await answer.aread()
            return answer
    except (TimeoutError, httpx.TimeoutException) as err:
        where = f"{request.method} {request.url}"
        raise ProviderError(f"{where}: timed out after {_seconds(request.timeout)}") from err
    except (httpx.InvalidURL, httpx.UnsupportedProtocol, ValueError) as err:
        raise ProviderError(f"invalid URL {request.url!r}: {err}") from err
    except httpx.HTTPError as err:
        reason = str(err) or type(err).__name__
        raise ProviderError(f"{request.method} {request.url}: connection failed: {reason}") from err
