"""Scale-out objects (pods, PVCs, instance ids) and status arithmetic."""

from __future__ import annotations

from typing import Any

import pytest
from cloneset_builders import NOW, cloneset, pod

from kruise.workloads.cloneset.newpods import (
    ID_ALPHABET,
    choose_instance_ids,
    free_pvc_instance_ids,
    new_pod,
    new_pvcs,
    slow_start_batches,
)
from kruise.workloads.cloneset.revision import new_revision
from kruise.workloads.cloneset.status import calculate_status, format_label_selector


def _with_meta(cs: dict[str, Any]) -> dict[str, Any]:
    cs["metadata"].update({"name": "web", "namespace": "shop", "uid": "cs-uid"})
    return cs


@pytest.mark.parametrize(
    ("total", "batches"),
    [
        pytest.param(0, [], id="nothing to create"),
        pytest.param(1, [1], id="one pod"),
        pytest.param(10, [1, 2, 4, 3], id="ten pods in slow-start batches"),
        pytest.param(15, [1, 2, 4, 8], id="exact powers"),
    ],
)
def test_slow_start_batches(total: int, batches: list[int]) -> None:
    assert slow_start_batches(total) == batches
    assert sum(batches) == total


def test_instance_ids_reuse_free_pvcs_first_then_fresh_ones() -> None:
    ids = choose_instance_ids(3, taken={"aaaaa"}, reusable=["bbbbb"])
    assert ids[0] == "bbbbb"
    assert len(set(ids)) == 3 and "aaaaa" not in ids
    assert all(len(i) == 5 and set(i) <= set(ID_ALPHABET) for i in ids[1:])


def test_free_pvc_ids_exclude_those_in_use() -> None:
    def pvc(instance: str) -> dict[str, Any]:
        return {"metadata": {"labels": {"apps.kruise.io/cloneset-instance-id": instance}}}

    live = {"metadata": {"labels": {"apps.kruise.io/cloneset-instance-id": "used1"}}}
    assert free_pvc_instance_ids([pvc("used1"), pvc("free1")], [live]) == ["free1"]


def test_new_pod_has_name_labels_gate_owner_and_claims() -> None:
    cs = _with_meta(cloneset(3))
    cs["spec"]["volumeClaimTemplates"] = [
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    ]
    cs["spec"]["template"]["spec"]["volumes"] = [
        {"name": "data", "emptyDir": {}},
        {"name": "cache", "emptyDir": {}},
    ]
    rev = new_revision(cs, 1, 0)
    p = new_pod(cs, rev, "x7k2q", NOW)
    rev_name = rev["metadata"]["name"]
    assert p["metadata"]["name"] == "web-x7k2q"
    labels = p["metadata"]["labels"]
    assert labels["controller-revision-hash"] == rev_name
    assert labels["pod-template-hash"] == rev_name.rsplit("-", 1)[1]
    assert labels["apps.kruise.io/cloneset-instance-id"] == "x7k2q"
    assert labels["lifecycle.apps.kruise.io/state"] == "PreparingNormal"
    assert {"conditionType": "InPlaceUpdateReady"} in p["spec"]["readinessGates"]
    assert p["metadata"]["ownerReferences"][0]["uid"] == "cs-uid"
    assert p["spec"]["volumes"][0] == {
        "name": "data",
        "persistentVolumeClaim": {"claimName": "data-web-x7k2q"},
    }
    assert [v["name"] for v in p["spec"]["volumes"]] == ["data", "cache"], (
        "VCT volume replaces the template's"
    )
    (claim,) = new_pvcs(cs, "x7k2q")
    assert claim["metadata"]["name"] == "data-web-x7k2q"
    assert claim["metadata"]["labels"]["apps.kruise.io/cloneset-instance-id"] == "x7k2q"


@pytest.mark.parametrize(
    ("selector", "text"),
    [
        pytest.param({"matchLabels": {"app": "web", "tier": "fe"}}, "app=web,tier=fe", id="labels sorted"),
        pytest.param(
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["b", "a"]}]},
            "env in (a,b)",
            id="set-based in",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}, "!x", id="does not exist"
        ),
        pytest.param({}, "", id="empty"),
    ],
)
def test_label_selector_format(selector: dict[str, Any], text: str) -> None:
    assert format_label_selector(selector) == text


def test_status_counts_and_current_revision_follow_upstream() -> None:
    cs = cloneset(3, partition=1)
    cs["metadata"]["generation"] = 4
    pods = [pod("cs-new", name="a"), pod("cs-new", name="b"), pod("cs-old", name="c")]
    st = calculate_status(
        cs, pods, update_revision="cs-new", current_revision="cs-old", collision_count=0, now=NOW
    )
    assert st["observedGeneration"] == 4
    assert (st["replicas"], st["updatedReplicas"], st["expectedUpdatedReplicas"]) == (3, 2, 2)
    assert st["currentRevision"] == "cs-old", "not all pods updated yet"
    done = [pod("cs-new", name=n) for n in "abc"]
    st = calculate_status(
        cs, done, update_revision="cs-new", current_revision="cs-old", collision_count=0, now=NOW
    )
    assert st["currentRevision"] == "cs-new"
