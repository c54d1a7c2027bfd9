"""Which CloneSets a UnitedDeployment manages: kept, adopted, released (ClaimOwnedObjects)."""

from __future__ import annotations

from typing import Any

from kruise.workloads.uniteddeployment.claims import claim_workloads

UD = {"metadata": {"name": "web", "uid": "ud-uid"}, "spec": {"selector": {"matchLabels": {"app": "web"}}}}
REF = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "UnitedDeployment",
    "name": "web",
    "uid": "ud-uid",
    "controller": True,
}


def cloneset(
    name: str, labels: dict[str, str], refs: list[dict[str, Any]] | None = None, **meta: Any
) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels, "ownerReferences": refs or [], **meta}}


def test_keep_adopt_and_release() -> None:
    other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "cm-uid"}
    mine = cloneset("mine", {"app": "web"}, [REF])
    strayed = cloneset("strayed", {"app": "other"}, [other, REF])
    orphan = cloneset("orphan", {"app": "web"}, [other])
    unrelated = cloneset("unrelated", {"app": "other"})
    leaving = cloneset("leaving", {"app": "web"}, deletionTimestamp="2026-01-01T00:00:00Z")
    claims = claim_workloads(UD, [mine, strayed], [orphan, unrelated, leaving], REF)
    assert [c["metadata"]["name"] for c in claims.claimed] == ["mine"]
    assert claims.release == [(strayed, [other])]
    assert claims.adopt == [(orphan, [other, REF])]


def test_a_deleting_owned_workload_is_not_released_and_a_bad_selector_claims_nothing() -> None:
    deleting = cloneset("deleting", {"app": "other"}, [REF], deletionTimestamp="2026-01-01T00:00:00Z")
    assert claim_workloads(UD, [deleting], [], REF).release == []
    broken = {**UD, "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Bogus"}]}}}
    claims = claim_workloads(
        broken, [cloneset("mine", {"app": "web"}, [REF])], [cloneset("o", {"app": "web"})], REF
    )
    assert claims.claimed == [] and claims.adopt == []
