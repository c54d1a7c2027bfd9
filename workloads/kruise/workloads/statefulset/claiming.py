"""Which pods a StatefulSet manages (``ClaimPods`` with the ``isMemberOf`` filter), pure.

- an owned pod that matches the selector and is named ``<set>-<n>`` is kept;
- an owned pod that does not is *released* (our controller reference removed), unless it is
  being deleted (then it is left alone and not managed);
- a pod without controller that matches and is named after the set is *adopted* (our
  controller reference added), unless it is being deleted; the shell first checks that the live
  set is not being deleted (``RecheckDeletionTimestamp``).

Ownership is written as the whole ``ownerReferences`` list, guarded by the pod's
resourceVersion, so a concurrent change makes the write fail rather than clobber it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.workloads.objects import (
    KubeObject,
    is_being_deleted,
    labels,
    mapping,
    metadata,
    name,
    sequence,
    spec,
    uid,
)
from kruise.workloads.selector import selector_matches
from kruise.workloads.statefulset.identity import STATEFULSET_KIND, parent_and_ordinal

__all__ = ["ClaimPatches", "claim_patches"]

OwnerRefs = list[dict[str, Any]]


@dataclass(frozen=True)
class ClaimPatches:
    """``claimed``: the pods managed now; ``adopt`` / ``release``: (pod, new ownerReferences)."""

    claimed: list[KubeObject]
    adopt: list[tuple[KubeObject, OwnerRefs]] = field(default_factory=list)
    release: list[tuple[KubeObject, OwnerRefs]] = field(default_factory=list)

    def without_adoptions(self) -> ClaimPatches:
        return ClaimPatches(self.claimed, [], self.release)


def _refs(pod: KubeObject) -> OwnerRefs:
    return [dict(mapping(r)) for r in sequence(metadata(pod).get("ownerReferences"))]


def claim_patches(
    sts: KubeObject, owned: Sequence[KubeObject], orphans: Sequence[KubeObject]
) -> ClaimPatches:
    """Sort ``owned`` (controlled by ``sts``) and ``orphans`` (no controller, named after it).

    Raises:
        SelectorError: a malformed selector (nothing is adopted or released then).
    """
    selector = mapping(spec(sts).get("selector"))
    out = ClaimPatches([])

    def wanted(pod: KubeObject) -> bool:
        return parent_and_ordinal(name(pod))[0] == name(sts) and selector_matches(selector, labels(pod))

    for pod in owned:
        if wanted(pod):
            out.claimed.append(pod)
        elif not is_being_deleted(pod):
            out.release.append((pod, [r for r in _refs(pod) if r.get("uid") != uid(sts)]))
    for pod in orphans:
        if wanted(pod) and not is_being_deleted(pod):
            out.adopt.append((pod, [*_refs(pod), STATEFULSET_KIND.reference(sts)]))
    return out
