"""The workload hold webhooks: one admission adapter serving every kind's hold (I/O shell).

Each registered kind's :class:`~kruise.rollouts.workloads.port.WorkloadHold` is served at its path
as a mutating webhook for UPDATEs of the kind, as Kruise Rollouts' workload webhook
(``pkg/webhook/workload/mutating``): the decision is the kind's pure ``decide``; this adapter only
filters, reads and turns the held object into a JSON patch. Updates that cannot matter (the
kind's ``worth_a_look`` says no: template and rollout-id unchanged, no release in progress) and
subresource writes are admitted without reading anything (the kind's ``matchConditions`` keep
most of them from calling at all); then the Rollout referencing the workload is read from the
informer cache, as upstream's cached client does. When the cache has none (no Rollout, or one
created a moment ago that the watch has not brought yet) the namespace's Rollouts are listed from
the API server (no Rollout CRD: admitted). Last, what the kind asks for beside them (a
Deployment's ReplicaSets) is listed.

Every hold is registered with ``objectSelector`` ``rollouts.kruise.io/workload-type`` exists (plus
the kind's own exclusions), outside ``kube-system`` and the manager's namespace, as upstream's
chart does: the API server sends it only workloads a Rollout labelled
(:mod:`kruise.rollouts.workloads.label`), so a workload no Rollout references never waits for the
manager, whatever the failure policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsonpatch

from kruise.core.errors import NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import REPLICASETS
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import (
    Rule,
    WebhookSettings,
    WebhookSpec,
    excluded_namespaces_selector,
)
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.workloads.hold import rollout_for
from kruise.rollouts.workloads.label import held_workload_selector
from kruise.rollouts.workloads.port import WorkloadHold
from kruise.rollouts.workloads.registry import holds

JSON = dict[str, Any]
CachedRollouts = Callable[[str, str, str], list[JSON]]
"""``(namespace, kind, name)`` -> the cached Rollouts whose ``workloadRef`` names that workload."""
RELATED_RESOURCES = (REPLICASETS,)
"""What a hold may list beside the Rollouts (a Deployment's ReplicaSets)."""


def hold_webhook_spec(hold: WorkloadHold, settings: WebhookSettings = WebhookSettings()) -> WebhookSpec:
    """The webhook configuration entry of ``hold`` (UPDATE of each served version)."""
    return WebhookSpec(
        name=hold.name,
        path=hold.path,
        mutating=True,
        rules=tuple(Rule(hold.group, version, hold.plural, ("UPDATE",)) for version in hold.versions),
        failure_policy=settings.failure_policy,
        timeout_seconds=settings.timeout_seconds,
        object_selector=held_workload_selector(*hold.exclude),
        namespace_selector=excluded_namespaces_selector(settings.excluded_namespaces),
        match_conditions=hold.match_conditions,
    )


def hold_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    """Every registered kind's hold, in registration order."""
    return [hold_webhook_spec(hold, settings) for hold in holds()]


class HoldWebhook:
    """Serves one kind's hold: ``await webhook(request)``."""

    def __init__(self, kube: KubeClient, hold: WorkloadHold, cached: CachedRollouts | None = None) -> None:
        self.kube = kube
        self.hold = hold
        self.cached = cached

    def _cached_rollouts(self, workload: JSON, namespace: str) -> list[JSON]:
        """The Rollouts the webhooks' informer cache has for ``workload`` (by ``workloadRef``),
        as upstream's webhook reads them through controller-runtime's cached client."""
        if self.cached is None:
            return []
        name = str((workload.get("metadata") or {}).get("name"))
        return self.cached(namespace, str(workload.get("kind")), name)

    async def __call__(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.operation != "UPDATE" or req.object is None or req.old_object is None:
            return AdmissionResponse.allow()
        if req.raw.get("subResource"):
            return AdmissionResponse.allow()
        new, old = req.object, req.old_object
        if not self.hold.worth_a_look(new, old):
            return AdmissionResponse.allow()
        rollouts = self._cached_rollouts(new, req.namespace or "")
        if rollout_for(new, rollouts) is None:  # none cached (or a stale miss): ask the API server
            try:
                rollouts = (await self.kube.list(ROLLOUTS, req.namespace))["items"]
            except NotFoundError:  # Rollout CRD not installed
                return AdmissionResponse.allow()
            if rollout_for(new, rollouts) is None:
                return AdmissionResponse.allow()
        related: list[dict[str, Any]] = []
        wanted = self.hold.related(new)
        if wanted is not None:
            resource, selector = wanted
            related = (await self.kube.list(resource, req.namespace, label_selector=selector or None))[
                "items"
            ]
        held = self.hold.decide(new, old, rollouts, related)
        if held is None:
            return AdmissionResponse.allow()
        patch: list[dict[str, Any]] = jsonpatch.make_patch(new, held).patch
        return AdmissionResponse.allow(patch)


def hold_webhooks(kube: KubeClient, cached: CachedRollouts | None = None) -> dict[str, HoldWebhook]:
    """Path -> handler for every registered kind's hold (``cached``: the informer's Rollouts by
    the workload they reference; None reads only the API server)."""
    return {hold.path: HoldWebhook(kube, hold, cached) for hold in holds()}
