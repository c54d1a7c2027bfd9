"""Running a CRR's copied preStop hook against a container (I/O: CRI exec, HTTP).

Mirrors what upstream's daemon borrows from the kubelet (``lifecycle.NewHandlerRunner`` inside
``KillContainer``): ``exec`` runs the command through CRI ``ExecSync`` (a non-zero exit is a hook
failure); ``httpGet`` sends a GET to ``scheme://host:port/path`` (host: the handler's, else the
pod's IP; a named port resolves through the CRR's copied ``ports``; a non-2xx/3xx answer is a
failure); ``tcpSocket`` is not a lifecycle handler the kubelet runs, so it fails as there. A
failed hook is reported (event ``FailedPreStopHook``) and the container is stopped all the same;
the hook is bounded by the grace period.

One difference: upstream's daemon builds its pod from the CRR alone and has no pod IP, so an
``httpGet`` preStop without ``host`` fails there; here the pod's IP (from the daemon's pod
informer) is used when known.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from kruise.core.errors import KruiseError
from kruise.daemon.cri.port import CriRuntime

__all__ = ["PreStopError", "run_pre_stop"]


class PreStopError(KruiseError):
    """The hook failed; the message says how."""


def _port(port: Any, ports: Sequence[Mapping[str, Any]]) -> int:
    if isinstance(port, int):
        return port
    if isinstance(port, str) and port.isdigit():
        return int(port)
    for candidate in ports:
        if candidate.get("name") == port:
            return int(candidate["containerPort"])
    raise PreStopError(f"couldn't find port: {port} in {list(ports)}")


async def _http(handler: Mapping[str, Any], pod_ip: str | None, ports: Sequence[Mapping[str, Any]]) -> None:
    host = handler.get("host") or pod_ip
    if not host:
        raise PreStopError("failed to find networking container")
    port = _port(handler.get("port"), ports)
    path = str(handler.get("path") or "")
    if path and not path.startswith("/"):
        path = "/" + path
    scheme = str(handler.get("scheme") or "HTTP").lower()
    headers = [(str(h.get("name")), str(h.get("value"))) for h in handler.get("httpHeaders") or []]
    async with httpx.AsyncClient(verify=False) as client:  # the kubelet skips verification too
        try:
            answer = await client.get(f"{scheme}://{host}:{port}{path}", headers=headers)
        except httpx.HTTPError as err:
            raise PreStopError(f"http get {host}:{port}{path}: {err}") from err
    if answer.status_code >= 400:
        raise PreStopError(
            f"HTTP lifecycle hook ({path}) for Container in Pod failed - error: {answer.status_code}"
        )


async def run_pre_stop(
    cri: CriRuntime,
    container_id: str,
    handler: Mapping[str, Any],
    *,
    grace_seconds: int,
    pod_ip: str | None = None,
    ports: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Run ``handler`` (a CRR ``preStop``) for the container, at most ``grace_seconds``.

    Raises :class:`PreStopError` when the hook failed or did not finish in time.
    """
    exec_ = handler.get("exec")
    http = handler.get("httpGet")
    try:
        async with asyncio.timeout(max(grace_seconds, 0) or None):
            if isinstance(exec_, Mapping):
                command = [str(c) for c in exec_.get("command") or []]
                result = await cri.exec_sync(container_id, command, grace_seconds)
                if result.exit_code != 0:
                    output = (result.stdout + result.stderr).decode(errors="replace")
                    raise PreStopError(
                        f"Exec lifecycle hook ({command}) failed - error: exit code {result.exit_code}, "
                        f"message: {output!r}"
                    )
            elif isinstance(http, Mapping):
                await _http(http, pod_ip, ports)
            else:
                raise PreStopError(f"invalid handler: {dict(handler)}")
    except TimeoutError as err:
        raise PreStopError(f"preStop hook did not complete in {grace_seconds}s") from err
    except PreStopError:
        raise
    except KruiseError as err:
        raise PreStopError(str(err)) from err
