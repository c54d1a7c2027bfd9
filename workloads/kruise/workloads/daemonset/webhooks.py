"""Advanced DaemonSet admission webhooks: the AdmissionReview adapter around the pure rules.

Paths and names are OpenKruise's: ``/mutate-apps-kruise-io-v1alpha1-daemonset``
(``mdaemonset.kb.io``) answers with a JSON patch of the defaults
(:func:`~kruise.workloads.admission.daemonset.default_daemonset`) and
``/validate-apps-kruise-io-v1alpha1-daemonset`` (``vdaemonset.kb.io``) denies with HTTP 422 and
the aggregated field errors, both for CREATE and UPDATE (upstream registers no DELETE for
DaemonSets). As for the CloneSet: an UPDATE reaches them only when ``spec`` changed, a wrongly
typed object is left to the CRD schema, and the pod template is judged by the API server (a
dry-run Pod) where upstream runs ``ValidatePodTemplateSpec``.
"""

from __future__ import annotations

from typing import Any

import jsonpatch

from kruise.core.kube.client import KubeClient
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec, operation_or_changed
from kruise.workloads.admission.daemonset import (
    default_daemonset,
    is_well_typed,
    validate_daemonset_create,
    validate_daemonset_update,
)
from kruise.workloads.admission.dryrun import template_verdict
from kruise.workloads.admission.fielderrors import aggregate

__all__ = ["MUTATE_PATH", "VALIDATE_PATH", "DaemonSetWebhooks", "daemonset_webhook_specs"]

MUTATE_PATH = "/mutate-apps-kruise-io-v1alpha1-daemonset"
VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-daemonset"


def daemonset_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    """``mdaemonset.kb.io`` and ``vdaemonset.kb.io`` (CREATE, and UPDATE when ``spec`` changed)."""
    spec_changed = operation_or_changed("spec", name="spec-changed")
    rules = (Rule("apps.kruise.io", "v1alpha1", "daemonsets", ("CREATE", "UPDATE")),)
    return [
        WebhookSpec(
            name=name,
            path=path,
            mutating=mutating,
            rules=rules,
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=(spec_changed,),
        )
        for name, path, mutating in (
            ("mdaemonset.kb.io", MUTATE_PATH, True),
            ("vdaemonset.kb.io", VALIDATE_PATH, False),
        )
    ]


class DaemonSetWebhooks:
    """Handlers bound to a client (for the pod template's dry run)."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None or not is_well_typed(req.object):
            return AdmissionResponse.allow()  # a wrong JSON type: the schema refuses it, naming the field
        patch: list[dict[str, Any]] = jsonpatch.make_patch(req.object, default_daemonset(req.object)).patch
        return AdmissionResponse.allow(patch)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        verdict = await template_verdict(self.kube, req.object, req.old_object, req.namespace or "")
        if req.operation == "CREATE" or req.old_object is None:
            errors = validate_daemonset_create(req.object, template_errors=verdict)
        else:
            errors = validate_daemonset_update(req.object, req.old_object, template_errors=verdict)
        return AdmissionResponse.deny(aggregate(errors)) if errors else AdmissionResponse.allow()
