"""A trivial always-allow admission webhook, the floor of what calling any webhook costs.

Not a test. ``bench/sidecarset.py`` runs it as a process of its own (same TLS stack as the
manager's webhook server, aiohttp, but no informers, no controllers, no decoding of the pod):
it answers every POST with ``allowed: true`` for the review's uid.

    .venv/bin/python bench/allow_webhook.py PORT CERT KEY
"""

from __future__ import annotations

import re
import ssl
import sys

from aiohttp import web

UID = re.compile(rb'"uid"\s*:\s*"([^"]*)"')


async def allow(request: web.Request) -> web.Response:
    found = UID.search(await request.read())
    uid = found.group(1).decode() if found else ""
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}
    return web.json_response({**review, "response": {"uid": uid, "allowed": True}})


def main(port: int, cert: str, key: str) -> None:
    app = web.Application()
    app.router.add_post("/{tail:.*}", allow)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(cert, key)
    web.run_app(app, host="127.0.0.1", port=port, ssl_context=ctx, access_log=None, print=None)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
