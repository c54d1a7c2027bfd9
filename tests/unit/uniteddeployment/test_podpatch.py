"""A subset's patch as a strategic merge patch of the pod template."""

from __future__ import annotations

from typing import Any

from kruise.workloads.uniteddeployment.podpatch import patch_pod_template

TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "web"}, "annotations": {"keep": "1", "drop": "2"}},
    "spec": {
        "containers": [
            {
                "name": "web",
                "image": "nginx:1",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "resources": {"limits": {"cpu": "1"}},
            },
            {"name": "sidecar", "image": "proxy:1"},
        ],
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "volumes": [{"name": "data", "emptyDir": {}}],
    },
}


def test_upstreams_annotation_patch() -> None:
    patched = patch_pod_template(TEMPLATE, {"metadata": {"annotations": {"patched-key": "patched-value"}}})
    assert patched["metadata"]["annotations"] == {"keep": "1", "drop": "2", "patched-key": "patched-value"}
    assert patched["spec"] == TEMPLATE["spec"]


def test_containers_merge_by_name_and_env_by_name() -> None:
    patch = {
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "resources": {"limits": {"memory": "1Gi"}},
                    "env": [{"name": "B", "value": "9"}],
                },
                {"name": "extra", "image": "tool:1"},
            ]
        }
    }
    patched = patch_pod_template(TEMPLATE, patch)
    web, sidecar, extra = patched["spec"]["containers"]
    assert web["image"] == "nginx:1"
    assert web["resources"] == {"limits": {"cpu": "1", "memory": "1Gi"}}
    assert web["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "9"}]
    assert sidecar == {"name": "sidecar", "image": "proxy:1"}
    assert extra == {"name": "extra", "image": "tool:1"}
    assert TEMPLATE["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}}, "input untouched"


def test_directives_nulls_and_plain_lists() -> None:
    patch = {
        "metadata": {"annotations": {"drop": None}},
        "spec": {
            "containers": [{"name": "sidecar", "$patch": "delete"}],
            "tolerations": [{"key": "b", "operator": "Exists"}],
            "volumes": [{"name": "cache", "emptyDir": {}}, {"$patch": "replace"}],
        },
    }
    patched = patch_pod_template(TEMPLATE, patch)
    assert patched["metadata"]["annotations"] == {"keep": "1"}
    assert [c["name"] for c in patched["spec"]["containers"]] == ["web"]
    assert patched["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}], "no merge key: replaced"
    assert patched["spec"]["volumes"] == [{"name": "cache", "emptyDir": {}}], "$patch: replace"
    replaced = patch_pod_template(TEMPLATE, {"metadata": {"labels": {"$patch": "replace", "only": "this"}}})
    assert replaced["metadata"]["labels"] == {"only": "this"}
