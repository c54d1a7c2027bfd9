from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from cloneset_builders import NEW, NOW, OLD, pod, template

from kruise.workloads.cloneset.podstate import revision_labels
from kruise.workloads.inplace import (
    GRACE_KEY,
    STATE_KEY,
    STATE_KEY_OLD,
    InPlaceUpdateSpec,
    InPlaceUpdateState,
    calculate_in_place_update_spec,
    check_in_place_update_completed,
    parse_state,
)
from kruise.workloads.inplace.apply import (
    RefreshKind,
    in_place_update_pod,
    pod_patch,
    refresh_in_place_update,
    start_in_place_update_condition,
)


def two_containers(main: str = "nginx:1", side: str = "envoy:1") -> dict[str, Any]:
    tmpl = template(main)
    tmpl["spec"]["containers"].append({"name": "side", "image": side})
    return tmpl


def env_from_label(tmpl: dict[str, Any], key: str) -> dict[str, Any]:
    tmpl["spec"]["containers"][0]["env"] = [
        {"name": "VERSION", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{key}']"}}}
    ]
    return tmpl


def changed(**spec_changes: Any) -> dict[str, Any]:
    tmpl = template("nginx:1")
    tmpl["spec"].update(spec_changes)
    return tmpl


NOT_IN_PLACE = [
    pytest.param(template("nginx:1"), changed(hostNetwork=True), id="a pod spec field change needs recreate"),
    pytest.param(
        template("nginx:1"),
        {
            **template("nginx:1"),
            "spec": {"containers": [{"name": "main", "image": "nginx:1", "env": [{"name": "A"}]}]},
        },
        id="an env change needs recreate",
    ),
    pytest.param(template("nginx:1"), two_containers(), id="adding a container needs recreate"),
    pytest.param(
        {"metadata": {}, "spec": {"containers": [{"name": "main"}]}},
        template("nginx:2"),
        id="an image added rather than replaced needs recreate",
    ),
    pytest.param(
        changed(initContainers=[{"name": "init", "image": "busybox:1"}]),
        changed(initContainers=[{"name": "init", "image": "busybox:2"}]),
        id="init container images are not updated in place",
    ),
    pytest.param(
        {"spec": template("nginx:1")["spec"]},
        template("nginx:1"),
        id="adding the whole metadata object needs recreate",
    ),
    pytest.param(
        {
            **template("nginx:1"),
            "spec": {"containers": [{"name": "main", "image": "nginx:1", "resources": {}}]},
        },
        {
            **template("nginx:1"),
            "spec": {
                "containers": [{"name": "main", "image": "nginx:1", "resources": {"limits": {"cpu": "1"}}}]
            },
        },
        id="resources need recreate without the vertical-scaling gate",
    ),
]


@pytest.mark.parametrize(("old", "new"), NOT_IN_PLACE)
def test_not_in_place(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert calculate_in_place_update_spec(old, new) is None


def test_image_change_is_in_place_by_container_name() -> None:
    spec = calculate_in_place_update_spec(two_containers(), two_containers(side="envoy:2"), revision=NEW)
    assert spec == InPlaceUpdateSpec(revision=NEW, container_images={"side": "envoy:2"})


def test_identical_templates_are_trivially_in_place() -> None:
    assert calculate_in_place_update_spec(template(), template()) == InPlaceUpdateSpec()


def test_revision_patch_marker_is_ignored() -> None:
    old, new = template("nginx:1"), template("nginx:2")
    old["$patch"] = new["$patch"] = "replace"
    assert calculate_in_place_update_spec(old, new) == InPlaceUpdateSpec(container_images={"main": "nginx:2"})


def test_metadata_changes_become_a_merge_patch() -> None:
    old = template("nginx:1", labels={"gone": "x", "keep": "1"})
    new = template("nginx:2", labels={"keep": "2", "added": "y"})
    new["metadata"]["annotations"] = {"note": "hi"}
    spec = calculate_in_place_update_spec(old, new)
    assert spec is not None
    assert spec.container_images == {"main": "nginx:2"}
    assert spec.metadata_patch == {
        "metadata": {"labels": {"keep": "2", "added": "y", "gone": None}, "annotations": {"note": "hi"}}
    }
    assert not spec.update_env_from_metadata


def test_env_from_metadata_moves_the_label_into_the_container_batch() -> None:
    old = env_from_label(template("nginx:1", labels={"version": "v1", "other": "a"}), "version")
    new = env_from_label(template("nginx:1", labels={"version": "v2", "other": "b"}), "version")
    spec = calculate_in_place_update_spec(old, new)
    assert spec is not None
    assert spec.container_ref_metadata == {"main": {"labels": {"version": "v2"}}}
    assert spec.update_env_from_metadata
    assert spec.metadata_patch == {"metadata": {"labels": {"other": "b"}}}
    without_gate = calculate_in_place_update_spec(old, new, env_from_metadata=False)
    assert without_gate is not None and without_gate.metadata_patch == {
        "metadata": {"labels": {"version": "v2", "other": "b"}}
    }


def state_json(**fields: Any) -> str:
    return InPlaceUpdateState(**fields).to_json()


def updated_pod(
    image: str, status_image: str, status_image_id: str, last_id: str = "id-old", **kw: Any
) -> dict[str, Any]:
    subject = pod(NEW, image=image)
    subject["status"]["containerStatuses"][0].update(image=status_image, imageID=status_image_id)
    subject["metadata"]["annotations"][STATE_KEY] = state_json(
        revision=NEW, update_timestamp=NOW, last_container_statuses={"main": last_id}, **kw
    )
    return subject


COMPLETION = [
    pytest.param(pod(), True, id="a pod never updated in place is complete"),
    pytest.param(updated_pod("nginx:2", "nginx:2", "id-new"), True, id="a new imageID means done"),
    pytest.param(
        updated_pod("nginx:2", "nginx:1", "id-old"), False, id="same imageID and old image is not done"
    ),
    pytest.param(
        updated_pod("nginx:2", "nginx:2", "id-old"), True, id="same imageID but new image name is a retag"
    ),
    pytest.param(
        updated_pod("nginx", "nginx:latest", "id-old"), True, id="untagged spec image compares as latest"
    ),
    pytest.param(
        updated_pod("nginx:2", "nginx:2", "id-new", next_container_images={"side": "envoy:2"}),
        False,
        id="a pending next batch is not done",
    ),
    pytest.param(
        updated_pod("nginx:2", "nginx:2", "id-new", update_env_from_metadata=True),
        False,
        id="env from metadata waits for the runtime containers meta",
    ),
]


@pytest.mark.parametrize(("subject", "done"), COMPLETION)
def test_check_in_place_update_completed(subject: dict[str, Any], done: bool) -> None:
    assert check_in_place_update_completed(subject) is done


def test_completion_needs_status_for_every_recorded_container() -> None:
    subject = updated_pod("nginx:2", "nginx:2", "id-new")
    subject["status"]["containerStatuses"] = []
    assert not check_in_place_update_completed(subject)


def test_completion_waits_for_grace_and_rejects_malformed_state() -> None:
    grace = updated_pod("nginx:2", "nginx:2", "id-new")
    grace["metadata"]["annotations"][GRACE_KEY] = "{}"
    assert not check_in_place_update_completed(grace)
    broken = pod()
    broken["metadata"]["annotations"][STATE_KEY] = "{not json"
    assert not check_in_place_update_completed(broken)


def test_completion_delegates_hash_checks() -> None:
    subject = updated_pod("nginx:2", "nginx:1", "id-old", update_env_from_metadata=True)
    subject["metadata"]["annotations"]["apps.kruise.io/runtime-containers-meta"] = json.dumps(
        {"containers": []}
    )
    assert check_in_place_update_completed(subject, hashes_consistent=lambda _p, _m, _k: True)
    assert not check_in_place_update_completed(
        subject, hashes_consistent=lambda _p, _m, kind: kind == "PlainHash"
    )


def test_state_round_trips_and_reads_the_legacy_key() -> None:
    state = InPlaceUpdateState(
        revision=NEW,
        update_timestamp=NOW,
        last_container_statuses={"main": "id"},
        update_images=True,
        containers_required_ready=["main"],
        container_batches_record=[(NOW, ["main"])],
    )
    body = json.loads(state.to_json())
    assert body == {
        "revision": NEW,
        "updateTimestamp": "2024-05-01T12:00:00Z",
        "lastContainerStatuses": {"main": {"imageID": "id"}},
        "updateImages": True,
        "preCheckBeforeNext": {"containersRequiredReady": ["main"]},
        "containerBatchesRecord": [{"timestamp": "2024-05-01T12:00:00Z", "containers": ["main"]}],
    }
    legacy = pod()
    legacy["metadata"]["annotations"][STATE_KEY_OLD] = state.to_json()
    assert parse_state(legacy) == state


def test_update_spec_round_trips_through_the_grace_annotation() -> None:
    spec = InPlaceUpdateSpec(
        revision=NEW,
        container_images={"main": "nginx:2"},
        metadata_patch={"metadata": {"labels": {"a": "b"}}},
        grace_seconds=30,
    )
    assert InPlaceUpdateSpec.from_json(spec.to_json()) == spec


def test_in_place_update_pod_patches_images_revision_and_state() -> None:
    before = pod(OLD, image="nginx:1")
    spec = InPlaceUpdateSpec(
        revision=NEW,
        container_images={"main": "nginx:2"},
        metadata_patch={"metadata": {"labels": {"v": "2"}}},
    )
    after = in_place_update_pod(before, spec, NOW, revision_labels=revision_labels(spec.revision))
    assert before["spec"]["containers"][0]["image"] == "nginx:1"  # input untouched
    assert after["spec"]["containers"][0]["image"] == "nginx:2"
    labels = after["metadata"]["labels"]
    assert (labels["controller-revision-hash"], labels["pod-template-hash"]) == (NEW, "newhash")
    assert labels["lifecycle.apps.kruise.io/state"] == "Updating"
    assert labels["v"] == "2"
    state = parse_state(after)
    assert state is not None
    assert state.last_container_statuses == {"main": "docker-pullable://nginx:1@sha256:aaa"}
    assert state.update_images and state.container_batches_record == [(NOW, ["main"])]
    assert GRACE_KEY not in after["metadata"]["annotations"]


def test_grace_period_defers_the_image_patch() -> None:
    spec = InPlaceUpdateSpec(revision=NEW, container_images={"main": "nginx:2"}, grace_seconds=30)
    after = in_place_update_pod(
        pod(OLD, image="nginx:1"), spec, NOW, revision_labels=revision_labels(spec.revision)
    )
    assert after["spec"]["containers"][0]["image"] == "nginx:1"
    assert InPlaceUpdateSpec.from_json(after["metadata"]["annotations"][GRACE_KEY]) == spec

    waiting = refresh_in_place_update(after, NOW + timedelta(seconds=10.5))
    assert (waiting.kind, waiting.requeue_after) == (RefreshKind.WAIT_GRACE, timedelta(seconds=20))
    finished = refresh_in_place_update(after, NOW + timedelta(seconds=30))
    assert finished.kind == RefreshKind.FINISH_GRACE and finished.pod is not None
    assert finished.pod["spec"]["containers"][0]["image"] == "nginx:2"
    assert GRACE_KEY not in finished.pod["metadata"]["annotations"]


def test_grace_is_dropped_when_the_revision_moved_on() -> None:
    spec = InPlaceUpdateSpec(revision=NEW, container_images={"main": "nginx:2"}, grace_seconds=30)
    after = in_place_update_pod(pod(OLD), spec, NOW, revision_labels=revision_labels(spec.revision))
    after["metadata"]["labels"]["controller-revision-hash"] = "cs-otherhash"
    decision = refresh_in_place_update(after, NOW)
    assert decision.kind == RefreshKind.DROP_GRACE and decision.pod is not None
    assert GRACE_KEY not in decision.pod["metadata"]["annotations"]


def barrier(container: dict[str, Any], priority: int) -> None:
    container["env"] = [
        {
            "name": "KRUISE_CONTAINER_BARRIER",
            "valueFrom": {"configMapKeyRef": {"name": "x", "key": f"p_{priority}"}},
        }
    ]


def test_container_priorities_update_in_batches() -> None:
    before = pod(OLD, image="nginx:1")
    before["spec"]["containers"].append({"name": "side", "image": "envoy:1"})
    before["status"]["containerStatuses"].append(
        {"name": "side", "image": "envoy:1", "imageID": "envoy-id", "ready": True}
    )
    barrier(before["spec"]["containers"][0], 10)
    barrier(before["spec"]["containers"][1], 5)
    spec = InPlaceUpdateSpec(revision=NEW, container_images={"main": "nginx:2", "side": "envoy:2"})
    first = in_place_update_pod(before, spec, NOW, revision_labels=revision_labels(spec.revision))
    assert [c["image"] for c in first["spec"]["containers"]] == ["nginx:2", "envoy:1"]
    state = parse_state(first)
    assert state is not None and state.next_container_images == {"side": "envoy:2"}
    assert state.containers_required_ready == ["main"]
    assert not check_in_place_update_completed(first)

    # kubelet restarted "main" with the new image and it is ready: the next batch goes
    first["status"]["containerStatuses"][0].update(image="nginx:2", imageID="new-id", ready=True)
    decision = refresh_in_place_update(first, NOW + timedelta(seconds=5))
    assert decision.kind == RefreshKind.NEXT_BATCH and decision.pod is not None
    assert [c["image"] for c in decision.pod["spec"]["containers"]] == ["nginx:2", "envoy:2"]
    final_state = parse_state(decision.pod)
    assert final_state is not None and not final_state.has_next_batch
    assert len(final_state.container_batches_record) == 2


def test_refresh_marks_in_place_update_ready_once_done() -> None:
    subject = pod(NEW, in_place_ready=False)
    subject["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    decision = refresh_in_place_update(subject, NOW)
    assert decision.kind == RefreshKind.MARK_READY
    assert decision.condition == {
        "type": "InPlaceUpdateReady",
        "status": "True",
        "lastTransitionTime": "2024-05-01T12:00:00Z",
    }
    already = pod(NEW, in_place_ready=True)
    already["spec"]["readinessGates"] = [{"conditionType": "InPlaceUpdateReady"}]
    assert refresh_in_place_update(already, NOW).kind == RefreshKind.NONE
    assert refresh_in_place_update(pod(NEW, in_place_ready=False), NOW).kind == RefreshKind.NONE  # no gate


def test_start_condition_marks_the_pod_not_ready() -> None:
    assert start_in_place_update_condition(NOW)["reason"] == "StartInPlaceUpdate"


def test_pod_patch_carries_images_labels_and_a_resource_version_precondition() -> None:
    before = pod(OLD, image="nginx:1", labels={"drop": "me"})
    before["metadata"]["resourceVersion"] = "42"
    before["metadata"]["labels"]["keep"] = "1"
    spec = InPlaceUpdateSpec(
        revision=NEW,
        container_images={"main": "nginx:2"},
        metadata_patch={"metadata": {"labels": {"drop": None}}},
    )
    after = in_place_update_pod(before, spec, NOW, revision_labels=revision_labels(spec.revision))
    patch = pod_patch(before, after)
    assert patch["spec"] == {"containers": [{"name": "main", "image": "nginx:2"}]}
    assert patch["metadata"]["resourceVersion"] == "42"
    labels = patch["metadata"]["labels"]
    assert labels["drop"] is None and "keep" not in labels
    assert labels["controller-revision-hash"] == NEW
    assert STATE_KEY in patch["metadata"]["annotations"]
    assert pod_patch(before, before) == {}
