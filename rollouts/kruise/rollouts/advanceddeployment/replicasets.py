"""ReplicaSets of an advanced Deployment: which is new, the new one's body, the status (pure).

Follows kube-controller-manager's Deployment controller (``pkg/controller/deployment/sync.go``,
``util/deployment_util.go``) as Kruise Rollouts' copy of it does:

- the **new** ReplicaSet is the oldest one whose template equals the Deployment's once
  ``pod-template-hash`` is ignored (``FindNewReplicaSet``); every other owned one is old;
- a new ReplicaSet is named ``<deployment>-<hash>``, carries ``pod-template-hash: <hash>`` in its
  labels, selector and template labels, is controlled by the Deployment, copies the Deployment's
  annotations except kubectl's last-applied and the revision bookkeeping, and gets
  ``deployment.kubernetes.io/revision`` = highest old revision + 1,
  ``desired-replicas`` = ``spec.replicas`` and ``max-replicas`` = ``spec.replicas`` (what the
  native controller computes for a ``Recreate`` Deployment, so the two never rewrite each other);
- ``hash`` is ``util.ComputeHash(&template, status.collisionCount)`` with k8s.io/api v0.28.9, as
  upstream's controller computes it (``KR:pkg/controller/deployment/sync.go``; a collision
  count of 0 is hashed, an absent one is not): :func:`~kruise.rollouts.workloads.deployment.
  podtemplate.deployment_revision`. kube-controller-manager's own hash of the same template
  differs (its k8s.io/api is newer); it finds the ReplicaSet by template, not by name, so it
  adopts it as its new ReplicaSet later;
- the Deployment status (``calculateStatus``): ``replicas``/``readyReplicas``/
  ``availableReplicas`` summed over the ReplicaSets' status, ``updatedReplicas`` of the new one,
  ``unavailableReplicas = max(spec.replicas - available, 0)``, ``observedGeneration``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.rollouts.release.constants import DEPLOYMENT_REVISION_ANNOTATION, POD_TEMPLATE_HASH_LABEL
from kruise.rollouts.release.objects import meta, spec_replicas
from kruise.rollouts.workloads.deployment.podtemplate import deployment_revision, equal_ignore_hash

JSON = dict[str, Any]
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
_SKIPPED_ANNOTATIONS = frozenset(
    {
        "kubectl.kubernetes.io/last-applied-configuration",
        DEPLOYMENT_REVISION_ANNOTATION,
        REVISION_HISTORY_ANNOTATION,
        DESIRED_REPLICAS_ANNOTATION,
        MAX_REPLICAS_ANNOTATION,
        "deprecated.deployment.rollback.to",
    }
)


def status_int(obj: Mapping[str, Any], field: str) -> int:
    return int((obj.get("status") or {}).get(field) or 0)


def created(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(meta(obj).get("creationTimestamp") or ""), str(meta(obj).get("name") or "")


def revision(rs: Mapping[str, Any]) -> int:
    try:
        return int((meta(rs).get("annotations") or {}).get(DEPLOYMENT_REVISION_ANNOTATION) or 0)
    except ValueError:
        return 0


def split_new_old(
    deployment: Mapping[str, Any], replicasets: Sequence[Mapping[str, Any]]
) -> tuple[Mapping[str, Any] | None, list[Mapping[str, Any]]]:
    """``(new, olds)`` among ``replicasets`` (those the Deployment controls)."""
    template = (deployment.get("spec") or {}).get("template")
    new: Mapping[str, Any] | None = None
    for rs in sorted(replicasets, key=created):
        if equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            new = rs
            break
    return new, [rs for rs in replicasets if rs is not new]


def template_hash(template: Mapping[str, Any] | None, collision_count: int | None) -> str:
    """The ``pod-template-hash`` this controller gives a new ReplicaSet."""
    return deployment_revision(template, collision_count)


def new_replicaset_body(
    deployment: Mapping[str, Any], olds: Sequence[Mapping[str, Any]], replicas: int
) -> JSON:
    """The ReplicaSet ``create`` sends for the Deployment's current template."""
    d_meta = meta(deployment)
    spec = deployment.get("spec") or {}
    collision = (deployment.get("status") or {}).get("collisionCount")
    pod_hash = template_hash(spec.get("template"), collision)
    template: JSON = copy.deepcopy(dict(spec.get("template") or {}))
    t_meta = template.setdefault("metadata", {})
    t_meta["labels"] = {**(t_meta.get("labels") or {}), POD_TEMPLATE_HASH_LABEL: pod_hash}
    selector: JSON = copy.deepcopy(dict(spec.get("selector") or {}))
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH_LABEL: pod_hash}
    annotations = {
        k: v for k, v in (d_meta.get("annotations") or {}).items() if k not in _SKIPPED_ANNOTATIONS
    }
    annotations[DEPLOYMENT_REVISION_ANNOTATION] = str(max((revision(rs) for rs in olds), default=0) + 1)
    annotations[DESIRED_REPLICAS_ANNOTATION] = str(spec_replicas(deployment))
    annotations[MAX_REPLICAS_ANNOTATION] = str(spec_replicas(deployment))
    rs_spec: JSON = {"replicas": replicas, "selector": selector, "template": template}
    if spec.get("minReadySeconds"):
        rs_spec["minReadySeconds"] = spec["minReadySeconds"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{d_meta.get('name')}-{pod_hash}",
            "namespace": d_meta.get("namespace"),
            "labels": dict(t_meta["labels"]),
            "annotations": annotations,
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": d_meta.get("name"),
                    "uid": d_meta.get("uid"),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": rs_spec,
    }


def deployment_status(
    deployment: Mapping[str, Any], new: Mapping[str, Any] | None, replicasets: Sequence[Mapping[str, Any]]
) -> JSON:
    """The Deployment status fields this controller owns (``calculateStatus``)."""
    available = sum(status_int(rs, "availableReplicas") for rs in replicasets)
    return {
        "observedGeneration": int(meta(deployment).get("generation") or 0),
        "replicas": sum(status_int(rs, "replicas") for rs in replicasets),
        "updatedReplicas": status_int(new, "replicas") if new is not None else 0,
        "readyReplicas": sum(status_int(rs, "readyReplicas") for rs in replicasets),
        "availableReplicas": available,
        "unavailableReplicas": max(spec_replicas(deployment) - available, 0),
    }
