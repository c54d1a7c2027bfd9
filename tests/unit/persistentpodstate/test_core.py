"""PersistentPodState's pure core: recording, cleanup, affinity injection, auto-generation."""

from __future__ import annotations

from typing import Any

from kruise.workloads.api.persistentpodstate import INJECTED_ANNOTATION, PersistentPodStateView
from kruise.workloads.persistentpodstate.core import (
    Workload,
    generated_pps,
    in_replicas,
    inject,
    next_status,
    node_affinity,
    pod_ordinal,
    selected,
    wants_generated,
)

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
NODES = {"n1": {ZONE: "z1", HOST: "n1", "other": "x"}, "n2": {ZONE: "z2", HOST: "n2"}}


def _pod(name: str, node: str = "n1", ready: bool = True, **annotations: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"nodeName": node},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def _pps(policy: str = "", states: dict[str, Any] | None = None) -> PersistentPodStateView:
    pps: PersistentPodStateView = {
        "metadata": {"name": "web", "generation": 3},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
            "requiredPersistentTopology": {"nodeTopologyKeys": [ZONE]},
            "preferredPersistentTopology": [{"weight": 50, "preference": {"nodeTopologyKeys": [HOST]}}],
            "persistentPodAnnotations": [{"key": "ip"}],
        },
    }
    if policy:
        pps["spec"]["persistentPodStateRetentionPolicy"] = policy
    if states is not None:
        pps["status"] = {"observedGeneration": 1, "podStates": states}
    return pps


def test_ready_pods_recorded_with_topology_labels_and_annotations() -> None:
    pods = {"web-0": _pod("web-0", "n1", ip="1.2.3.4"), "web-1": _pod("web-1", "n2", ready=False)}
    status = next_status(_pps(), Workload(replicas=2), pods, NODES.get)
    assert status == {
        "observedGeneration": 3,
        "podStates": {
            "web-0": {
                "nodeName": "n1",
                "nodeTopologyLabels": {HOST: "n1", ZONE: "z1"},
                "annotations": {"ip": "1.2.3.4"},
            }
        },
    }


def test_moved_pod_rerecorded_and_missing_node_keeps_old_state() -> None:
    old = {"nodeName": "n1", "nodeTopologyLabels": {HOST: "n1", ZONE: "z1"}, "annotations": {"ip": "a"}}
    pods = {"web-0": _pod("web-0", "n2", ip="a"), "web-1": _pod("web-1", "gone")}
    status = next_status(_pps(states={"web-0": old, "web-1": old}), Workload(replicas=2), pods, NODES.get)
    assert status["podStates"]["web-0"]["nodeTopologyLabels"] == {HOST: "n2", ZONE: "z2"}
    assert status["podStates"]["web-1"] == old


def test_scale_in_drops_states_of_gone_pods_beyond_replicas() -> None:
    states = {
        name: {"nodeName": "n1", "nodeTopologyLabels": {ZONE: "z1"}} for name in ("web-0", "web-1", "web-2")
    }
    pods = {"web-2": _pod("web-2", ready=False)}  # still terminating: kept
    status = next_status(_pps(states=states), Workload(replicas=1), pods, NODES.get)
    assert sorted(status["podStates"]) == ["web-0", "web-2"]


def test_when_deleted_policy_keeps_scaled_in_states() -> None:
    states = {"web-5": {"nodeName": "n1", "nodeTopologyLabels": {ZONE: "z1"}}}
    status = next_status(_pps("WhenDeleted", states), Workload(replicas=1), {}, NODES.get)
    assert sorted(status["podStates"]) == ["web-5"]


def test_workload_gone_or_deleting_clears_states() -> None:
    states = {"web-0": {"nodeName": "n1", "nodeTopologyLabels": {ZONE: "z1"}}}
    assert next_status(_pps(states=states), None, {}, NODES.get) == {"observedGeneration": 3}
    deleting = Workload(replicas=1, deleting=True)
    assert next_status(_pps("WhenDeleted", states), deleting, {}, NODES.get) == {"observedGeneration": 3}


def test_reserved_ordinals_are_skipped_when_counting_replicas() -> None:
    workload = Workload(replicas=2, reserve_ordinals=frozenset({1}))
    assert [i for i in range(5) if in_replicas(i, workload)] == [0, 2]
    assert pod_ordinal("my-web-12") == 12 and pod_ordinal("web-x") is None


def test_node_affinity_required_selector_and_preferred_terms() -> None:
    state = {"nodeName": "n1", "nodeTopologyLabels": {ZONE: "z1", HOST: "n1"}}
    selector, preferred = node_affinity(_pps()["spec"], state)
    assert selector == {ZONE: "z1"}
    assert preferred == [
        {
            "weight": 50,
            "preference": {"matchExpressions": [{"key": HOST, "operator": "In", "values": ["n1"]}]},
        }
    ]


def test_inject_marks_pod_merges_selector_and_appends_preference() -> None:
    existing = {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}
    pod: dict[str, Any] = {
        "metadata": {"name": "web-0"},
        "spec": {
            "nodeSelector": {"disk": "ssd"},
            "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [existing]}},
        },
    }
    pps = _pps(states={"web-0": {"nodeName": "n1", "nodeTopologyLabels": {ZONE: "z1", HOST: "n1"}}})
    assert inject(pod, pps)
    assert pod["metadata"]["annotations"] == {INJECTED_ANNOTATION: "web"}
    assert pod["spec"]["nodeSelector"] == {"disk": "ssd", ZONE: "z1"}
    terms = pod["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert terms[0] == existing and terms[1]["weight"] == 50


def test_inject_skips_pod_without_recorded_topology() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "web-1"}, "spec": {}}
    assert not inject(pod, _pps(states={"web-1": {"nodeName": "n1"}}))
    assert not inject(pod, _pps(states={"web-0": {"nodeName": "n1", "nodeTopologyLabels": {ZONE: "z"}}}))
    assert pod == {"metadata": {"name": "web-1"}, "spec": {}}


def test_generated_pps_from_statefulset_annotations() -> None:
    annotations = {
        "kruise.io/auto-generate-persistent-pod-state": "true",
        "kruise.io/required-persistent-topology": f"{ZONE}",
        "kruise.io/preferred-persistent-topology": f"{HOST},rack",
        "kruise.io/persistent-pod-annotations": "ip",
    }
    sts = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "ns", "uid": "u1", "annotations": annotations},
    }
    assert wants_generated(annotations)
    assert not wants_generated({"kruise.io/auto-generate-persistent-pod-state": "true"})
    obj = generated_pps(sts)
    assert obj["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert obj["spec"] == {
        "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "db"},
        "requiredPersistentTopology": {"nodeTopologyKeys": [ZONE]},
        "persistentPodAnnotations": [{"key": "ip"}],
        "preferredPersistentTopology": [{"weight": 100, "preference": {"nodeTopologyKeys": [HOST, "rack"]}}],
    }


def test_selected_matches_group_kind_name_and_skips_deleting() -> None:
    deleting = _pps()
    deleting["metadata"] = {"name": "old", "deletionTimestamp": "2024-01-01T00:00:00Z"}
    live = _pps()
    target = {"apiVersion": "apps/v1beta2", "kind": "StatefulSet", "name": "web"}
    assert selected([deleting, live], target) is live
    assert selected([live], {**target, "apiVersion": "apps.kruise.io/v1beta1"}) is None
