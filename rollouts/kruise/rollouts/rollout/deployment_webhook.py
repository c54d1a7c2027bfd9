"""The workload admission webhook that holds a native Deployment back for its Rollout (adapter).

Served at ``/mutate-apps-v1-deployment`` as ``mdeployment.kb.io`` (upstream's path and name);
the decision is :func:`~kruise.rollouts.rollout.deploymenthold.hold_deployment`. Updates that
cannot matter (no release in progress, template and rollout-id unchanged) are admitted without
reading anything. The API server sends it only Deployments labelled
``rollouts.kruise.io/workload-type`` (and not the manager's own, ``control-plane:
controller-manager``, as upstream's chart), outside ``kube-system`` and the manager's namespace.
"""

from __future__ import annotations

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
from kruise.rollouts.rollout.constants import IN_PROGRESSING_ANNOTATION
from kruise.rollouts.rollout.deploymenthold import effective_revision_change, hold_deployment
from kruise.rollouts.rollout.workloadhold import rollout_for
from kruise.rollouts.rollout.workloadlabel import MANAGER_DEPLOYMENT_EXCLUSION, held_workload_selector

HOLD_DEPLOYMENT_PATH = "/mutate-apps-v1-deployment"


def deployment_webhook_specs(settings: WebhookSettings = WebhookSettings()) -> list[WebhookSpec]:
    return [
        WebhookSpec(
            name="mdeployment.kb.io",
            path=HOLD_DEPLOYMENT_PATH,
            mutating=True,
            rules=(Rule("apps", "v1", "deployments", ("UPDATE",)),),
            failure_policy=settings.failure_policy,
            timeout_seconds=settings.timeout_seconds,
            object_selector=held_workload_selector(MANAGER_DEPLOYMENT_EXCLUSION),
            namespace_selector=excluded_namespaces_selector(settings.excluded_namespaces),
        )
    ]


def _selector(deployment: dict[str, Any]) -> str:
    labels = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


class DeploymentHoldWebhook:
    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube

    async def hold(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.operation != "UPDATE" or req.object is None or req.old_object is None:
            return AdmissionResponse.allow()
        if req.raw.get("subResource"):
            return AdmissionResponse.allow()
        new, old = req.object, req.old_object
        in_progress = bool(
            ((new.get("metadata") or {}).get("annotations") or {}).get(IN_PROGRESSING_ANNOTATION)
        )
        if not in_progress and not effective_revision_change(old, new):
            return AdmissionResponse.allow()
        try:
            rollouts = (await self.kube.list(ROLLOUTS, req.namespace))["items"]
        except NotFoundError:  # Rollout CRD not installed
            return AdmissionResponse.allow()
        if rollout_for(new, rollouts) is None:
            return AdmissionResponse.allow()
        replicasets: list[dict[str, Any]] = []
        if not in_progress:
            selector = _selector(new)
            replicasets = (await self.kube.list(REPLICASETS, req.namespace, label_selector=selector or None))[
                "items"
            ]
        held = hold_deployment(new, old, rollouts, replicasets)
        if held is None:
            return AdmissionResponse.allow()
        patch: list[dict[str, Any]] = jsonpatch.make_patch(new, held).patch
        return AdmissionResponse.allow(patch)
