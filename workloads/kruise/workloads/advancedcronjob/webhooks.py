"""AdvancedCronJob admission webhooks: the AdmissionReview adapter around the pure rules
(:mod:`kruise.workloads.admission.advancedcronjob`).

Paths and names are OpenKruise's (v1.8): ``/mutate-apps-kruise-io-v1alpha1-advancedcronjob``
(``madvancedcronjob.kb.io``) answers with a JSON patch of the defaults and
``/validate-apps-kruise-io-v1alpha1-advancedcronjob`` (``vadvancedcronjob.kb.io``) denies with the
aggregated field errors, both on CREATE and UPDATE of ``advancedcronjobs`` (UPDATE also checks
which spec fields changed). A wrongly typed object is left to the CRD schema.
"""

from __future__ import annotations

from typing import Any

import jsonpatch

from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec
from kruise.core.webhook.review import Handler
from kruise.workloads.admission.advancedcronjob import default_advancedcronjob, validate_advancedcronjob
from kruise.workloads.admission.fielderrors import aggregate

__all__ = ["MUTATE_PATH", "VALIDATE_PATH", "AdvancedCronJobWebhooks", "advancedcronjob_webhook_specs"]

MUTATE_PATH = "/mutate-apps-kruise-io-v1alpha1-advancedcronjob"
VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-advancedcronjob"


def advancedcronjob_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    """``madvancedcronjob.kb.io`` and ``vadvancedcronjob.kb.io`` (CREATE and UPDATE)."""
    rules = (Rule("apps.kruise.io", "v1alpha1", "advancedcronjobs", ("CREATE", "UPDATE")),)
    return [
        WebhookSpec(
            name=hook,
            path=path,
            mutating=mutating,
            rules=rules,
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
        )
        for hook, path, mutating in (
            ("madvancedcronjob.kb.io", MUTATE_PATH, True),
            ("vadvancedcronjob.kb.io", VALIDATE_PATH, False),
        )
    ]


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
