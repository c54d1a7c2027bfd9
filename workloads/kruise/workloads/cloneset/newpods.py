"""Pods and PVCs a CloneSet creates on scale-out (pure).

Mirrors OpenKruise's ``cloneset_scale.go`` (createPods / NewVersionedPods) and
``cloneset_core.go``:

- pod name ``<cloneset>-<instance-id>``, the id 5 characters of Kubernetes'
  ``rand.String`` alphabet, label ``apps.kruise.io/cloneset-instance-id``;
- free PVCs' instance ids are reused first (unless ``disablePVCReuse``), so a
  recreated pod gets its volumes back;
- template (labels, annotations, finalizers, spec) from the revision the pod is created at
  (old-revision pods keep the partition while scaling out), revision labels, the ``InPlaceUpdateReady``
  readiness gate, lifecycle state ``PreparingNormal``;
- one PVC per ``volumeClaimTemplates`` entry, ``<vct>-<cloneset>-<id>``, labelled
  with the selector's matchLabels and the instance id, owned by the CloneSet, and
  mounted by prepending a volume of the template's name (replacing a template
  volume of that name);
- with ``scaleStrategy.disablePVCReuse``, PVCs whose pod is gone are deleted and those of
  terminating pods handed to the pod (``cleanupPVCs``), so a new pod never inherits a volume.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.core.jsoncopy import json_copy
from kruise.workloads.cloneset.podstate import INSTANCE_ID_LABEL, revision_labels
from kruise.workloads.objects import (
    KubeObject,
    format_time,
    mapping,
    metadata,
    name,
    namespace,
    sequence,
    spec,
    uid,
)
from kruise.workloads.pods import (
    IN_PLACE_UPDATE_READY,
    KRUISE_POD_READY,
    LIFECYCLE_STATE_LABEL,
    LIFECYCLE_TIMESTAMP_ANNOTATION,
    LifecycleState,
    is_active,
)
from kruise.workloads.revisions import ControllerKind, template_of_revision

#: k8s.io/apimachinery/pkg/util/rand alphabet (no vowels, no confusable digits).
ID_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
ID_LENGTH = 5
CLONESET_API_VERSION = "apps.kruise.io/v1alpha1"


def random_id(rng: Callable[[Sequence[str]], str] = random.choice) -> str:
    """A 5-character instance id (``rand.String(5)``)."""
    return "".join(rng(ID_ALPHABET) for _ in range(ID_LENGTH))


CLONESET_KIND = ControllerKind(CLONESET_API_VERSION, "CloneSet")


def owner_reference(cloneset: KubeObject) -> dict[str, Any]:
    """The controller ownerReference pointing at ``cloneset``."""
    return CLONESET_KIND.reference(cloneset)


def pvc_name(vct_name: str, cloneset_name: str, instance_id: str) -> str:
    return f"{vct_name}-{cloneset_name}-{instance_id}"


def free_pvc_instance_ids(pvcs: Iterable[KubeObject], pods: Iterable[KubeObject]) -> list[str]:
    """Instance ids of PVCs no live pod uses, sorted (reused by new pods)."""
    used = {mapping(metadata(p).get("labels")).get(INSTANCE_ID_LABEL) for p in pods}
    free = {
        str(mapping(metadata(c).get("labels")).get(INSTANCE_ID_LABEL))
        for c in pvcs
        if not metadata(c).get("deletionTimestamp")
        and mapping(metadata(c).get("labels")).get(INSTANCE_ID_LABEL)
        and mapping(metadata(c).get("labels")).get(INSTANCE_ID_LABEL) not in used
    }
    return sorted(free)


def choose_instance_ids(
    count: int,
    *,
    taken: Collection[str],
    reusable: Sequence[str],
    rng: Callable[[Sequence[str]], str] = random.choice,
) -> list[str]:
    """``count`` instance ids: reusable PVC ids first, then fresh random ones not in ``taken``."""
    chosen: list[str] = []
    seen = set(taken)
    for instance_id in reusable:
        if len(chosen) == count:
            return chosen
        if instance_id not in seen:
            chosen.append(instance_id)
            seen.add(instance_id)
    while len(chosen) < count:
        candidate = random_id(rng)
        if candidate not in seen:
            chosen.append(candidate)
            seen.add(candidate)
    return chosen


def new_pvcs(cloneset: KubeObject, instance_id: str) -> list[dict[str, Any]]:
    """The PVCs for one pod from ``spec.volumeClaimTemplates``."""
    match_labels = dict(mapping(mapping(spec(cloneset).get("selector")).get("matchLabels")))
    out = []
    for vct in sequence(spec(cloneset).get("volumeClaimTemplates")):
        vct_meta = mapping(mapping(vct).get("metadata"))
        labels: dict[str, Any] = {**dict(mapping(vct_meta.get("labels"))), **match_labels}
        labels[INSTANCE_ID_LABEL] = instance_id
        pvc_meta: dict[str, Any] = {
            "name": pvc_name(str(vct_meta.get("name")), name(cloneset), instance_id),
            "namespace": namespace(cloneset),
            "labels": labels,
            "ownerReferences": [owner_reference(cloneset)],
        }
        if vct_meta.get("annotations"):
            pvc_meta["annotations"] = dict(mapping(vct_meta.get("annotations")))
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": pvc_meta,
                "spec": json_copy(dict(mapping(mapping(vct).get("spec")))),
            }
        )
    return out


def new_pod(
    cloneset: KubeObject,
    revision: KubeObject,
    instance_id: str,
    now: datetime,
    *,
    short_hash_label: bool = False,
) -> dict[str, Any]:
    """The pod to create for ``instance_id`` at ``revision`` (a ControllerRevision dict)."""
    template = template_of_revision(revision)
    template_meta = mapping(template.get("metadata"))
    revision_name = name(revision)
    labels: dict[str, Any] = {
        **dict(mapping(template_meta.get("labels"))),
        **revision_labels(revision_name, short_hash_label=short_hash_label),
        INSTANCE_ID_LABEL: instance_id,
        LIFECYCLE_STATE_LABEL: str(LifecycleState.PREPARING_NORMAL),
    }
    annotations: dict[str, Any] = {
        **dict(mapping(template_meta.get("annotations"))),
        LIFECYCLE_TIMESTAMP_ANNOTATION: format_time(now),
    }
    pod_spec: dict[str, Any] = json_copy(dict(mapping(template.get("spec"))))
    gates = [dict(g) for g in sequence(pod_spec.get("readinessGates"))]
    # InPlaceUpdateReady (``inplaceupdate.InjectReadinessGate``), then KruisePodReady, which
    # upstream's pod webhook adds to every pod an apps.kruise.io workload creates
    for gate in (IN_PLACE_UPDATE_READY, KRUISE_POD_READY):
        if not any(g.get("conditionType") == gate for g in gates):
            gates.append({"conditionType": gate})
    pod_spec["readinessGates"] = gates
    vct_names = [
        str(mapping(mapping(v).get("metadata")).get("name"))
        for v in sequence(spec(cloneset).get("volumeClaimTemplates"))
    ]
    if vct_names:
        claims = [
            {"name": vct, "persistentVolumeClaim": {"claimName": pvc_name(vct, name(cloneset), instance_id)}}
            for vct in vct_names
        ]
        others = [
            v for v in sequence(pod_spec.get("volumes")) if mapping(v).get("name") not in set(vct_names)
        ]
        pod_spec["volumes"] = claims + list(others)
    pod_meta: dict[str, Any] = {
        "name": f"{name(cloneset)}-{instance_id}",
        "namespace": namespace(cloneset),
        "labels": labels,
        "annotations": annotations,
        "ownerReferences": [owner_reference(cloneset)],
    }
    if sequence(template_meta.get("finalizers")):  # GetPodFromTemplate copies them
        pod_meta["finalizers"] = [str(f) for f in sequence(template_meta.get("finalizers"))]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def pvcs_of_instance(pvcs: Iterable[KubeObject], instance_id: str) -> list[KubeObject]:
    """The PVCs labelled with ``instance_id`` (deleted together with their pod)."""
    return [c for c in pvcs if mapping(metadata(c).get("labels")).get(INSTANCE_ID_LABEL) == instance_id]


def instance_id_of(pod: Mapping[str, Any]) -> str:
    return str(mapping(metadata(pod).get("labels")).get(INSTANCE_ID_LABEL) or "")


@dataclass(frozen=True)
class PVCCleanup:
    """What ``cleanupPVCs`` does with ``scaleStrategy.disablePVCReuse`` (see :func:`plan_pvc_cleanup`).

    Attributes:
        keep: PVCs of active pods; the rest of the reconcile sees only these.
        reown: ``(pvc, pod)`` pairs: the PVC of an inactive (terminating or finished) pod is
            handed to that pod, so the garbage collector removes it together with the pod.
        delete: PVCs whose pod is gone: deleted now.
    """

    keep: list[KubeObject]
    reown: list[tuple[KubeObject, KubeObject]]
    delete: list[KubeObject]


def plan_pvc_cleanup(pods: Iterable[KubeObject], pvcs: Iterable[KubeObject]) -> PVCCleanup:
    """Split the CloneSet's PVCs by whether their instance id has an active, inactive or no pod.

    ``pods`` are all owned pods, active and inactive (``GetActiveAndInactivePods``).
    """
    active: set[str] = set()
    inactive: dict[str, KubeObject] = {}
    for pod in pods:
        instance_id = instance_id_of(pod)
        if not instance_id:
            continue
        if is_active(pod):
            active.add(instance_id)
        else:
            inactive[instance_id] = pod
    keep: list[KubeObject] = []
    reown: list[tuple[KubeObject, KubeObject]] = []
    delete: list[KubeObject] = []
    for pvc in pvcs:
        instance_id = instance_id_of(pvc)
        if instance_id in active:
            keep.append(pvc)
        elif instance_id in inactive:
            reown.append((pvc, inactive[instance_id]))
        else:
            delete.append(pvc)
    return PVCCleanup(keep, reown, delete)


def pvc_reown_patch(pvc: KubeObject, cloneset_uid: str, pod: KubeObject) -> dict[str, Any]:
    """Merge patch moving ``pvc``'s ownership from the CloneSet to ``pod`` (``updateClaimOwnerRefToPod``).

    The CloneSet's reference is removed and a controller reference to the pod added; the
    PVC's resourceVersion is the precondition.
    """
    refs = [
        dict(r)
        for r in sequence(metadata(pvc).get("ownerReferences"))
        if mapping(r).get("uid") != cloneset_uid
    ]
    if not any(r.get("uid") == uid(pod) for r in refs):
        refs.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": name(pod),
                "uid": uid(pod),
                "controller": True,
                "blockOwnerDeletion": True,
            }
        )
    return {"metadata": {"ownerReferences": refs, "resourceVersion": metadata(pvc).get("resourceVersion")}}
