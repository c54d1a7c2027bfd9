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

from kruise.workloads.claims import Claims, claim
from kruise.workloads.objects import KubeObject, labels, mapping, name, spec
from kruise.workloads.selector import selector_matches
from kruise.workloads.statefulset.identity import STATEFULSET_KIND, parent_and_ordinal

__all__ = ["ClaimPatches", "claim_patches"]

ClaimPatches = Claims


def claim_patches(sts: KubeObject, owned: Sequence[KubeObject], orphans: Sequence[KubeObject]) -> Claims:
    """Sort ``owned`` (controlled by ``sts``) and ``orphans`` (no controller, named after it).

    Raises:
        SelectorError: a malformed selector (nothing is adopted or released then).
    """
    selector = mapping(spec(sts).get("selector"))

    def wanted(pod: KubeObject) -> bool:
        return parent_and_ordinal(name(pod))[0] == name(sts) and selector_matches(selector, labels(pod))

    return claim(sts, owned, orphans, STATEFULSET_KIND.reference(sts), wanted)
