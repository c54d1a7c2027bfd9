"""Where the API server is and how to authenticate to it.

Parsing kubeconfig files (client certificates, tokens, exec plugins, in-cluster
service accounts) is delegated to ``kubernetes_asyncio.config``, which mirrors
client-go's loading rules; kruise only turns the result into an SSL context and
an Authorization header.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubernetes_asyncio import config as k8s_config
from kubernetes_asyncio.client import Configuration
from kubernetes_asyncio.config import kube_config as k8s_kube_config


@dataclass
class KubeConfig:
    """Connection settings: ``server`` URL, TLS context, static headers, rate limits."""

    server: str
    ssl_context: ssl.SSLContext | bool
    headers: dict[str, str] = field(default_factory=dict)
    qps: float = 50.0
    burst: int = 100
    source: Configuration | None = None

    async def refresh_headers(self) -> dict[str, str]:
        """Headers for the next request, refreshing an expiring token when the loader can.

        The loader's hook is a coroutine function for kubeconfig files (exec plugins) and a plain
        function in a pod (``load_incluster_config`` rereads the projected ServiceAccount token
        file once a minute, as client-go does); both are called."""
        cfg = self.source
        hook: Any = cfg.refresh_api_key_hook if cfg is not None else None
        if cfg is not None and hook is not None:
            result = hook(cfg)
            if inspect.isawaitable(result):
                await result
            token = cfg.api_key.get("authorization") or cfg.api_key.get("BearerToken")
            if token:
                prefix = cfg.api_key_prefix.get("authorization", "")
                self.headers["Authorization"] = f"{prefix} {token}".strip()
        return self.headers


def _ssl_context(cfg: Configuration) -> ssl.SSLContext | bool:
    if not cfg.verify_ssl:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    else:
        ctx = (
            ssl.create_default_context(cafile=cfg.ssl_ca_cert)
            if cfg.ssl_ca_cert
            else ssl.create_default_context()
        )
    if cfg.cert_file:
        ctx.load_cert_chain(cfg.cert_file, cfg.key_file)
    return ctx


def _drop_temp_files(cfg: Configuration) -> None:
    """Remove the files ``kubernetes_asyncio``'s loader wrote ``cfg``'s inline certificate data
    to, once the SSL context has read them. The loader keeps them (in the temp directory, one per
    distinct content) until the interpreter exits normally, so every process ended by a signal
    (a manager stopped, a test's subprocess killed) left a client key behind. Their entries in the
    loader's content cache go too, so a later load in this process writes them again instead of
    being handed a removed path. Nothing else reads the files: the context holds the certificates.
    Must run in the same synchronous stretch as the load (no ``await`` in between), so no other
    load in this event loop is handed a cached path that is then removed before it is read."""
    made = getattr(k8s_kube_config, "_temp_files", None)
    if not isinstance(made, dict):
        return
    used = {f for f in (cfg.cert_file, cfg.key_file, cfg.ssl_ca_cert) if f}
    for content, path in list(made.items()):
        if path in used:
            del made[content]
            with contextlib.suppress(OSError):
                os.remove(path)


async def load_kube_config(
    kubeconfig: str | Path | None = None,
    *,
    context: str | None = None,
    qps: float = 50.0,
    burst: int = 100,
) -> KubeConfig:
    """Load ``kubeconfig`` (or ``$KUBECONFIG``, ``~/.kube/config``, then in-cluster).

    Raises ``kubernetes_asyncio.config.ConfigException`` when nothing usable is found; when no
    kubeconfig file exists (and not in a pod) its message names the paths looked at, where
    kubectl would fall back to ``localhost:8080`` and be refused.
    """
    cfg = Configuration()
    path = kubeconfig or os.environ.get("KUBECONFIG")
    default = Path("~/.kube/config").expanduser()
    if path is None and not default.exists() and os.environ.get("KUBERNETES_SERVICE_HOST"):
        k8s_config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
    else:
        looked = [p for p in str(path).split(os.pathsep) if p] if path else [str(default)]
        if not any(Path(p).expanduser().exists() for p in looked):
            raise k8s_config.ConfigException(
                f"no kubeconfig: {', '.join(looked)} does not exist (pass --kubeconfig, set "
                "KUBECONFIG, or start a local cluster with `kruise cluster up`)"
            )
        await k8s_config.load_kube_config(
            config_file=str(path) if path else None,
            context=context,
            client_configuration=cfg,
            persist_config=False,
        )
    headers: dict[str, str] = {}
    token = cfg.api_key.get("authorization") or cfg.api_key.get("BearerToken")
    if token:
        prefix = cfg.api_key_prefix.get("authorization", "")
        headers["Authorization"] = f"{prefix} {token}".strip() if prefix or " " in token else token
    if cfg.username and cfg.password:
        import base64

        basic = base64.b64encode(f"{cfg.username}:{cfg.password}".encode()).decode()
        headers["Authorization"] = f"Basic {basic}"
    ssl_context = _ssl_context(cfg)
    _drop_temp_files(cfg)
    return KubeConfig(
        server=str(cfg.host).rstrip("/"),
        ssl_context=ssl_context,
        headers=headers,
        qps=qps,
        burst=burst,
        source=cfg,
    )
