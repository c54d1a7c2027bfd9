"""Native StatefulSets through the workload port: what is StatefulSet-specific (the generic
partition behaviour is ``test_partition_port.py``'s contract).

Upstream facts (``KR:pkg/webhook/workload/mutating/workload_update_handler.go``
``handleStatefulSetLikeWorkload``, ``pkg/util/controller_finder.go`` ``getStatefulSetLikeWorkload``,
``control/partitionstyle/statefulset/control.go``): the hold needs replicas > 0 and a
``RollingUpdate`` strategy, a template (or rollout-id) change and a canary Rollout, and writes
``rollingUpdate.partition: 32767``; revisions are the ControllerRevision names of
``status.currentRevision``/``updateRevision``, selected by ``controller-revision-hash``; rolling
back is ``updateRevision == currentRevision`` with not every pod updated.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.core.kube.resources import NATIVE_STATEFULSETS
from kruise.core.webhook.configuration import ClientTarget, build_configuration
from kruise.rollouts.manager.options import ManagerOptions
from kruise.rollouts.manager.webhooks import webhook_specs
from kruise.rollouts.release.constants import IN_PROGRESSING_ANNOTATION, WORKLOAD_TYPE_LABEL
from kruise.rollouts.workloads import statefulset
from kruise.rollouts.workloads.label import label_patch
from kruise.rollouts.workloads.partitionkind import partition_info
from kruise.rollouts.workloads.port import Observation
from kruise.rollouts.workloads.registry import find, kind_for, release_style

JSON = dict[str, Any]


def sts(image: str = "web:1", **status: Any) -> JSON:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "shop", "uid": "sts-uid", "generation": 2},
        "spec": {
            "replicas": 5,
            "serviceName": "web",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "template": {"spec": {"containers": [{"name": "web", "image": image}]}},
        },
        "status": {
            "observedGeneration": 2,
            "replicas": 5,
            "updatedReplicas": 5,
            "currentRevision": "web-6c9f7b8d4",
            "updateRevision": "web-6c9f7b8d4",
            **status,
        },
    }


def rollout(**strategy: Any) -> JSON:
    return {
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "workloadRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"},
            "strategy": strategy or {"canary": {"steps": [{"replicas": "20%"}]}},
        },
    }


def test_a_template_change_is_held_at_partition_max_int16() -> None:
    held = statefulset.STATEFULSET.hold.decide(sts("web:2"), sts(), [rollout()], [])
    assert held is not None
    assert held["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 32767
    assert held["metadata"]["annotations"][IN_PROGRESSING_ANNOTATION] == '{"rolloutName":"web"}'


@pytest.mark.parametrize(
    ("new", "rollouts"),
    [
        pytest.param(sts(), [rollout()], id="template unchanged"),
        pytest.param(
            {**sts("web:2"), "spec": {**sts("web:2")["spec"], "replicas": 0}}, [rollout()], id="no replicas"
        ),
        pytest.param(
            {**sts("web:2"), "spec": {**sts("web:2")["spec"], "updateStrategy": {"type": "OnDelete"}}},
            [rollout()],
            id="OnDelete",
        ),
        pytest.param(sts("web:2"), [rollout(blueGreen={"steps": [{"replicas": "50%"}]})], id="blue-green"),
        pytest.param(sts("web:2"), [], id="no rollout"),
    ],
)
def test_updates_that_cannot_start_a_release_pass_unchanged(new: JSON, rollouts: list[JSON]) -> None:
    assert statefulset.STATEFULSET.hold.decide(new, sts(), rollouts, []) is None


def test_a_multi_version_statefulset_is_held_even_with_traffic_routing() -> None:
    """Unlike a CloneSet, upstream checks no single version for StatefulSets."""
    ro = rollout(canary={"steps": [{"replicas": "20%"}], "trafficRoutings": [{"service": "web"}]})
    old = sts(updatedReplicas=2, updateRevision="web-7d8e9f0a1")
    assert statefulset.STATEFULSET.hold.decide(sts("web:2"), old, [ro], []) is not None


def test_revisions_are_controller_revision_names_selected_by_controller_revision_hash() -> None:
    releasing = sts(updatedReplicas=1, updateRevision="web-7d8e9f0a1")
    releasing["metadata"]["annotations"] = {IN_PROGRESSING_ANNOTATION: "{}"}
    info = partition_info(statefulset.PARTITION, NATIVE_STATEFULSETS, Observation(releasing))
    assert (info.stable_revision, info.canary_revision, info.pod_template_hash) == (
        "web-6c9f7b8d4",
        "web-7d8e9f0a1",
        "web-7d8e9f0a1",
    )
    assert info.revision_label_key == "controller-revision-hash"
    assert not info.in_rollback
    rolled_back = copy.deepcopy(releasing)
    rolled_back["status"]["updateRevision"] = "web-6c9f7b8d4"
    assert partition_info(statefulset.PARTITION, NATIVE_STATEFULSETS, Observation(rolled_back)).in_rollback


def test_updated_ready_pods_are_counted_from_the_pods() -> None:
    """A native StatefulSet's status has no updatedReadyReplicas."""

    def pod(name: str, revision: str, ready: bool) -> JSON:
        return {
            "metadata": {"name": name, "labels": {"controller-revision-hash": revision}},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
        }

    pods = [
        pod("web-4", "web-7d8e9f0a1", True),
        pod("web-3", "web-7d8e9f0a1", False),
        pod("web-2", "web-6c9f7b8d4", True),
    ]
    state = statefulset.PARTITION.state(sts(updateRevision="web-7d8e9f0a1", updatedReplicas=2), pods)
    assert (state.updated, state.updated_ready) == (2, 1)


def test_the_registry_serves_native_statefulsets_in_partition_style_only() -> None:
    assert kind_for({"apiVersion": "apps/v1", "kind": "StatefulSet"}) is statefulset.STATEFULSET
    br = {
        "spec": {"workloadRef": rollout()["spec"]["workloadRef"], "releasePlan": {"rollingStyle": "Canary"}}
    }
    served = release_style(br)
    assert served is not None and served[1].style == "Partition"  # no extra workload: partition

    class View:
        def get(self, resource: Any, key: str) -> JSON | None:
            return sts() if (resource, key) == (NATIVE_STATEFULSETS, "shop/web") else None

        def by_index(self, resource: Any, index: str, value: str) -> list[JSON]:
            return []

    found = find(rollout(), View())
    assert found is not None and found.kind is statefulset.STATEFULSET
    assert found.info(rollout()).style == "Partition" and found.info(rollout()).rollback_in_batches
    assert label_patch(found.workload) == {"metadata": {"labels": {WORKLOAD_TYPE_LABEL: "statefulset"}}}


def test_the_statefulset_hold_is_registered_for_labelled_statefulsets_only() -> None:
    opts = ManagerOptions(leader_election_namespace="kruise-ops")
    target = ClientTarget(url_base="https://127.0.0.1:9876")
    config = build_configuration(webhook_specs(opts), mutating=True, target=target, ca_bundle="")
    hook = next(h for h in config["webhooks"] if h["name"] == "mstatefulset-rollout.kruise.io")
    assert hook["clientConfig"]["url"].endswith("/mutate-apps-v1-statefulset")
    assert hook["rules"] == [
        {
            "apiGroups": ["apps"],
            "apiVersions": ["v1"],
            "resources": ["statefulsets"],
            "operations": ["UPDATE"],
        }
    ]
    assert hook["objectSelector"] == {
        "matchExpressions": [{"key": WORKLOAD_TYPE_LABEL, "operator": "Exists"}]
    }
    assert hook["failurePolicy"] == "Fail"
