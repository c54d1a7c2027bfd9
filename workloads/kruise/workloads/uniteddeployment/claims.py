"""Which subset workloads a UnitedDeployment manages (upstream ``RefManager.ClaimOwnedObjects`` in
``SubsetControl.GetAllSubsets``), pure.

- a workload it controls that matches its selector is kept;
- one it controls that no longer matches is *released* (its controller reference removed),
  unless that workload is being deleted;
- a workload of its namespace with no controller that matches is *adopted* (its controller
  reference added), unless being deleted; workloads controlled by others are never touched.

Ownership is written as the whole ``ownerReferences`` list, guarded by the workload's
resourceVersion, so a concurrent change makes the write fail rather than clobber it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kruise.workloads.claims import Claims, claim
from kruise.workloads.objects import KubeObject, labels, mapping, spec
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = ["Claims", "claim_workloads"]


def claim_workloads(
    ud: KubeObject, owned: Sequence[KubeObject], orphans: Sequence[KubeObject], reference: dict[str, Any]
) -> Claims:
    """Sort ``owned`` (controlled by ``ud``) and ``orphans`` (no controller, same namespace);
    ``reference`` is the controller ownerReference to add. A malformed selector claims nothing."""
    selector = mapping(spec(ud).get("selector"))

    def matches(obj: KubeObject) -> bool:
        try:
            return selector_matches(selector, labels(obj))
        except SelectorError:
            return False

    return claim(ud, owned, orphans, reference, matches)
