"""AdvancedCronJob admission webhooks: the AdmissionReview adapter around the pure rules
(:mod:`kruise.workloads.admission.advancedcronjob`).

Paths and names are OpenKruise's (v1.8): ``/mutate-apps-kruise-io-v1alpha1-advancedcronjob``
(``madvancedcronjob.kb.io``) answers with a JSON patch of the defaults and
``/validate-apps-kruise-io-v1alpha1-advancedcronjob`` (``vadvancedcronjob.kb.io``) denies with the
aggregated field errors, both on CREATE and a spec-changing UPDATE of ``advancedcronjobs`` (UPDATE checks
which spec fields changed). A wrongly typed object is left to the CRD schema.
"""

from __future__ import annotations

import functools
from typing import Any

import jsonpatch

from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.review import Handler
from kruise.workloads.admission.advancedcronjob import default_advancedcronjob, validate_advancedcronjob
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.workload_webhooks import workload_webhook_specs

__all__ = ["MUTATE_PATH", "VALIDATE_PATH", "AdvancedCronJobWebhooks", "advancedcronjob_webhook_specs"]

MUTATE_PATH = "/mutate-apps-kruise-io-v1alpha1-advancedcronjob"
VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-advancedcronjob"


advancedcronjob_webhook_specs = functools.partial(
    workload_webhook_specs, "advancedcronjob", MUTATE_PATH, VALIDATE_PATH
)
"""``madvancedcronjob.kb.io`` and ``vadvancedcronjob.kb.io`` (CREATE, and UPDATE when ``spec`` changed)."""


class AdvancedCronJobWebhooks:
    """The two handlers (stateless)."""

    def handlers(self) -> dict[str, Handler]:
        """Path -> handler, for the webhook server."""
        return {MUTATE_PATH: self.mutate, VALIDATE_PATH: self.validate}

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None or not isinstance(req.object.get("spec"), dict):
            return AdmissionResponse.allow()
        patch: list[dict[str, Any]] = jsonpatch.make_patch(
            req.object, default_advancedcronjob(req.object)
        ).patch
        return AdmissionResponse.allow(patch)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        old = req.old_object if req.operation == "UPDATE" else None
        errors = validate_advancedcronjob(req.object, old=old)
        return AdmissionResponse.deny(aggregate(errors)) if errors else AdmissionResponse.allow()
