"""CloneSet admission webhooks through the real API server (issue: CloneSet, item 3).

Invalid input is rejected with upstream's message and nothing changes;
defaults are OpenKruise's ``SetDefaultsCloneSet`` plus Kubernetes pod defaults.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.core.errors import ApiError, InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS
from tests.integration.cloneset.test_cloneset_inplace import web_cloneset

pytestmark = pytest.mark.usefixtures("manager")


async def test_defaults_are_applied_on_create(kube: KubeClient, namespace: str) -> None:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "bare"},
        "spec": {
            "selector": {"matchLabels": {"app": "bare"}},
            "template": {
                "metadata": {"labels": {"app": "bare"}},
                "spec": {"containers": [{"name": "c", "image": "registry.example.com/c:1"}]},
            },
        },
    }
    created = await kube.create(CLONESETS, body, namespace)
    spec = created["spec"]
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"]["type"] == "ReCreate"
    assert spec["updateStrategy"]["partition"] == 0
    assert spec["updateStrategy"]["maxUnavailable"] == "20%"
    assert spec["updateStrategy"]["maxSurge"] == 0
    pod_spec = spec["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always"
    assert pod_spec["dnsPolicy"] == "ClusterFirst"
    assert pod_spec["schedulerName"] == "default-scheduler"
    assert pod_spec["terminationGracePeriodSeconds"] == 30
    container = pod_spec["containers"][0]
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["imagePullPolicy"] == "Always"


def _set(body: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(body)
    target = out
    keys = path.split(".")
    for key in keys[:-1]:
        target = target.setdefault(key, {})
    target[keys[-1]] = value
    return out


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        pytest.param(
            "spec.template.metadata.labels",
            {"app": "other"},
            "`selector` does not match template `labels`",
            id="selector must match template labels",
        ),
        pytest.param(
            "spec.updateStrategy.maxSurge",
            "50%",
            "can not use maxSurge with strategy type InPlaceOnly",
            id="InPlaceOnly forbids maxSurge",
        ),
        pytest.param(
            "spec.updateStrategy.type", "Rolling", "spec.updateStrategy.type", id="unknown strategy type"
        ),
        pytest.param("spec.replicas", -1, "spec.replicas", id="negative replicas"),
        pytest.param(
            "spec.updateStrategy.partition",
            "abc%",
            "failed getValueFromIntOrPercent for partition",
            id="partition format",
        ),
    ],
)
async def test_invalid_cloneset_is_rejected_with_upstream_message(
    kube: KubeClient, namespace: str, path: str, value: Any, message: str
) -> None:
    body = web_cloneset(namespace)
    if "maxSurge" in path:
        body["spec"]["updateStrategy"]["type"] = "InPlaceOnly"
    bad = _set(body, path, value)
    with pytest.raises(ApiError) as err:
        await kube.create(CLONESETS, bad, namespace)
    assert message in err.value.message, err.value.message
    assert await kube.get_or_none(CLONESETS, "web", namespace) is None


async def test_selector_is_immutable_and_nothing_changes(kube: KubeClient, namespace: str) -> None:
    created = await kube.create(CLONESETS, web_cloneset(namespace, replicas=0), namespace)
    patch = {
        "spec": {
            "selector": {"matchLabels": {"app": "web", "tier": "x"}},
            "template": {"metadata": {"labels": {"app": "web", "tier": "x"}}},
        }
    }
    with pytest.raises(InvalidError) as err:
        await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")
    assert "updates to cloneset spec for fields other than" in err.value.message
    after = await kube.get(CLONESETS, "web", namespace)
    assert after["spec"]["selector"] == created["spec"]["selector"]
    assert after["metadata"]["generation"] == created["metadata"]["generation"]


async def test_in_place_only_rejects_env_change_but_accepts_image_change(
    kube: KubeClient, namespace: str
) -> None:
    body = web_cloneset(namespace, replicas=0, partition=0)
    body["spec"]["updateStrategy"]["type"] = "InPlaceOnly"
    await kube.create(CLONESETS, body, namespace)
    container = {
        "name": "web",
        "image": "registry.example.com/shop/web:1.4.0",
        "env": [{"name": "A", "value": "1"}],
    }
    env_patch = {"spec": {"template": {"spec": {"containers": [container]}}}}
    with pytest.raises(InvalidError) as err:  # CRDs take merge patches: the list is replaced whole
        await kube.patch(CLONESETS, "web", env_patch, namespace, patch_type="merge")
    assert "only allowed to update images in spec for InPlaceOnly" in err.value.message
    image_patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "web", "image": "registry.example.com/shop/web:2"}]}
            }
        }
    }
    updated = await kube.patch(CLONESETS, "web", image_patch, namespace, patch_type="merge")
    assert updated["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example.com/shop/web:2"
