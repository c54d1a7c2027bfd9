"""Pod templates of native Deployments and their revisions (pure).

kube-controller-manager names a Deployment's revision ``pod-template-hash``:
``ComputeHash(template, collisionCount)``, an FNV-32a over the Go struct of the pod template
as the ``spew`` library prints it, encoded with ``SafeEncodeString``. That printout covers every
field of the compiled-in ``PodTemplateSpec`` (nil pointers, ``resource.Quantity`` internals), so
it cannot be reproduced outside the exact Kubernetes version that runs the controller.

Kruise Rollouts computes it in-process (``util.ComputeHash``) with the ``k8s.io/api`` it is built
with (v0.28.9 at 9dd6279), so on a newer cluster its ``canaryRevision`` names no ReplicaSet or pod.
Measured for one stored template (``registry.example.com/shop/web:1.4.0``, defaults of a 1.37
API server): kube-controller-manager 1.37.2 labels the ReplicaSet ``79c58d7d6d`` (= ``ComputeHash``
with k8s.io/api v0.37.2), upstream's in-process hash is ``699b7fcd7f``. We record the hash the
cluster's ReplicaSets and pods carry (what ``kubectl get rs -l pod-template-hash=...`` finds), by
a practical rule:

- **known**: the revision of a template is the ``pod-template-hash`` label of a ReplicaSet
  whose template equals it once that label is ignored (``EqualIgnoreHash``). A ReplicaSet with
  the template exists as soon as any Deployment with it has been reconciled: the stable
  Deployment's own history, the canary Deployment of a canary-style release (created by the
  BatchRelease as a copy of the stable template), or the new ReplicaSet of a blue-green release;
- **provisional** until then: :func:`provisional_revision`, an FNV-32a over the template's
  canonical JSON encoded the same way. It has the shape of a real hash but not its value. The
  Rollout replaces a recorded provisional revision with the real one once it is known (the
  ``canary_revision_aliases`` of :class:`~kruise.rollouts.rollout.model.WorkloadInfo`), so a
  release is never mistaken for a continuous release because its hash became known.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from kruise.rollouts.release.constants import POD_TEMPLATE_HASH_LABEL

JSON = dict[str, Any]
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def safe_encode(text: str) -> str:
    """``rand.SafeEncodeString``: map every character onto a vowel-free alphabet."""
    return "".join(_ALPHANUMS[ord(ch) % len(_ALPHANUMS)] for ch in text)


def fnv32a(data: bytes) -> int:
    value = _FNV32_OFFSET
    for byte in data:
        value ^= byte
        value = (value * _FNV32_PRIME) & 0xFFFFFFFF
    return value


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


def provisional_revision(template: Mapping[str, Any] | None) -> str:
    """A hash-shaped stand-in for the revision of a template no ReplicaSet carries yet."""
    canonical = json.dumps(without_hash(template), sort_keys=True, separators=(",", ":"))
    return safe_encode(str(fnv32a(canonical.encode())))


def pod_template_hash(rs: Mapping[str, Any]) -> str:
    return str(((rs.get("metadata") or {}).get("labels") or {}).get(POD_TEMPLATE_HASH_LABEL) or "")


def template_revision(
    template: Mapping[str, Any] | None, replicasets: Iterable[Mapping[str, Any]]
) -> tuple[str, tuple[str, ...]]:
    """The revision of ``template`` and the other names it went by (see the module docstring).

    Returns ``(revision, aliases)``: the ``pod-template-hash`` of a ReplicaSet with this template
    and ``(provisional,)``, or ``(provisional, ())`` while no such ReplicaSet exists.
    """
    provisional = provisional_revision(template)
    for rs in replicasets:
        rs_hash = pod_template_hash(rs)
        if rs_hash and equal_ignore_hash((rs.get("spec") or {}).get("template"), template):
            return rs_hash, (provisional,)
    return provisional, ()
