"""Pod templates of native Deployments and their revisions (pure).

Two hashes name a Deployment's template, as upstream:

- the **revision** Kruise Rollouts records (``canaryStatus.canaryRevision``,
  ``blueGreenStatus.updatedRevision``) is ``util.ComputeHash(&deployment.Spec.Template, nil)``
  computed in-process with the ``k8s.io/api`` it is built with (v0.28.9,
  ``KR:pkg/util/controller_finder.go`` ``getDeployment``/``getAdvancedDeployment``):
  :func:`deployment_revision`, the port in :mod:`kruise.rollouts.workloads.deployment.gohash`,
  over the template as the API server returns it;
- the **pod-template-hash** label of a ReplicaSet and its pods is the same function computed by
  whoever created the ReplicaSet: kube-controller-manager with its own ``k8s.io/api`` (v0.37.2
  for 1.37.2, so a different value for the same template), or the advanced Deployment
  controller with v0.28.9 and the collision count. Everything that selects pods (canary Service
  selectors, batch labels, ``podTemplateHash``, rollback detection) uses that label, read from
  the ReplicaSet (:func:`pod_template_hash`, :func:`template_revision`).

The port reproduces every template the API server can store except one whose
``metadata.creationTimestamp`` is set (Go's value then holds the controller's local time zone);
for such a template :func:`deployment_revision` falls back to an FNV-32a of the canonical JSON,
encoded the same way (hash-shaped, stable, but not upstream's value).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kruise.rollouts.release.constants import POD_TEMPLATE_HASH_LABEL
from kruise.rollouts.workloads.deployment.gohash import compute_hash, fnv32a, safe_encode

JSON = dict[str, Any]


def without_hash(template: Mapping[str, Any] | None) -> JSON:
    """The template minus ``metadata.labels[pod-template-hash]``; empty maps dropped (nil == empty)."""
    out: JSON = copy.deepcopy(dict(template or {}))
    meta = out.get("metadata")
    if isinstance(meta, dict):
        labels = dict(meta.get("labels") or {})
        labels.pop(POD_TEMPLATE_HASH_LABEL, None)
        for key, value in (("labels", labels), ("annotations", meta.get("annotations"))):
            if value:
                meta[key] = value
            else:
                meta.pop(key, None)
        meta.pop("creationTimestamp", None)
        if not meta:
            out.pop("metadata")
    return out


def equal_ignore_hash(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """``util.EqualIgnoreHash``: equal pod templates once ``pod-template-hash`` is ignored."""
    return without_hash(a) == without_hash(b)


def deployment_revision(template: Mapping[str, Any] | None, collision_count: int | None = None) -> str:
    """``util.ComputeHash(&template, collisionCount)`` at k8s.io/api v0.28.9 (see the module docstring)."""
    try:
        return compute_hash(template, collision_count)
    except ValueError:  # Unsupported, or a value Go's json.Unmarshal would refuse
        canonical = json.dumps(without_hash(template), sort_keys=True, separators=(",", ":"))
        suffix = "" if collision_count is None else f"/{collision_count}"
        return safe_encode(str(fnv32a((canonical + suffix).encode())))


def pod_template_hash(rs: Mapping[str, Any]) -> str:
    return str(((rs.get("metadata") or {}).get("labels") or {}).get(POD_TEMPLATE_HASH_LABEL) or "")


def template_revision(template: Mapping[str, Any] | None, replicasets: Iterable[Mapping[str, Any]]) -> str:
    """The ``pod-template-hash`` the pods of ``template`` carry: the label of a ReplicaSet whose
    template equals it once that label is ignored (``EqualIgnoreHash``), else the hash the
    advanced Deployment controller will name its ReplicaSet by (:func:`deployment_revision`)."""
    for rs in replicasets:
        rs_hash = pod_template_hash(rs)
        if rs_hash and equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            return rs_hash
    return deployment_revision(template)
