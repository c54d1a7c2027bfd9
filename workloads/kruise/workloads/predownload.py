"""Image pre-download for in-place update (gate ``PreDownloadImageForInPlaceUpdate``): the pure core.

OpenKruise's CloneSet and Advanced StatefulSet controllers, while an in-place update is under
way (current revision != update revision), create one ImagePullJob per container whose image the
update revision changes, so the nodes of the pods still to be updated pull the new image before
their turn. Facts taken from upstream (v1.8):

- it starts once ``status.updatedReadyReplicas`` (0 when ``status.updateRevision`` is not yet the
  new revision) reaches ``apps.kruise.io/image-predownload-min-updated-ready-pods`` (an int or a
  percentage of ``spec.replicas`` rounded up; absent or unparsable: 0);
- a revision labelled ``apps.kruise.io/pre-predownload-created`` or
  ``apps.kruise.io/image-predownload-ignored`` is done; otherwise it is labelled *ignored* when the
  update recreates pods (CloneSet ``ReCreate``; StatefulSet ``OnDelete``, no ``rollingUpdate`` or
  ``podUpdatePolicy: ReCreate``), when ``spec.replicas <= 3``, when every pod updates in one batch
  (partition 0 and maxUnavailable >= replicas) or when the templates cannot be updated in place;
  otherwise the jobs are created and it is labelled *created* (labels, not annotations);
- job ``<update revision name>-<container name>``, controlled by the workload, labelled with the
  template labels plus the update revision's ``controller.kubernetes.io/hash`` label (key and
  value, ``history.ControllerRevisionHashLabel``); ``podSelector`` is
  the workload's selector plus ``controller-revision-hash NotIn [revision name, hash]`` (the pods
  not yet updated); ``parallelism`` from ``apps.kruise.io/image-predownload-parallelism`` (default
  1), ``pullPolicy {backoffLimit: 1, timeoutSeconds}`` from
  ``apps.kruise.io/image-predownload-timeout-seconds`` (default 300), ``completionPolicy {type:
  Always, ttlSecondsAfterFinished: 600}``, ``pullSecrets`` the template's ``imagePullSecrets``,
  ``sandboxConfig`` the template's annotations and the job's labels;
- once the revisions converge every ImagePullJob the workload controls is deleted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.workloads.cloneset.arith import calculate_partition
from kruise.workloads.inplace.spec import calculate_in_place_update_spec
from kruise.workloads.intorpercent import IntOrPercentError, legacy_scaled_value, scaled_value
from kruise.workloads.objects import (
    KubeObject,
    mapping,
    metadata,
    name,
    namespace,
    sequence,
    spec,
    status,
    uid,
)
from kruise.workloads.revisions import HASH_LABEL, template_of_revision

__all__ = [
    "CREATED_LABEL",
    "IGNORED_LABEL",
    "MINIMUM_REPLICAS",
    "MIN_UPDATED_READY_PODS_KEY",
    "PARALLELISM_KEY",
    "TIMEOUT_SECONDS_KEY",
    "PreDownloadPlan",
    "controlled_jobs",
    "diff_images",
    "ignore_reason",
    "image_pull_job",
    "min_updated_ready_pods",
    "plan_predownload",
]

JSON = dict[str, Any]
PARALLELISM_KEY = "apps.kruise.io/image-predownload-parallelism"
TIMEOUT_SECONDS_KEY = "apps.kruise.io/image-predownload-timeout-seconds"
MIN_UPDATED_READY_PODS_KEY = "apps.kruise.io/image-predownload-min-updated-ready-pods"
CREATED_LABEL = "apps.kruise.io/pre-predownload-created"
IGNORED_LABEL = "apps.kruise.io/image-predownload-ignored"
MINIMUM_REPLICAS = 3
"""Workloads with at most this many replicas never pre-download (``minimumReplicasToPreDownloadImage``)."""
POD_REVISION_LABEL = "controller-revision-hash"
"""The pods' revision label (``apps.ControllerRevisionHashLabelKey``): the job's pod selector."""
DEFAULT_TIMEOUT_SECONDS = 300
TTL_SECONDS_AFTER_FINISHED = 600


@dataclass(frozen=True)
class PreDownloadPlan:
    """What one reconcile does about pre-download.

    ``jobs``: ImagePullJob bodies to create (an existing one is left alone); ``mark``: the label
    to set to ``"true"`` on the update revision; ``delete_jobs``: delete every ImagePullJob the
    workload controls; ``reason``: why nothing or *ignored* (for the log).
    """

    jobs: tuple[JSON, ...] = ()
    mark: str | None = None
    delete_jobs: bool = False
    reason: str = ""


def _replicas(workload: KubeObject) -> int:
    value = spec(workload).get("replicas")
    return 1 if value is None else int(value)


def _parse_int_or_string(text: str) -> int | str:
    """``intstr.Parse``: an integer when the whole text is one, else the string."""
    try:
        return int(text)
    except ValueError:
        return text


def min_updated_ready_pods(workload: KubeObject) -> int:
    """The annotation scaled against ``spec.replicas`` (rounded up); 0 when absent or invalid."""
    raw = mapping(metadata(workload).get("annotations")).get(MIN_UPDATED_READY_PODS_KEY)
    if raw is None:
        return 0
    try:
        return scaled_value(_parse_int_or_string(str(raw)), _replicas(workload), round_up=True)
    except IntOrPercentError:
        return 0


def _annotation_int(workload: KubeObject, key: str, default: int) -> int:
    raw = mapping(metadata(workload).get("annotations")).get(key)
    try:
        return default if raw is None else int(str(raw))
    except ValueError:
        return default


def diff_images(current_template: Mapping[str, Any], update_template: Mapping[str, Any]) -> dict[str, str]:
    """Container name -> image of every container of ``update_template`` that is new or whose
    image differs from the same-named container of ``current_template`` (``diffImagesBetweenRevisions``)."""
    old = {
        str(mapping(c).get("name") or ""): mapping(c).get("image")
        for c in sequence(spec(current_template).get("containers"))
    }
    changed: dict[str, str] = {}
    for container in sequence(spec(update_template).get("containers")):
        cname = str(mapping(container).get("name") or "")
        image = str(mapping(container).get("image") or "")
        if cname not in old or old[cname] != image:
            changed[cname] = image
    return changed


def _lenient(func: Any, *args: Any, **kwargs: Any) -> int:
    try:
        return int(func(*args, **kwargs))
    except (IntOrPercentError, TypeError, ValueError):
        return 0


def ignore_reason(
    workload: KubeObject,
    current_revision: KubeObject,
    update_revision: KubeObject,
    *,
    env_from_metadata: bool = True,
) -> str:
    """Why the update revision gets the *ignored* label, "" when images should be pre-downloaded."""
    kind = str(workload.get("kind") or "CloneSet")
    strategy = mapping(spec(workload).get("updateStrategy"))
    replicas = _replicas(workload)
    if kind == "StatefulSet":
        rolling = strategy.get("rollingUpdate")
        if (
            strategy.get("type") == "OnDelete"
            or rolling is None
            or mapping(rolling).get("podUpdatePolicy") == "ReCreate"
        ):
            return "the update recreates pods"
    elif strategy.get("type") == "ReCreate":
        return "the update recreates pods"
    if replicas <= MINIMUM_REPLICAS:
        return f"replicas {replicas} <= {MINIMUM_REPLICAS}"
    if kind == "StatefulSet":
        rolling = mapping(strategy.get("rollingUpdate"))
        partition = int(rolling.get("partition") or 0)
        unavailable = rolling.get("maxUnavailable")
        # upstream defaults to the string "1", which the legacy parser reads as 1 percent
        unavailable_value = "1" if unavailable is None else unavailable
    else:
        partition = _lenient(calculate_partition, strategy.get("partition"), replicas)
        unavailable = strategy.get("maxUnavailable")
        unavailable_value = "20%" if unavailable is None else unavailable
    max_unavailable = _lenient(legacy_scaled_value, unavailable_value, replicas, round_up=False)
    if partition == 0 and max_unavailable >= replicas:
        return "every pod updates in one batch"
    in_place = calculate_in_place_update_spec(
        template_of_revision(current_revision),
        template_of_revision(update_revision),
        env_from_metadata=env_from_metadata,
    )
    if in_place is None:
        return "the revision cannot be updated in place"
    return ""


def image_pull_job(workload: KubeObject, update_revision: KubeObject, container: str, image: str) -> JSON:
    """The ImagePullJob pre-downloading ``image`` of ``container`` for ``update_revision``."""
    template = mapping(spec(workload).get("template"))
    revision_hash = str(mapping(metadata(update_revision).get("labels")).get(HASH_LABEL) or "")
    labels = {**mapping(metadata(template).get("labels")), HASH_LABEL: revision_hash}
    selector = mapping(spec(workload).get("selector"))
    pod_selector: JSON = {k: v for k, v in selector.items() if k in ("matchLabels",)}
    pod_selector["matchExpressions"] = [
        *sequence(selector.get("matchExpressions")),
        {"key": POD_REVISION_LABEL, "operator": "NotIn", "values": [name(update_revision), revision_hash]},
    ]
    job_spec: JSON = {
        "image": image,
        "podSelector": pod_selector,
        "parallelism": _annotation_int(workload, PARALLELISM_KEY, 1),
        "pullPolicy": {
            "backoffLimit": 1,
            "timeoutSeconds": _annotation_int(workload, TIMEOUT_SECONDS_KEY, DEFAULT_TIMEOUT_SECONDS),
        },
        "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": TTL_SECONDS_AFTER_FINISHED},
        "sandboxConfig": {"labels": dict(labels)},
    }
    secrets = [str(mapping(s).get("name")) for s in sequence(spec(template).get("imagePullSecrets"))]
    if secrets:
        job_spec["pullSecrets"] = secrets
    annotations = dict(mapping(metadata(template).get("annotations")))
    if annotations:
        job_spec["sandboxConfig"]["annotations"] = annotations
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {
            "name": f"{name(update_revision)}-{container}",
            "namespace": namespace(workload),
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": str(workload.get("apiVersion") or ""),
                    "kind": str(workload.get("kind") or ""),
                    "name": name(workload),
                    "uid": uid(workload),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": job_spec,
    }


def plan_predownload(
    workload: KubeObject,
    current_revision: KubeObject,
    update_revision: KubeObject,
    *,
    env_from_metadata: bool = True,
) -> PreDownloadPlan:
    """Decide this reconcile's pre-download work from the workload (its cached status) and its
    current and update revisions."""
    if name(current_revision) == name(update_revision):
        return PreDownloadPlan(delete_jobs=True, reason="revisions converged")
    updated_ready = int(status(workload).get("updatedReadyReplicas") or 0)
    if status(workload).get("updateRevision") != name(update_revision):
        updated_ready = 0
    wanted = min_updated_ready_pods(workload)
    if updated_ready < wanted:
        return PreDownloadPlan(reason=f"updated ready pods {updated_ready} < {wanted}")
    labels = mapping(metadata(update_revision).get("labels"))
    if CREATED_LABEL in labels or IGNORED_LABEL in labels:
        return PreDownloadPlan(reason="revision already handled")
    reason = ignore_reason(workload, current_revision, update_revision, env_from_metadata=env_from_metadata)
    if reason:
        return PreDownloadPlan(mark=IGNORED_LABEL, reason=reason)
    images = diff_images(template_of_revision(current_revision), template_of_revision(update_revision))
    jobs = tuple(image_pull_job(workload, update_revision, c, i) for c, i in images.items())
    return PreDownloadPlan(jobs=jobs, mark=CREATED_LABEL)


def controlled_jobs(jobs: Sequence[KubeObject], owner_uid: str) -> list[KubeObject]:
    """The jobs whose controller ownerReference is ``owner_uid``."""
    return [
        j
        for j in jobs
        if any(
            mapping(r).get("controller") and mapping(r).get("uid") == owner_uid
            for r in sequence(metadata(j).get("ownerReferences"))
        )
    ]
