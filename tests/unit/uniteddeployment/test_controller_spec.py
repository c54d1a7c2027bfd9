"""What the UnitedDeployment controller watches and reads: every subset kind, the pods, and a
Deployment's ReplicaSets (indexed by owner UID, to find its pods)."""

from __future__ import annotations

from typing import Any, cast

from kruise.core.kube.resources import (
    CLONESETS,
    CONTROLLER_REVISIONS,
    DEPLOYMENTS,
    NATIVE_STATEFULSETS,
    PODS,
    REPLICASETS,
    STATEFULSETS,
    UNITEDDEPLOYMENTS,
)
from kruise.core.runtime import OWNER_UID
from kruise.workloads.uniteddeployment.controller import (
    SUBSET_RESOURCES,
    UnitedDeploymentController,
    UnitedDeploymentOptions,
)


def test_every_subset_kind_is_watched_and_replicasets_are_read_by_owner() -> None:
    controller = UnitedDeploymentController(
        cast(Any, None), cast(Any, None), cast(Any, None), UnitedDeploymentOptions()
    )
    spec = controller.spec()
    watched = [w.resource for w in spec.watches]
    assert set(SUBSET_RESOURCES) == {NATIVE_STATEFULSETS, STATEFULSETS, CLONESETS, DEPLOYMENTS}
    assert watched == [UNITEDDEPLOYMENTS, *SUBSET_RESOURCES, PODS, CONTROLLER_REVISIONS]
    reads = {r.resource: set(r.indexers) for r in spec.all_reads()}
    assert reads[REPLICASETS] == {OWNER_UID}
    assert all(reads[r] == {OWNER_UID} for r in (*SUBSET_RESOURCES, PODS))
