"""Which objects a controller manages (upstream's ``ClaimObject`` of a ref manager), pure.

- an owned object (controlled by the owner) that is ``wanted`` is kept (``claimed``);
- an owned one that is not is *released* (the owner's controller reference removed), unless it
  is being deleted (then it is left alone and not managed);
- an orphan (no controller) that is ``wanted`` is *adopted* (the controller ``reference``
  added), unless it is being deleted; objects controlled by others are never passed in.

Ownership is written as the whole ``ownerReferences`` list, guarded by the object's
resourceVersion, so a concurrent change makes the write fail rather than clobber it. What
``wanted`` means is the kind's: a selector match, and for StatefulSet pods a member's name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.workloads.objects import KubeObject, is_being_deleted, mapping, metadata, sequence, uid

__all__ = ["Claims", "OwnerRefs", "claim"]

OwnerRefs = list[dict[str, Any]]


@dataclass(frozen=True)
class Claims:
    """``claimed``: the objects managed now; ``adopt`` / ``release``: (object, new ownerReferences)."""

    claimed: list[KubeObject] = field(default_factory=list)
    adopt: list[tuple[KubeObject, OwnerRefs]] = field(default_factory=list)
    release: list[tuple[KubeObject, OwnerRefs]] = field(default_factory=list)

    def without_adoptions(self) -> Claims:
        return Claims(self.claimed, [], self.release)


def _refs(obj: KubeObject) -> OwnerRefs:
    return [dict(mapping(r)) for r in sequence(metadata(obj).get("ownerReferences"))]


def claim(
    owner: KubeObject,
    owned: Sequence[KubeObject],
    orphans: Sequence[KubeObject],
    reference: dict[str, Any],
    wanted: Callable[[KubeObject], bool],
) -> Claims:
    """Sort ``owned`` (controlled by ``owner``) and ``orphans``; ``reference`` is the controller
    ownerReference an adoption adds. Whatever ``wanted`` raises propagates."""
    out = Claims()
    for obj in owned:
        if wanted(obj):
            out.claimed.append(obj)
        elif not is_being_deleted(obj):
            out.release.append((obj, [r for r in _refs(obj) if r.get("uid") != uid(owner)]))
    for obj in orphans:
        if wanted(obj) and not is_being_deleted(obj):
            out.adopt.append((obj, [*_refs(obj), reference]))
    return out
