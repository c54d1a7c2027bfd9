"""Injection into a pod being created: upstream's sidecarsetMutatingPod, table by table."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.workloads.sidecarset.inject import inject
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    HASH_WITHOUT_IMAGE_ANNOTATION,
    INJECTED_LIST_ANNOTATION,
    WORKING_HOT_UPGRADE_ANNOTATION,
)
from kruise.workloads.sidecarset.podinfo import hash_of, specs_of
from tests.unit.sidecarset.builders import NOW, pod, sidecarset

JSON = dict[str, Any]


def names(obj: JSON, key: str = "containers") -> list[str]:
    return [c["name"] for c in obj["spec"].get(key, [])]


def container(obj: JSON, name: str, key: str = "containers") -> JSON:
    return next(c for c in obj["spec"][key] if c["name"] == name)


def env(c: JSON) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


def test_no_sidecarset_changes_nothing() -> None:
    assert inject(pod(), [], NOW) is None


def test_a_sidecar_goes_before_the_app_with_is_injected_and_the_three_annotations() -> None:
    s = sidecarset()
    out = inject(pod(), [s], NOW)
    assert out is not None
    assert names(out) == ["sidecar", "app"]
    sidecar = container(out, "sidecar")
    assert env(sidecar) == {"IS_INJECTED": "true"}
    assert "podInjectPolicy" not in sidecar and "upgradeStrategy" not in sidecar
    annotations = out["metadata"]["annotations"]
    assert annotations[INJECTED_LIST_ANNOTATION] == "log"
    assert hash_of(out, "log") == s["metadata"]["annotations"][HASH_ANNOTATION]
    spec = specs_of(out)["log"]
    assert spec.sidecar_list == ("sidecar",) and spec.update_timestamp == NOW
    without = json.loads(annotations[HASH_WITHOUT_IMAGE_ANNOTATION])["log"]
    assert without["hash"] == s["metadata"]["annotations"][HASH_WITHOUT_IMAGE_ANNOTATION]


def test_after_app_container_policy_appends() -> None:
    s = sidecarset(containers=[{"name": "tail", "image": "b:1", "podInjectPolicy": "AfterAppContainer"}])
    out = inject(pod(), [s], NOW)
    assert out is not None and names(out) == ["app", "tail"]


def test_a_container_the_pod_already_has_is_replaced_where_it_stands() -> None:
    p = pod(containers=[{"name": "app", "image": "nginx:1"}, {"name": "sidecar", "image": "old:0"}])
    out = inject(p, [sidecarset()], NOW)
    assert out is not None
    assert names(out) == ["app", "sidecar"]
    assert container(out, "sidecar")["image"] == "busybox:1"


def test_init_containers_sorted_by_name_after_the_pods_own() -> None:
    s = sidecarset(
        init_containers=[{"name": "zz-init", "image": "i:1"}, {"name": "aa-init", "image": "i:1"}],
    )
    p = pod(initContainers=[{"name": "own", "image": "o:1"}])
    out = inject(p, [s], NOW)
    assert out is not None
    assert names(out, "initContainers") == ["own", "aa-init", "zz-init"]
    assert specs_of(out)["log"].sidecar_list == ("sidecar",)  # plain init containers are not sidecars


def test_native_sidecar_init_container_is_listed_as_a_sidecar() -> None:
    s = sidecarset(
        containers=[],
        init_containers=[{"name": "proxy", "image": "p:1", "restartPolicy": "Always"}],
        updateStrategy={"type": "NotUpdate"},
    )
    out = inject(pod(), [s], NOW)
    assert out is not None
    assert names(out, "initContainers") == ["proxy"]
    assert specs_of(out)["log"].sidecar_list == ("proxy",)


def test_volumes_and_pull_secrets_merged_without_duplicates() -> None:
    s = sidecarset(
        containers=[
            {"name": "sidecar", "image": "b:1", "volumeMounts": [{"name": "logs", "mountPath": "/logs"}]}
        ],
        volumes=[{"name": "logs", "emptyDir": {}}, {"name": "unused", "emptyDir": {}}],
        imagePullSecrets=[{"name": "reg"}, {"name": "shared"}],
    )
    p = pod(volumes=[{"name": "logs", "hostPath": {"path": "/x"}}], imagePullSecrets=[{"name": "shared"}])
    out = inject(p, [s], NOW)
    assert out is not None
    assert out["spec"]["volumes"] == [{"name": "logs", "hostPath": {"path": "/x"}}]  # the pod's wins
    assert [s["name"] for s in out["spec"]["imagePullSecrets"]] == ["shared", "reg"]


def test_only_mounted_sidecarset_volumes_are_added() -> None:
    s = sidecarset(
        containers=[{"name": "sidecar", "image": "b:1", "volumeMounts": [{"name": "a", "mountPath": "/a"}]}],
        volumes=[{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
    )
    out = inject(pod(), [s], NOW)
    assert out is not None and [v["name"] for v in out["spec"]["volumes"]] == ["a"]


def test_share_volume_policy_mounts_app_volumes_and_copies_subpath_envs() -> None:
    s = sidecarset(
        containers=[
            {
                "name": "sidecar",
                "image": "b:1",
                "shareVolumePolicy": {"type": "enabled"},
                "volumeMounts": [{"name": "own", "mountPath": "/data"}],
            }
        ],
        volumes=[{"name": "own", "emptyDir": {}}],
    )
    app = {
        "name": "app",
        "image": "nginx:1",
        "env": [{"name": "POD_NAME", "value": "x"}, {"name": "OTHER", "value": "y"}],
        "volumeMounts": [
            {"name": "data", "mountPath": "/data"},
            {"name": "logs", "mountPath": "/logs", "subPathExpr": "foo/$(POD_NAME)"},
        ],
    }
    out = inject(pod(containers=[app]), [s], NOW)
    assert out is not None
    sidecar = container(out, "sidecar")
    assert [m["mountPath"] for m in sidecar["volumeMounts"]] == ["/data", "/logs"]  # own /data kept
    assert sidecar["volumeMounts"][0]["name"] == "own"
    assert env(sidecar) == {"IS_INJECTED": "true", "POD_NAME": "x"}


@pytest.mark.parametrize(
    ("transfer", "pod_meta", "expected"),
    [
        pytest.param({"sourceContainerName": "app", "envName": "TZ"}, {}, {"TZ": "UTC"}, id="by-name"),
        pytest.param(
            {"sourceContainerName": "app", "envNames": ["TZ", "LANG", "MISSING"]},
            {},
            {"TZ": "UTC", "LANG": "C"},
            id="several-names",
        ),
        pytest.param(
            {
                "sourceContainerNameFrom": {
                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['main']"}
                },
                "envName": "TZ",
            },
            {"labels": {"app": "web", "main": "app"}},
            {"TZ": "UTC"},
            id="from-label",
        ),
        pytest.param(
            {
                "sourceContainerNameFrom": {
                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations['main']"}
                },
                "envName": "TZ",
            },
            {"annotations": {"main": "app"}},
            {"TZ": "UTC"},
            id="from-annotation",
        ),
        pytest.param(
            {
                "sourceContainerNameFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
                "envName": "TZ",
            },
            {},
            {},
            id="unsubscripted-path-skipped",
        ),
    ],
)
def test_transfer_env(transfer: JSON, pod_meta: JSON, expected: JSON) -> None:
    s = sidecarset(containers=[{"name": "sidecar", "image": "b:1", "transferEnv": [transfer]}])
    app = {
        "name": "app",
        "image": "nginx:1",
        "env": [{"name": "TZ", "value": "UTC"}, {"name": "LANG", "value": "C"}],
    }
    p = pod(containers=[app], labels=pod_meta.get("labels"), annotations=pod_meta.get("annotations"))
    out = inject(p, [s], NOW)
    assert out is not None
    got = env(container(out, "sidecar"))
    got.pop("IS_INJECTED")
    assert got == expected


def test_hot_upgrade_injects_the_working_pair_and_versions() -> None:
    s = sidecarset(
        containers=[
            {
                "name": "envoy",
                "image": "envoy:1",
                "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
            }
        ]
    )
    out = inject(pod(), [s], NOW)
    assert out is not None
    assert names(out) == ["envoy-1", "envoy-2", "app"]
    assert container(out, "envoy-1")["image"] == "envoy:1"
    assert container(out, "envoy-2")["image"] == "empty:1"
    annotations = out["metadata"]["annotations"]
    assert json.loads(annotations[WORKING_HOT_UPGRADE_ANNOTATION]) == {"envoy": "envoy-1"}
    assert annotations["version.sidecarset.kruise.io/envoy-1"] == "1"
    assert annotations["versionalt.sidecarset.kruise.io/envoy-1"] == "0"
    assert annotations["version.sidecarset.kruise.io/envoy-2"] == "0"
    assert annotations["versionalt.sidecarset.kruise.io/envoy-2"] == "1"
    version_env = env(container(out, "envoy-2"))["SIDECARSET_VERSION"]
    assert (
        version_env["fieldRef"]["fieldPath"] == "metadata.annotations['version.sidecarset.kruise.io/envoy-2']"
    )
    assert specs_of(out)["log"].sidecar_list == ("envoy",)


@pytest.mark.parametrize(
    ("policy", "before", "value", "expected"),
    [
        pytest.param("Retain", "mine", "theirs", "mine", id="retain-keeps"),
        pytest.param("Retain", None, "theirs", "theirs", id="retain-fills"),
        pytest.param("Overwrite", "mine", "theirs", "theirs", id="overwrite"),
        pytest.param("MergePatchJson", '{"a":1}', '{"b":2}', '{"a":1,"b":2}', id="merge-json"),
    ],
)
def test_patch_pod_metadata(policy: str, before: str | None, value: str, expected: str) -> None:
    s = sidecarset(patchPodMetadata=[{"annotations": {"k": value}, "patchPolicy": policy}])
    out = inject(pod(annotations={"k": before} if before else None), [s], NOW)
    assert out is not None and out["metadata"]["annotations"]["k"] == expected


def test_two_sidecarsets_share_the_annotations() -> None:
    first = sidecarset("a", containers=[{"name": "one", "image": "x:1"}])
    second = sidecarset("b", containers=[{"name": "two", "image": "y:1"}])
    out = inject(pod(), [first, second], NOW)
    assert out is not None
    assert out["metadata"]["annotations"][INJECTED_LIST_ANNOTATION] == "a,b"
    assert set(specs_of(out)) == {"a", "b"}
    assert names(out) == ["one", "two", "app"]


def test_injection_records_the_latest_revision_name() -> None:
    s = sidecarset()
    s["status"] = {"latestRevision": "log-abc"}
    out = inject(pod(), [s], NOW)
    assert out is not None and specs_of(out)["log"].controller_revision == "log-abc"
