"""Identity, ordinals, claims and PVC retention of the Advanced StatefulSet (pure)."""

from __future__ import annotations

from typing import Any

import pytest
from sts_builders import NOW, revision, statefulset

from kruise.workloads.statefulset.identity import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    claims_for,
    current_revision_needed,
    identity_matches,
    new_pod,
    parent_and_ordinal,
    replica_range,
    storage_matches,
)
from kruise.workloads.statefulset.retention import (
    claim_owner_references,
    claim_owners_match,
    has_stale_owner_ref,
)


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        ("web-0", ("web", 0)),
        ("my-web-12", ("my-web", 12)),
        ("web", ("", -1)),
        ("web-x", ("", -1)),
        ("web-2147483648", ("web", -1)),  # not an int32
    ],
)
def test_parent_and_ordinal(pod: str, expected: tuple[str, int]) -> None:
    assert parent_and_ordinal(pod) == expected


@pytest.mark.parametrize(
    ("replicas", "spec", "gate", "expected"),
    [
        pytest.param(3, {}, False, [0, 1, 2], id="plain"),
        pytest.param(3, {"reserveOrdinals": [1, "3-4"]}, False, [0, 2, 5], id="the issue's reserve example"),
        pytest.param(
            4, {"reserveOrdinals": [1, 3], "ordinals": {"start": 2}}, True, [2, 4, 5, 6], id="start 2"
        ),
        pytest.param(2, {"ordinals": {"start": 5}}, False, [0, 1], id="start needs the gate"),
        pytest.param(3, {"reserveOrdinals": [0, "2-5"]}, False, [1, 6, 7], id="range 2-5"),
        pytest.param(2, {"reserveOrdinals": [1, "5-3"]}, False, [0, 1], id="a bad range reserves nothing"),
        pytest.param(0, {"reserveOrdinals": [0]}, False, [], id="no replicas"),
    ],
)
def test_replica_range(replicas: int, spec: dict[str, Any], gate: bool, expected: list[int]) -> None:
    sts = statefulset(replicas, **spec)
    assert replica_range(sts, start_ordinal_gate=gate).ordinals() == expected


def test_new_pod_identity_and_storage() -> None:
    sts = statefulset(2, volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {}}])
    sts["spec"]["template"]["spec"]["volumes"] = [
        {"name": "data", "emptyDir": {}},
        {"name": "cfg", "emptyDir": {}},
    ]
    rev = revision(sts)
    pod = new_pod(sts, rev, 1, NOW)
    meta = pod["metadata"]
    assert meta["name"] == "web-1"
    assert meta["labels"][POD_NAME_LABEL] == "web-1" and meta["labels"][POD_INDEX_LABEL] == "1"
    assert meta["labels"]["controller-revision-hash"] == rev["metadata"]["name"]
    assert meta["labels"]["lifecycle.apps.kruise.io/state"] == "Normal"
    assert meta["ownerReferences"][0]["kind"] == "StatefulSet" and meta["ownerReferences"][0]["controller"]
    assert (pod["spec"]["hostname"], pod["spec"]["subdomain"]) == ("web-1", "svc")
    assert pod["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
        {"name": "cfg", "emptyDir": {}},
    ]
    assert {"conditionType": "KruisePodReady"} in pod["spec"]["readinessGates"]
    assert identity_matches(sts, pod) and storage_matches(sts, pod)
    del pod["metadata"]["labels"][POD_INDEX_LABEL]
    assert not identity_matches(sts, pod)
    assert identity_matches(sts, pod, pod_index_label=False)


def test_pre_normal_hook_creates_preparing_normal() -> None:
    sts = statefulset(1, lifecycle={"preNormal": {"labelsHandler": {"ready-to-go": "true"}}})
    assert new_pod(sts, revision(sts), 0, NOW)["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] == (
        "PreparingNormal"
    )
    sts["spec"]["template"]["metadata"]["labels"]["ready-to-go"] = "true"
    assert (
        new_pod(sts, revision(sts), 0, NOW)["metadata"]["labels"]["lifecycle.apps.kruise.io/state"]
        == "Normal"
    )


