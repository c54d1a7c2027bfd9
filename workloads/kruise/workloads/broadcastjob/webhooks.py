"""BroadcastJob admission webhooks: the AdmissionReview adapter around the pure rules
(:mod:`kruise.workloads.admission.broadcastjob`).

Paths and names are OpenKruise's (v1.8): ``/mutate-apps-kruise-io-v1alpha1-broadcastjob``
(``mbroadcastjob.kb.io``) answers with a JSON patch of the defaults and
``/validate-apps-kruise-io-v1alpha1-broadcastjob`` (``vbroadcastjob.kb.io``) denies with the
aggregated field errors, both for CREATE and a spec-changing UPDATE of ``broadcastjobs`` (the status
subresource is not intercepted). A wrongly typed object is left to the CRD schema, and the pod
template is judged by the API server (a dry-run Pod) where upstream runs
``ValidatePodTemplateSpec``.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonpatch

from kruise.core.kube.client import KubeClient
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.workloads.admission.broadcastjob import default_broadcastjob, validate_broadcastjob
from kruise.workloads.admission.dryrun import template_verdict
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.workload_webhooks import workload_webhook_specs

__all__ = ["MUTATE_PATH", "VALIDATE_PATH", "BroadcastJobWebhooks", "broadcastjob_webhook_specs"]

MUTATE_PATH = "/mutate-apps-kruise-io-v1alpha1-broadcastjob"
VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-broadcastjob"


broadcastjob_webhook_specs = functools.partial(
    workload_webhook_specs, "broadcastjob", MUTATE_PATH, VALIDATE_PATH
)
"""``mbroadcastjob.kb.io`` and ``vbroadcastjob.kb.io`` (CREATE, and UPDATE when ``spec`` changed)."""


class BroadcastJobWebhooks:
    """Handlers bound to a client (for the pod template's dry run) and the ``TemplateNoDefaults``
    gate."""

    def __init__(self, kube: KubeClient, *, template_no_defaults: bool = False) -> None:
        self.kube = kube
        self.template_no_defaults = template_no_defaults

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None or not isinstance(req.object.get("spec"), dict):
            return AdmissionResponse.allow()  # a wrong JSON type: the schema refuses it, naming the field
        defaulted = default_broadcastjob(
            req.object, old=req.old_object, template_no_defaults=self.template_no_defaults
        )
        patch: list[dict[str, Any]] = jsonpatch.make_patch(req.object, defaulted).patch
        return AdmissionResponse.allow(patch)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        verdict = await template_verdict(self.kube, req.object, req.old_object, req.namespace or "")
        errors = validate_broadcastjob(req.object, template_errors=verdict)
        return AdmissionResponse.deny(aggregate(errors)) if errors else AdmissionResponse.allow()
