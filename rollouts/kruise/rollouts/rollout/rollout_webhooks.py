"""Rollout admission (defaulting + validation) and v1alpha1<->v1beta1 conversion, as served webhooks.

Validation follows Kruise Rollouts' ``pkg/webhook/rollout/validating`` (rules and messages in
:mod:`kruise.rollouts.admission`); denials are HTTP 422 with the aggregated field errors.
Conversion answers ConversionReviews with :func:`kruise.rollouts.api.conversion.convert_review`.

Both admission webhooks see every CREATE, and an UPDATE only when ``spec`` or the annotations
changed (v1alpha1 keeps the rolling style and the rollback-in-batch switch there): a finalizer,
label or status write never waits for the manager. Conversion cannot be scoped: the API server
calls it whenever a client reads or writes the version that is not stored.
"""

from __future__ import annotations

from typing import Any

import jsonpatch

from kruise.core.errors import NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import Rule, WebhookSettings, WebhookSpec, operation_or_changed
from kruise.rollouts.admission import aggregate, default_rollout, validate_rollout
from kruise.rollouts.resources import ROLLOUTS

MUTATE_ROLLOUT_PATH = "/mutate-rollouts-kruise-io-rollout"
VALIDATE_ROLLOUT_PATH = "/validate-rollouts-kruise-io-rollout"
CONVERT_PATH = "/convert"
CONVERTED_CRDS = ["rollouts.rollouts.kruise.io", "batchreleases.rollouts.kruise.io"]


def rollout_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    rules = tuple(
        Rule("rollouts.kruise.io", v, "rollouts", ("CREATE", "UPDATE")) for v in ("v1alpha1", "v1beta1")
    )
    changed = (operation_or_changed("spec", "metadata.annotations", name="spec-changed"),)
    return [
        WebhookSpec(
            name,
            path,
            mutating,
            rules,
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            match_conditions=changed,
        )
        for name, path, mutating in (
            ("mrollout.kb.io", MUTATE_ROLLOUT_PATH, True),
            ("vrollout.kb.io", VALIDATE_ROLLOUT_PATH, False),
        )
    ]


class RolloutWebhooks:
    def __init__(self, kube: KubeClient, *, partition_percent_limit: int = 50) -> None:
        self.kube = kube
        self.partition_percent_limit = partition_percent_limit

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        patch: list[dict[str, Any]] = jsonpatch.make_patch(req.object, default_rollout(req.object)).patch
        return AdmissionResponse.allow(patch)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.object is None:
            return AdmissionResponse.allow()
        try:
            others = (await self.kube.list(ROLLOUTS, req.namespace))["items"]
        except NotFoundError:
            others = []
        latest = None
        if req.old_object is not None:
            latest = next(
                (o for o in others if (o.get("metadata") or {}).get("name") == req.name), req.old_object
            )
        errors = validate_rollout(
            req.object,
            req.old_object,
            partition_percent_limit=self.partition_percent_limit,
            workload_lookup=others,
            latest=latest,
        )
        return AdmissionResponse.deny(aggregate(errors)) if errors else AdmissionResponse.allow()
