"""ContainerRecreateRequest admission webhooks (shell over :mod:`.admission`).

- ``mcontainerrecreaterequest.kb.io`` (``/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest``),
  upstream's only webhook for the kind: refuses (upstream's messages and codes) and defaults,
  reading the Pod and its Node from the API server.
- ``vcontainerrecreaterequest.kb.io`` (``/validate-apps-kruise-io-v1alpha1-containerrecreaterequest``):
  ours; after every mutating webhook has run it re-checks what the object alone must satisfy (the
  spec rules, the immutable fields on UPDATE, and on CREATE that the injected fields are there),
  with the same messages. It never disagrees with the mutating webhook on an object that webhook
  produced.

Both need gate ``KruiseDaemon`` (default on): with it off every request is refused with
``feature-gate KruiseDaemon is not enabled`` (403), as upstream. Both see CREATE and an UPDATE
changing ``spec``, labels or annotations (status writes go to the subresource, which they do not
watch).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.core.errors import KruiseError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import NODES, PODS
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec, operation_or_changed
from kruise.core.webhook.patch import json_patch
from kruise.daemon.api.containerrecreaterequest import NODE_NAME_LABEL, POD_UID_LABEL
from kruise.daemon.crr.admission import (
    FORBIDDEN,
    Refusal,
    default_crr,
    pod_refusal,
    spec_refusal,
    update_refusal,
)

__all__ = ["MUTATE_CRR_PATH", "VALIDATE_CRR_PATH", "CrrWebhooks", "crr_webhook_specs"]

MUTATE_CRR_PATH = "/mutate-apps-kruise-io-v1alpha1-containerrecreaterequest"
VALIDATE_CRR_PATH = "/validate-apps-kruise-io-v1alpha1-containerrecreaterequest"
GATE = "KruiseDaemon"
_REASONS = {400: "BadRequest", 403: "Forbidden", 500: "InternalError"}


def crr_webhook_specs(settings: WebhookSettings) -> list[WebhookSpec]:
    """The two webhooks of the kind (CREATE, and UPDATEs changing spec, labels or annotations)."""
    changed = operation_or_changed(
        "spec", "metadata.labels", "metadata.annotations", name="spec-or-metadata-changed"
    )
    rules = (Rule("apps.kruise.io", "v1alpha1", "containerrecreaterequests", ("CREATE", "UPDATE")),)
    return [
        WebhookSpec(
            name=f"{kind}containerrecreaterequest.kb.io",
            path=path,
            mutating=kind == "m",
            rules=rules,
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=(changed,),
        )
        for kind, path in (("m", MUTATE_CRR_PATH), ("v", VALIDATE_CRR_PATH))
    ]


def _deny(refusal: Refusal) -> AdmissionResponse:
    return AdmissionResponse.deny(refusal.message, refusal.code, _REASONS.get(refusal.code, ""))


def _injected_refusal(crr: Mapping[str, Any]) -> Refusal | None:
    """What a created CRR must carry once mutated: the two labels and every statusContext."""
    labels = (crr.get("metadata") or {}).get("labels") or {}
    for key in (POD_UID_LABEL, NODE_NAME_LABEL):
        if not labels.get(key):
            return Refusal(f"label {key} is missing")
    for container in (crr.get("spec") or {}).get("containers") or []:
        if not (container.get("statusContext") or {}).get("containerID"):
            return Refusal(f"no statusContext in container {container.get('name')}")
    return None


class CrrWebhooks:
    """The handlers; ``enabled`` is gate ``KruiseDaemon``."""

    def __init__(self, kube: KubeClient, *, enabled: bool = True) -> None:
        self.kube = kube
        self.enabled = enabled

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        """Upstream's ``ContainerRecreateRequestHandler.Handle``: refuse or default (JSON patch)."""
        if not self.enabled:
            return _deny(Refusal(f"feature-gate {GATE} is not enabled", FORBIDDEN))
        if req.object is None:
            return AdmissionResponse.allow()
        if req.operation == "UPDATE" and req.old_object is not None:
            refusal = update_refusal(req.object, req.old_object)
            return _deny(refusal) if refusal is not None else AdmissionResponse.allow()
        refusal = spec_refusal(req.object)
        if refusal is not None:
            return _deny(refusal)
        spec = req.object.get("spec") or {}
        namespace = req.namespace or (req.object.get("metadata") or {}).get("namespace") or ""
        pod_name = str(spec.get("podName"))
        try:
            pod = await self.kube.get_or_none(PODS, pod_name, namespace)
        except KruiseError as err:
            return _deny(Refusal(f"failed to find Pod {pod_name}: {err}", 500))
        if pod is not None and (refusal := pod_refusal(pod)) is not None:
            return _deny(refusal)
        node = None
        node_name = str(((pod or {}).get("spec") or {}).get("nodeName") or "")
        if node_name:
            try:
                node = await self.kube.get_or_none(NODES, node_name)
            except KruiseError as err:
                return _deny(Refusal(f"failed to get Node {node_name}: {err}", 500))
            if node is None:
                return _deny(Refusal(f'failed to get Node {node_name}: nodes "{node_name}" not found'))
        out = default_crr(req.object, pod, node)
        if isinstance(out, Refusal):
            return _deny(out)
        return AdmissionResponse.allow(json_patch(req.object, out))

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        """Re-check the final object (see the module docstring)."""
        if not self.enabled:
            return _deny(Refusal(f"feature-gate {GATE} is not enabled", FORBIDDEN))
        if req.object is None:
            return AdmissionResponse.allow()
        if req.operation == "UPDATE" and req.old_object is not None:
            refusal = update_refusal(req.object, req.old_object)
        else:
            refusal = spec_refusal(req.object) or _injected_refusal(req.object)
        return _deny(refusal) if refusal is not None else AdmissionResponse.allow()
