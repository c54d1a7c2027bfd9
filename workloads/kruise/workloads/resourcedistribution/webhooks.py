"""ResourceDistribution validating webhook: the AdmissionReview adapter around
:mod:`~.validation`.

Path and name are OpenKruise v1.8's: ``/validate-apps-kruise-io-v1alpha1-resourcedistribution``
(``vresourcedistribution.kb.io``) for CREATE and UPDATE of ``resourcedistributions``. With the
``ResourceDistributionGate`` off every request is refused with HTTP 403 ``feature-gate
ResourceDistributionGate is not enabled``; field errors are HTTP 422. The resource is judged by
the API server with a dry-run create in the manager's namespace, as upstream.
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.core.errors import AlreadyExistsError, KruiseError
from kruise.core.kube.client import KubeClient
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec
from kruise.workloads.admission.fielderrors import aggregate
from kruise.workloads.resourcedistribution.controller import KINDS
from kruise.workloads.resourcedistribution.validation import needs_dry_run, validate_resourcedistribution

__all__ = ["GATE", "VALIDATE_PATH", "ResourceDistributionWebhooks", "resourcedistribution_webhook_specs"]

GATE = "ResourceDistributionGate"
VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-resourcedistribution"


def resourcedistribution_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    """``vresourcedistribution.kb.io`` (CREATE and UPDATE)."""
    return [
        WebhookSpec(
            name="vresourcedistribution.kb.io",
            path=VALIDATE_PATH,
            mutating=False,
            rules=(Rule("apps.kruise.io", "v1alpha1", "resourcedistributions", ("CREATE", "UPDATE")),),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
        )
    ]


class ResourceDistributionWebhooks:
    """Handler bound to a client (the dry run), the gate and the manager's namespace."""

    def __init__(self, kube: KubeClient, *, enabled: bool, namespace: str) -> None:
        self.kube = kube
        self.enabled = enabled
        self.namespace = namespace

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if not self.enabled:
            return AdmissionResponse.deny(f"feature-gate {GATE} is not enabled", code=403, reason="Forbidden")
        if req.object is None:
            return AdmissionResponse.allow()
        old = req.old_object if req.operation == "UPDATE" else None
        dry_run_error = await self._dry_run(req.object) if needs_dry_run(req.object, old) else None
        errors = validate_resourcedistribution(req.object, old, dry_run_error=dry_run_error)
        return AdmissionResponse.deny(aggregate(errors)) if errors else AdmissionResponse.allow()

    async def _dry_run(self, obj: dict[str, Any]) -> str | None:
        resource: dict[str, Any] = copy.deepcopy(obj["spec"]["resource"])
        resource.setdefault("metadata", {})["namespace"] = self.namespace
        res = KINDS[resource["kind"]]
        try:
            await self.kube.create(res, resource, self.namespace, dry_run=True)
        except AlreadyExistsError:
            return None
        except KruiseError as err:
            return str(err)
        return None
