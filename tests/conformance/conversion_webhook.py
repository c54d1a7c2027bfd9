"""Serve our v1alpha1 <-> v1beta1 conversion to the API server for the conformance run.

Rollout and BatchRelease serve v1alpha1 and store v1beta1. Our committed CRDs use the default
``conversion: None`` until the manager serves ``/convert``; with ``None`` the API server prunes
every v1alpha1-only field (``objectRef``, ``weight``, ``targetReference``) on the way to storage,
so upstream's v1alpha1 examples could not round-trip. This helper runs
:func:`kruise.rollouts.api.conversion.convert_review` behind a loopback HTTPS endpoint and points
the two CRDs at it, as upstream's chart points them at kruise-rollout's webhook service.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import web

from kruise.core.certs import CertificateAuthority, cert_pem
from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import CRDS
from kruise.core.localcluster.cluster import free_port
from kruise.rollouts.api.conversion import convert_review

CONVERTED_CRDS = ("rollouts.rollouts.kruise.io", "batchreleases.rollouts.kruise.io")


async def _convert(request: web.Request) -> web.Response:
    review: dict[str, Any] = await request.json()
    return web.json_response(convert_review(review))


def _conversion(url: str | None, ca_bundle: str | None) -> dict[str, Any]:
    if url is None:
        return {"strategy": "None", "webhook": None}
    return {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"url": url, "caBundle": ca_bundle},
            "conversionReviewVersions": ["v1"],
        },
    }


_PROBE = {
    "apiVersion": "rollouts.kruise.io/v1alpha1",
    "kind": "Rollout",
    "metadata": {"name": "conversion-probe"},
    "spec": {
        "objectRef": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "probe"}},
        "strategy": {},
    },
}
_ROLLOUTS_V1ALPHA1 = Resource("rollouts.kruise.io", "v1alpha1", "rollouts", "Rollout")


async def _wait_until_converting(kube: KubeClient, timeout: float = 30.0) -> None:
    """The API server swaps its CRD handler asynchronously: wait until v1alpha1 round-trips."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        out = await kube.create(_ROLLOUTS_V1ALPHA1, _PROBE, "default", dry_run=True)
        if out.get("spec", {}).get("objectRef"):
            return
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("the API server does not call the conversion webhook")
        await asyncio.sleep(0.2)


@asynccontextmanager
async def conversion_webhook(kube: KubeClient) -> AsyncIterator[str]:
    """Serve ``/convert`` on 127.0.0.1 and wire the Rollout/BatchRelease CRDs to it.

    Yields the webhook URL; on exit the CRDs go back to ``strategy: None`` and the server stops.
    """
    ca = CertificateAuthority.create("kruise-conformance-ca")
    with tempfile.TemporaryDirectory(prefix="kruise-convert-") as tmp:
        crt, key = ca.write_leaf(
            Path(tmp), "server", common_name="127.0.0.1", server=True, ip_addresses=("127.0.0.1",)
        )
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(crt), str(key))
        app = web.Application()
        app.router.add_post("/convert", _convert)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        port = free_port()
        await web.TCPSite(runner, "127.0.0.1", port, ssl_context=ctx).start()
        url = f"https://127.0.0.1:{port}/convert"
        bundle = base64.b64encode(cert_pem(ca.cert)).decode()
        try:
            for name in CONVERTED_CRDS:
                await kube.patch(CRDS, name, {"spec": {"conversion": _conversion(url, bundle)}})
            await _wait_until_converting(kube)
            yield url
        finally:
            for name in CONVERTED_CRDS:
                await kube.patch(CRDS, name, {"spec": {"conversion": _conversion(None, None)}})
            await runner.cleanup()
