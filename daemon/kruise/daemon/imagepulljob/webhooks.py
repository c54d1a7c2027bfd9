"""ImagePullJob, ImageListPullJob and NodeImage admission webhooks (the AdmissionReview shell).

Paths and names are OpenKruise's (``mimagepulljob.kb.io`` on
``/mutate-apps-kruise-io-v1alpha1-imagepulljob`` and so on), CREATE and UPDATE. Mutations answer
with a JSON patch of :mod:`.admission`'s defaults; validations deny with HTTP 400 and the first
error's message, as upstream's ``admission.Errored(http.StatusBadRequest, err)``. With gate
``ImagePullJobGate`` off the two job validators deny everything with HTTP 403
``feature-gate ImagePullJobGate is not enabled`` (the NodeImage ones need only ``KruiseDaemon``,
which this manager does not gate).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import jsonpatch

from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec
from kruise.daemon.imagepulljob.admission import (
    default_imagelistpulljob,
    default_imagepulljob,
    default_nodeimage,
    validate_imagelistpulljob,
    validate_imagepulljob,
    validate_nodeimage,
)

__all__ = ["GATE", "ImagePullWebhooks", "imagepull_webhook_specs"]

GATE = "ImagePullJobGate"
_KINDS = (
    ("imagepulljob", "imagepulljobs"),
    ("imagelistpulljob", "imagelistpulljobs"),
    ("nodeimage", "nodeimages"),
)


def _path(mutating: bool, kind: str) -> str:
    return f"/{'mutate' if mutating else 'validate'}-apps-kruise-io-v1alpha1-{kind}"


def imagepull_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    """``m|v{imagepulljob,imagelistpulljob,nodeimage}.kb.io`` for CREATE and UPDATE."""
    return [
        WebhookSpec(
            name=f"{'m' if mutating else 'v'}{kind}.kb.io",
            path=_path(mutating, kind),
            mutating=mutating,
            rules=(Rule("apps.kruise.io", "v1alpha1", plural, ("CREATE", "UPDATE")),),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
        )
        for kind, plural in _KINDS
        for mutating in (True, False)
    ]


def _patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> AdmissionResponse:
    patch: list[dict[str, Any]] = jsonpatch.make_patch(dict(old), dict(new)).patch
    return AdmissionResponse.allow(patch)


def _verdict(message: str | None) -> AdmissionResponse:
    if message is None:
        return AdmissionResponse.allow()
    return AdmissionResponse.deny(message, code=400, reason="BadRequest")


class ImagePullWebhooks:
    """Handlers for the three kinds; ``gate`` is ``ImagePullJobGate``'s value."""

    def __init__(self, *, gate: bool = True) -> None:
        self.gate = gate

    def handlers(self) -> dict[str, Callable[[AdmissionRequest], Awaitable[AdmissionResponse]]]:
        """Path -> handler, for the webhook server."""
        return {
            _path(True, "imagepulljob"): self.mutate_imagepulljob,
            _path(False, "imagepulljob"): self.validate_imagepulljob,
            _path(True, "imagelistpulljob"): self.mutate_imagelistpulljob,
            _path(False, "imagelistpulljob"): self.validate_imagelistpulljob,
            _path(True, "nodeimage"): self.mutate_nodeimage,
            _path(False, "nodeimage"): self.validate_nodeimage,
        }

    def _gate_closed(self) -> AdmissionResponse | None:
        if self.gate:
            return None
        return AdmissionResponse.deny(f"feature-gate {GATE} is not enabled", code=403, reason="Forbidden")

    async def mutate_imagepulljob(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        return _patch(req.object, default_imagepulljob(req.object, create=req.operation == "CREATE"))

    async def validate_imagepulljob(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        return self._gate_closed() or _verdict(validate_imagepulljob(req.object))

    async def mutate_imagelistpulljob(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        return _patch(req.object, default_imagelistpulljob(req.object))

    async def validate_imagelistpulljob(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        return self._gate_closed() or _verdict(validate_imagelistpulljob(req.object))

    async def mutate_nodeimage(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        return _patch(req.object, default_nodeimage(req.object, now))

    async def validate_nodeimage(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        return _verdict(validate_nodeimage(req.object))
