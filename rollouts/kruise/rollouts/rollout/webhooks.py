"""The workload admission webhook that holds a CloneSet back for its Rollout (adapter).

Served at ``/mutate-rollouts-kruise-io-workload-cloneset`` as ``mcloneset-rollout.kruise.io``;
the decision is :func:`~kruise.rollouts.rollout.workloadhold.hold_cloneset`. The API server
sends it only CloneSets the Rollout controller labelled ``rollouts.kruise.io/workload-type``
(:func:`~kruise.rollouts.rollout.workloadlabel.held_workload_selector`), outside ``kube-system``
and the manager's namespace, so an unrelated CloneSet never waits for the manager.
"""

from __future__ import annotations

from typing import Any

import jsonpatch

from kruise.core.errors import NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.core.webhook.configuration import (
    Rule,
    WebhookSettings,
    WebhookSpec,
    excluded_namespaces_selector,
)
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.workloadhold import hold_cloneset
from kruise.rollouts.rollout.workloadlabel import held_workload_selector

HOLD_CLONESET_PATH = "/mutate-rollouts-kruise-io-workload-cloneset"


def workload_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    return [
        WebhookSpec(
            name="mcloneset-rollout.kruise.io",
            path=HOLD_CLONESET_PATH,
            mutating=True,
            rules=(Rule("apps.kruise.io", "v1alpha1", "clonesets", ("UPDATE",)),),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            object_selector=held_workload_selector(),
            namespace_selector=excluded_namespaces_selector(settings.excluded_namespaces),
        )
    ]


class WorkloadWebhooks:
    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube

    async def hold_cloneset(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.operation != "UPDATE" or req.object is None or req.old_object is None:
            return AdmissionResponse.allow()
        new, old = req.object, req.old_object
        if (new.get("spec") or {}).get("template") == (old.get("spec") or {}).get("template") and (
            (new.get("metadata") or {}).get("labels") == (old.get("metadata") or {}).get("labels")
        ):
            return AdmissionResponse.allow()
        try:
            rollouts = (await self.kube.list(ROLLOUTS, req.namespace))["items"]
        except NotFoundError:  # Rollout CRD not installed
            return AdmissionResponse.allow()
        held = hold_cloneset(new, old, rollouts)
        if held is None:
            return AdmissionResponse.allow()
        patch: list[dict[str, Any]] = jsonpatch.make_patch(new, held).patch
        return AdmissionResponse.allow(patch)
