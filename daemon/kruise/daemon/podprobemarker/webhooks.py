"""PodProbeMarker validating webhook (shell over :mod:`.admission`).

Upstream's only webhook for the kind: ``vpodprobemarker.kb.io`` on
``/validate-apps-kruise-io-podprobemarker`` (CREATE, UPDATE). With gate ``PodProbeMarkerGate``
(then ``KruiseDaemon``) off every request is refused with HTTP 403
``feature-gate <gate> is not enabled``; a refused object answers HTTP 400 with the aggregated
field errors, and nothing is stored.
"""

from __future__ import annotations

from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec
from kruise.daemon.podprobemarker.admission import validate_ppm

__all__ = ["GATE", "VALIDATE_PPM_PATH", "PodProbeMarkerWebhooks", "ppm_webhook_specs"]

GATE = "PodProbeMarkerGate"
VALIDATE_PPM_PATH = "/validate-apps-kruise-io-podprobemarker"


def ppm_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    return [
        WebhookSpec(
            name="vpodprobemarker.kb.io",
            path=VALIDATE_PPM_PATH,
            mutating=False,
            rules=(Rule("apps.kruise.io", "v1alpha1", "podprobemarkers", ("CREATE", "UPDATE")),),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
        )
    ]


class PodProbeMarkerWebhooks:
    """The handler; ``gate`` is ``PodProbeMarkerGate`` and ``daemon`` is ``KruiseDaemon``."""

    def __init__(self, *, gate: bool = True, daemon: bool = True) -> None:
        self.gates = ((GATE, gate), ("KruiseDaemon", daemon))

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        for name, enabled in self.gates:
            if not enabled:
                return AdmissionResponse.deny(
                    f"feature-gate {name} is not enabled", code=403, reason="Forbidden"
                )
        old = req.old_object if req.operation == "UPDATE" else None
        message = validate_ppm(req.object, old)
        if message is None:
            return AdmissionResponse.allow()
        return AdmissionResponse.deny(message, code=400, reason="BadRequest")
