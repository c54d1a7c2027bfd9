"""EphemeralJob admission webhook: the AdmissionReview adapter around the pure rules
(:mod:`kruise.workloads.admission.ephemeraljob`).

Upstream serves only a validating webhook for this kind:
``/validate-apps-kruise-io-v1alpha1-ephemeraljob`` named ``vephemeraljobs.kb.io`` (plural, as
upstream spells it), on CREATE and UPDATE of ``ephemeraljobs`` (here an UPDATE only when ``spec``
changed: the verdict depends on nothing else). A refusal is HTTP 400 (``admission.Errored``)
with the aggregated field errors.
"""

from __future__ import annotations

from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import WebhookSettings, WebhookSpec
from kruise.core.webhook.review import Handler
from kruise.workloads.admission.ephemeraljob import validate_ephemeraljob
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.admission.workload_webhooks import validating_webhook_spec

__all__ = ["VALIDATE_PATH", "EphemeralJobWebhooks", "ephemeraljob_webhook_specs"]

VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-ephemeraljob"
WEBHOOK_NAME = "vephemeraljobs.kb.io"


def ephemeraljob_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    """``[vephemeraljobs.kb.io]``: the shared validating registration, named as upstream names it
    (there is no mutating one)."""
    return [validating_webhook_spec("ephemeraljob", VALIDATE_PATH, settings, name=WEBHOOK_NAME)]


class EphemeralJobWebhooks:
    """The validating handler (stateless)."""

    def handlers(self) -> dict[str, Handler]:
        """Path -> handler, for the webhook server."""
        return {VALIDATE_PATH: self.validate}

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        errors = validate_ephemeraljob(req.object)
        if not errors:
            return AdmissionResponse.allow()
        return AdmissionResponse.deny(aggregate(errors), code=400, reason="BadRequest")