def test_claims_carry_the_selector_labels() -> None:
    template = {"metadata": {"name": "data", "labels": {"x": "y"}}, "spec": {"resources": {}}}
    sts = statefulset(1, volumeClaimTemplates=[template])
    (claim,) = claims_for(sts, 4)
    assert claim["metadata"] == {"name": "data-web-4", "namespace": "ns", "labels": {"app": "web"}}


@pytest.mark.parametrize(
    ("rolling", "ordinal", "slots", "expected"),
    [
        pytest.param({"partition": 2}, 1, [True, None, None], True, id="below the partition"),
        pytest.param({"partition": 2}, 2, [True, True, None], False, id="at the partition"),
        pytest.param({"partition": 2}, 2, [True, None, None], True, id="reserved slots do not count"),
        pytest.param({"partition": 1, "unorderedUpdate": {}}, 2, [True, False, None], False, id="unordered"),
        pytest.param({"partition": 2, "unorderedUpdate": {}}, 2, [True, False, None], True, id="unordered 2"),
    ],
)
def test_current_revision_needed(
    rolling: dict[str, Any], ordinal: int, slots: list[bool | None], expected: bool
) -> None:
    sts = statefulset(3, rolling=rolling)
    rev = revision(sts)
    pods: list[Any] = []
    for index, at_update in enumerate(slots):
        if at_update is None:
            pods.append(None)
            continue
        pod = new_pod(sts, rev, index, NOW)
        if not at_update:
            pod["metadata"]["labels"]["controller-revision-hash"] = "web-old"
        pods.append(pod)
    assert current_revision_needed(sts, rev["metadata"]["name"], ordinal, pods, 0) is expected


RETENTION = [
    # (whenScaled, whenDeleted, scaled_down) -> (set ref, pod ref)
    ("Retain", "Retain", False, (False, False)),
    ("Retain", "Delete", False, (True, False)),
    ("Retain", "Delete", True, (True, False)),
    ("Delete", "Retain", False, (False, False)),
    ("Delete", "Retain", True, (False, True)),
    ("Delete", "Delete", False, (True, False)),
    ("Delete", "Delete", True, (False, True)),
]


@pytest.mark.parametrize(("scaled", "deleted", "down", "wanted"), RETENTION)
def test_claim_owner_references_follow_the_policy(
    scaled: str, deleted: str, down: bool, wanted: tuple[bool, bool]
) -> None:
    sts = statefulset(1, persistentVolumeClaimRetentionPolicy={"whenScaled": scaled, "whenDeleted": deleted})
    pod = {"metadata": {"name": "web-0", "uid": "pod-uid"}}
    other = {"apiVersion": "v1", "kind": "ConfigMap", "name": "keep", "uid": "cm"}
    claim: dict[str, Any] = {"metadata": {"name": "data-web-0", "ownerReferences": [other]}}
    refs = claim_owner_references(sts, claim, pod, scaled_down=down)
    if wanted == (False, False):
        assert refs is None and claim_owners_match(sts, claim, pod, scaled_down=down)
        return
    assert refs is not None and refs[0] == other
    uids = {r["uid"] for r in refs}
    assert ("set-uid" in uids, "pod-uid" in uids) == wanted
    fixed = {"metadata": {"name": "data-web-0", "ownerReferences": refs}}
    assert claim_owners_match(sts, fixed, pod, scaled_down=down)
    assert claim_owner_references(sts, fixed, pod, scaled_down=down) is None


def test_stale_owner_reference() -> None:
    pod = {"metadata": {"name": "web-0", "uid": "new"}}
    claim = {"metadata": {"ownerReferences": [{"kind": "Pod", "name": "web-0", "uid": "old"}]}}
    assert has_stale_owner_ref(claim, pod)
    assert not has_stale_owner_ref(claim, {"metadata": {"name": "web-0", "uid": "old"}})
