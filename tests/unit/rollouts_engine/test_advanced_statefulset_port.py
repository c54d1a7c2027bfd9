"""Advanced StatefulSets through the workload port: what differs from a native StatefulSet (the
generic partition behaviour is ``test_partition_port.py``'s contract, ordered and unordered).

Upstream facts (``KR:pkg/controller/batchrelease/control/partitionstyle/statefulset/control.go``,
``pkg/webhook/workload/mutating/webhooks.go``): taking control writes ``paused: false`` beside the
partition; ``status.updatedReadyReplicas`` is trusted when positive, else the updated Ready pods
are counted; with ``unorderedUpdate`` the pods already at the target during a rollback in batches
are left out of the partition; both API versions are held (upstream's ``madvancedstatefulset.kb.io``).
"""

from __future__ import annotations

from typing import Any

from kruise.core.kube.resources import STATEFULSETS
from kruise.core.webhook.configuration import ClientTarget, build_configuration
from kruise.rollouts.manager.options import ManagerOptions
from kruise.rollouts.manager.webhooks import webhook_specs
from kruise.rollouts.release.constants import WORKLOAD_TYPE_LABEL
from kruise.rollouts.workloads import advancedstatefulset, statefulset
from kruise.rollouts.workloads.label import label_patch
from kruise.rollouts.workloads.partitionkind import partition_resume
from kruise.rollouts.workloads.registry import find, kind_for

JSON = dict[str, Any]
W = advancedstatefulset.PARTITION


def asts(version: str = "v1beta1", *, rolling: JSON | None = None, **status: Any) -> JSON:
    return {
        "apiVersion": f"apps.kruise.io/{version}",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "shop", "uid": "asts-uid", "generation": 2},
        "spec": {
            "replicas": 10,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": dict(rolling or {"partition": 0})},
            "template": {"spec": {"containers": [{"name": "db", "image": "db:1"}]}},
        },
        "status": {
            "observedGeneration": 2,
            "replicas": 10,
            "updatedReplicas": 10,
            "updatedReadyReplicas": 10,
            "currentRevision": "db-6c9f7b8d4",
            "updateRevision": "db-6c9f7b8d4",
            **status,
        },
    }


def pod(name: str, revision: str) -> JSON:
    return {
        "metadata": {"name": name, "labels": {"controller-revision-hash": revision}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


def test_both_api_versions_are_served_and_labelled_statefulset() -> None:
    for version in ("v1alpha1", "v1beta1"):
        ref = {"apiVersion": f"apps.kruise.io/{version}", "kind": "StatefulSet"}
        assert kind_for(ref) is advancedstatefulset.ADVANCED_STATEFULSET
    assert kind_for({"apiVersion": "apps/v1", "kind": "StatefulSet"}) is statefulset.STATEFULSET
    ro = {
        "metadata": {"name": "db", "namespace": "shop"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet", "name": "db"},
            "strategy": {"canary": {"steps": [{"replicas": "20%"}]}},
        },
    }

    class View:
        def get(self, resource: Any, key: str) -> JSON | None:
            return asts() if (resource, key) == (STATEFULSETS, "shop/db") else None

        def by_index(self, resource: Any, index: str, value: str) -> list[JSON]:
            return []

    found = find(ro, View())
    assert found is not None and found.kind is advancedstatefulset.ADVANCED_STATEFULSET
    info = found.info(ro)
    assert (info.style, info.revision_label_key, info.rollback_in_batches) == (
        "Partition",
        "controller-revision-hash",
        True,
    )
    assert label_patch(found.workload) == {"metadata": {"labels": {WORKLOAD_TYPE_LABEL: "statefulset"}}}


def test_updated_ready_replicas_come_from_the_status_else_from_the_pods() -> None:
    releasing = asts(updatedReplicas=2, updatedReadyReplicas=1, updateRevision="db-7d8e9f0a1")
    pods = [pod("db-9", "db-7d8e9f0a1"), pod("db-8", "db-7d8e9f0a1")]
    assert W.state(releasing, pods).updated_ready == 1, "the status is trusted when positive"
    releasing["status"]["updatedReadyReplicas"] = 0
    assert W.state(releasing, pods).updated_ready == 2, "not positive: the Ready updated pods"


def test_the_kinds_pause_is_lifted_with_the_hold() -> None:
    paused = asts(rolling={"partition": 32767, "paused": True})
    assert W.paused(paused)
    assert partition_resume(W, paused) == {
        "spec": {"updateStrategy": {"rollingUpdate": {"partition": None, "paused": False}}}
    }
    assert partition_resume(W, asts()) is None


def test_unordered_rollback_in_batches_leaves_the_pods_at_the_target_out_of_the_partition() -> None:
    """10 pods, 4 already at the target: a 50% batch releases 3 of the 6 others. Ordered, the
    partition keeps the 4 (highest ordinals) inside it: 10 - 3 = 7; unordered it counts the pods
    kept at the stable revision: 6 - 3 = 3."""
    ordered, unordered = asts(), asts(rolling={"partition": 0, "unorderedUpdate": {}})
    assert W.ordered(ordered) and not W.ordered(unordered)
    assert W.partition_for(ordered, "50%", 10, 4) == 7
    assert W.partition_for(unordered, "50%", 10, 4) == 3
    assert W.partition_for(unordered, "50%", 10, 0) == W.partition_for(ordered, "50%", 10, 0) == 5


def test_the_hold_is_registered_for_both_versions_of_labelled_statefulsets() -> None:
    opts = ManagerOptions(leader_election_namespace="kruise-ops")
    target = ClientTarget(url_base="https://127.0.0.1:9876")
    config = build_configuration(webhook_specs(opts), mutating=True, target=target, ca_bundle="")
    hook = next(h for h in config["webhooks"] if h["name"] == "madvancedstatefulset-rollout.kruise.io")
    assert hook["clientConfig"]["url"].endswith("/mutate-rollouts-kruise-io-workload-advancedstatefulset")
    assert [(r["apiGroups"], r["apiVersions"], r["resources"], r["operations"]) for r in hook["rules"]] == [
        (["apps.kruise.io"], ["v1alpha1"], ["statefulsets"], ["UPDATE"]),
        (["apps.kruise.io"], ["v1beta1"], ["statefulsets"], ["UPDATE"]),
    ]
    assert hook["objectSelector"] == {
        "matchExpressions": [{"key": WORKLOAD_TYPE_LABEL, "operator": "Exists"}]
    }
