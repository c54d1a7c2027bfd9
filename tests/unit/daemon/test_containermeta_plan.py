"""The daemon's container-meta plan: what it reports, when it reads env, what it restarts."""

from __future__ import annotations

import json
from typing import Any

from kruise.core.containermeta import RUNTIME_CONTAINERS_META_KEY, expected_hash
from kruise.daemon.containermeta.plan import managed, plan_meta, stale
from kruise.daemon.cri.port import ContainerState, CriContainer

SPEC: dict[str, Any] = {
    "name": "main",
    "image": "busybox:1",
    "env": [{"name": "VERSION", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['version']"}}}],
}
OWNER = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web", "controller": True}


def pod(
    version: str = "v1", *, updating: bool = False, meta: dict[str, Any] | None = None, cid: str = "aaa"
) -> Any:
    annotations = {RUNTIME_CONTAINERS_META_KEY: json.dumps(meta)} if meta is not None else {}
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u", "labels": {"version": version},
                     "annotations": annotations, "ownerReferences": [OWNER]},
        "spec": {"containers": [SPEC]},
        "status": {
            "conditions": [{"type": "InPlaceUpdateReady", "status": "False" if updating else "True"}],
            "containerStatuses": [{"name": "main", "containerID": f"containerd://{cid}", "restartCount": 2}],
        },
    }  # fmt: skip


def running(cid: str = "aaa", state: ContainerState = ContainerState.RUNNING) -> dict[str, CriContainer]:
    container = CriContainer(
        id=cid, pod_sandbox_id="s", name="main", attempt=2, state=state, image="busybox:1", image_ref="r",
        created_at=1, annotations={"io.kubernetes.container.hash": "ff"},
    )  # fmt: skip
    return {cid: container}


def hash_of(version: str) -> int:
    return expected_hash(SPEC, {"version": version}, {})


def test_a_new_container_needs_its_env_read_then_is_reported() -> None:
    first = plan_meta(pod(), running(), {})
    assert first.needs_env == ("aaa",) and not first.restart
    second = plan_meta(pod(), running(), {"aaa": hash_of("v1")})
    assert second.needs_env == () and second.changed
    assert second.meta == {
        "containers": [
            {"name": "main", "containerID": "containerd://aaa", "restartCount": 2,
             "hashes": {"plainHash": 255, "extractedEnvFromMetadataHash": hash_of("v1")}},
        ]
    }  # fmt: skip


def test_a_reported_container_is_not_read_again_and_nothing_changes() -> None:
    reported = plan_meta(pod(), running(), {"aaa": hash_of("v1")}).meta
    again = plan_meta(pod(meta=dict(reported)), running(), {})
    assert (again.needs_env, again.restart, again.changed) == ((), (), False)
    assert not stale(pod(meta=dict(reported)))


def test_a_label_change_during_an_in_place_update_restarts_the_container() -> None:
    reported = dict(plan_meta(pod(), running(), {"aaa": hash_of("v1")}).meta)
    assert stale(pod("v2", meta=reported))  # the expected hash moved
    assert plan_meta(pod("v2", meta=reported), running(), {}).restart == ()  # not while Ready
    assert plan_meta(pod("v2", updating=True, meta=reported), running(), {}).restart == ("aaa",)
    exited = running(state=ContainerState.EXITED)
    assert plan_meta(pod("v2", updating=True, meta=reported), exited, {}).restart == ()
    # the image changes too and it still runs the old one: the kubelet restarts it with the new
    # env, the daemon must not as well
    both = pod("v2", updating=True, meta=reported)
    both["status"]["containerStatuses"][0]["imageID"] = "sha256:old"
    state = {"revision": "r2", "lastContainerStatuses": {"main": {"imageID": "sha256:old"}}}
    both["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"] = json.dumps(state)
    assert plan_meta(both, running(), {}).restart == ()
    both["status"]["containerStatuses"][0]["imageID"] = "sha256:new"  # the kubelet's restart is done
    assert plan_meta(both, running(), {}).restart == ("aaa",)


def test_the_new_container_after_the_restart_gets_a_new_entry() -> None:
    reported = dict(plan_meta(pod(), running(), {"aaa": hash_of("v1")}).meta)
    after = plan_meta(
        pod("v2", updating=True, meta=reported, cid="bbb"), running("bbb"), {"bbb": hash_of("v2")}
    )
    assert after.restart == () and after.changed
    assert after.meta["containers"][0]["containerID"] == "containerd://bbb"
    assert after.meta["containers"][0]["hashes"]["extractedEnvFromMetadataHash"] == hash_of("v2")


def test_without_the_gate_no_env_is_read() -> None:
    plan = plan_meta(pod(), running(), {}, env_gate=False)
    assert plan.needs_env == () and "extractedEnvFromMetadataHash" not in plan.meta["containers"][0]["hashes"]


def test_only_pods_of_kruise_workloads_or_sidecarsets_are_managed() -> None:
    assert managed(pod())
    plain = pod()
    plain["metadata"]["ownerReferences"] = [{**OWNER, "apiVersion": "apps/v1", "kind": "ReplicaSet"}]
    assert not managed(plain)
    plain["metadata"]["annotations"]["kruise.io/sidecarset-hash"] = "{}"
    assert managed(plain)
