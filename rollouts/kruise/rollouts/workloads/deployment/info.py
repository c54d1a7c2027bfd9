"""Read a native ``apps/v1`` Deployment into :class:`WorkloadInfo` (pure), as Kruise Rollouts'
``ControllerFinder`` does (``KR:pkg/util/controller_finder.go``).

Which finder applies depends on the Rollout's rolling style:

- **Canary** (``enableExtraWorkloadForCanary: true``, ``getDeployment``): the stable revision
  is the ``pod-template-hash`` of the stable ReplicaSet (the oldest active one the Deployment
  owns); the canary revision is the revision of the Deployment's template; ``podTemplateHash``
  (the canary Service selector) is the hash of the newest canary Deployment's ReplicaSet;
  rolling back means the stable ReplicaSet's template equals the Deployment's again;
- **BlueGreen** and **Partition** (``getAdvancedDeployment``): the stable revision is the
  ``rollouts.kruise.io/stable-revision`` label the workload webhook stamped when the release
  began; ``podTemplateHash`` is the hash of the active ReplicaSet with the current template;
  rolling back means that hash is the stable revision again.

The canary revision is ``ComputeHash`` of the Deployment's template as upstream computes it (k8s.io/api
v0.28.9); stable revisions and ``podTemplateHash`` are ReplicaSets' ``pod-template-hash`` labels
(see :mod:`kruise.rollouts.workloads.deployment.podtemplate`). The status is only
trusted once the Deployment controller observed the current generation (and, for the canary
style, once the stable ReplicaSet exists).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace as _replace
from typing import Any

from kruise.rollouts.release.constants import (
    CANARY_DEPLOYMENT_LABEL,
    DEPLOYMENT_REVISION_ANNOTATION,
    IN_PROGRESSING_ANNOTATION,
    STABLE_REVISION_LABEL,
)
from kruise.rollouts.release.objects import meta as meta_of
from kruise.rollouts.release.objects import spec_replicas
from kruise.rollouts.release.rolloutid import workload_rollout_id
from kruise.rollouts.workloads.deployment.podtemplate import (
    deployment_revision,
    equal_ignore_hash,
    pod_template_hash,
)
from kruise.rollouts.workloads.info import WorkloadInfo

JSON = dict[str, Any]


def _controller_uid(obj: Mapping[str, Any]) -> str:
    for ref in meta_of(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid") or "")
    return ""


def owned_replicasets(
    deployment: Mapping[str, Any], replicasets: Iterable[Mapping[str, Any]], *, active_only: bool = True
) -> list[Mapping[str, Any]]:
    """ReplicaSets controlled by ``deployment`` and not being deleted (``GetReplicaSetsForDeployment``:
    only those with ``replicas > 0`` when ``active_only``)."""
    uid = str(meta_of(deployment).get("uid") or "")
    return [
        rs
        for rs in replicasets
        if uid
        and _controller_uid(rs) == uid
        and not meta_of(rs).get("deletionTimestamp")
        and (not active_only or spec_replicas(rs) > 0)
    ]


def owned_pods(
    deployment: Mapping[str, Any],
    replicasets: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
) -> list[Mapping[str, Any]]:
    """``ListOwnedPods`` of a Deployment: the pods controlled by a ReplicaSet it controls."""
    owners = {
        str(meta_of(rs).get("uid") or "")
        for rs in owned_replicasets(deployment, replicasets, active_only=False)
    }
    return [p for p in pods if _controller_uid(p) in owners - {""}]


def _created(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(meta_of(obj).get("creationTimestamp") or ""), str(meta_of(obj).get("name") or "")


def stable_replicaset(
    deployment: Mapping[str, Any], replicasets: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """``GetDeploymentStableRs``: the oldest active ReplicaSet of ``deployment``."""
    owned = sorted(owned_replicasets(deployment, replicasets), key=_created)
    return owned[0] if owned else None


def _revision_number(rs: Mapping[str, Any]) -> int | None:
    raw = (meta_of(rs).get("annotations") or {}).get(DEPLOYMENT_REVISION_ANNOTATION)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def new_and_stable(
    replicasets: Sequence[Mapping[str, Any]], deployment: Mapping[str, Any]
) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """``FindCanaryAndStableReplicaSet``: the ReplicaSet with the Deployment's template, and the
    active one with the smallest revision number among the others."""

    def order(rs: Mapping[str, Any]) -> tuple[int, str, str]:
        number = _revision_number(rs)
        return (number if number is not None else -1, *_created(rs))

    template = (deployment.get("spec") or {}).get("template")
    new: Mapping[str, Any] | None = None
    stable: Mapping[str, Any] | None = None
    for rs in sorted(replicasets, key=order):
        if equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            new = rs
        elif stable is None and spec_replicas(rs) > 0:
            stable = rs
    return new, stable


def latest_canary_deployment(
    deployment: Mapping[str, Any], deployments: Iterable[Mapping[str, Any]]
) -> Mapping[str, Any] | None:
    """``getLatestCanaryDeployment``: the newest live Deployment labelled
    ``rollouts.kruise.io/canary-deployment=<name>`` in the same namespace."""
    name = meta_of(deployment).get("name")
    ns = meta_of(deployment).get("namespace")
    canaries = [
        d
        for d in deployments
        if (meta_of(d).get("labels") or {}).get(CANARY_DEPLOYMENT_LABEL) == name
        and meta_of(d).get("namespace") == ns
        and not meta_of(d).get("deletionTimestamp")
    ]
    return max(canaries, key=_created) if canaries else None


def deployment_rolling_style(rollout: Mapping[str, Any]) -> str:
    """``GetRollingStyle`` for a Deployment: ``BlueGreen``, ``Canary`` or ``Partition``."""
    strategy = (rollout.get("spec") or {}).get("strategy") or {}
    if strategy.get("blueGreen"):
        return "BlueGreen"
    if (strategy.get("canary") or {}).get("enableExtraWorkloadForCanary"):
        return "Canary"
    return "Partition"


def deployment_info(
    rollout: Mapping[str, Any],
    deployment: Mapping[str, Any],
    replicasets: Sequence[Mapping[str, Any]],
    canaries: Sequence[Mapping[str, Any]] = (),
) -> WorkloadInfo:
    """What the Rollout engine knows of ``deployment``.

    ``replicasets``: the ReplicaSets of the namespace (at least those of the Deployment and of
    its canary Deployments); ``canaries``: the Deployments labelled as its canaries.
    """
    meta = meta_of(deployment)
    spec = deployment.get("spec") or {}
    status = deployment.get("status") or {}
    annotations = meta.get("annotations") or {}
    labels = meta.get("labels") or {}
    in_progressing = bool(annotations.get(IN_PROGRESSING_ANNOTATION))
    template = spec.get("template")
    canary_dep = latest_canary_deployment(deployment, canaries)
    base = WorkloadInfo(
        kind="Deployment",
        api_version=str(deployment.get("apiVersion") or "apps/v1"),
        name=str(meta.get("name")),
        namespace=str(meta.get("namespace")),
        uid=str(meta.get("uid") or ""),
        replicas=spec_replicas(deployment),
        stable_revision="",
        canary_revision=deployment_revision(template),
        pod_template_hash="",
        in_progressing=in_progressing,
        in_rollback=False,
        status_consistent=int(meta.get("generation") or 0) == int(status.get("observedGeneration") or -1),
        updated_replicas=int(status.get("updatedReplicas") or 0),
        updated_ready_replicas=int(status.get("readyReplicas") or 0),
        generation=int(meta.get("generation") or 0),
        rollout_id=workload_rollout_id(deployment),
    )
    if not base.status_consistent:
        return base
    if deployment_rolling_style(rollout) == "Canary":
        stable_rs = stable_replicaset(deployment, replicasets)
        if stable_rs is None:
            return _replace(base, status_consistent=False)
        stable_rev = pod_template_hash(stable_rs)
        rollback = in_progressing and equal_ignore_hash(
            (stable_rs.get("spec") or {}).get("template"), template
        )
        canary_rs = stable_replicaset(canary_dep, replicasets) if canary_dep and not rollback else None
        return _replace(
            base,
            stable_revision=stable_rev,
            in_rollback=rollback,
            pod_template_hash=pod_template_hash(canary_rs)
            if canary_rs is not None and in_progressing
            else "",
        )
    stable_rev = str(labels.get(STABLE_REVISION_LABEL) or "")
    if not in_progressing:
        return _replace(base, stable_revision=stable_rev)
    new_rs, _ = new_and_stable(owned_replicasets(deployment, replicasets), deployment)
    template_hash = pod_template_hash(new_rs) if new_rs is not None else ""
    return _replace(
        base,
        stable_revision=stable_rev,
        pod_template_hash=template_hash,
        in_rollback=bool(stable_rev) and stable_rev == template_hash,
    )
