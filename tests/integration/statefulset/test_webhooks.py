"""Advanced StatefulSet admission and conversion through the real API server.

Bad input is refused with upstream's message (``pkg/webhook/statefulset``) and changes nothing;
defaults are ``SetDefaultsStatefulSet``'s; v1alpha1 and v1beta1 are the same object through the
manager's conversion webhook, v1beta1-only fields invisible at v1alpha1.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kruise.core.errors import ApiError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import STATEFULSETS, Resource
from tests.integration.statefulset.helpers import new_statefulset

pytestmark = pytest.mark.usefixtures("manager")

ALPHA = Resource("apps.kruise.io", "v1alpha1", "statefulsets", "StatefulSet")
JSON = dict[str, Any]


async def test_defaults_are_applied_on_create(kube: KubeClient, namespace: str) -> None:
    created = await kube.create(STATEFULSETS, new_statefulset("web", 2), namespace)
    spec = created["spec"]
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "partition": 0,
            "maxUnavailable": 1,
            "podUpdatePolicy": "ReCreate",
            "minReadySeconds": 0,
        },
    }
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["template"]["spec"]["restartPolicy"] == "Always"


def _edit(path: str, value: Any) -> Callable[[JSON], None]:
    def apply(body: JSON) -> None:
        target = body
        keys = path.split(".")
        for key in keys[:-1]:
            target = target.setdefault(key, {})
        target[keys[-1]] = value

    return apply


IN_PLACE = {"podUpdatePolicy": "InPlaceIfPossible"}
REFUSED = [
    pytest.param(
        _edit("spec.podManagementPolicy", "Burst"),
        "spec.podManagementPolicy: Invalid value: \"Burst\": must be 'OrderedReady' or 'Parallel'",
        id="podManagementPolicy",
    ),
    pytest.param(
        _edit("spec.updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}),
        "can only work with Parallel PodManagementPolicyType",
        id="maxUnavailable above 1 needs Parallel",
    ),
    pytest.param(
        _edit("spec.updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"unorderedUpdate": {}}}),
        "spec.updateStrategy.rollingUpdate.unorderedUpdate: Required value: "
        "unorderedUpdate can only work with Parallel PodManagementPolicyType",
        id="unorderedUpdate needs Parallel",
    ),
    pytest.param(
        _edit("spec.updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"minReadySeconds": 301}}),
        "spec.updateStrategy.rollingUpdate.minReadySeconds: Invalid value: 301: "
        "must be no more than 300 seconds",
        id="minReadySeconds",
    ),
    pytest.param(
        _edit("spec.reserveOrdinals", ["2-x"]),
        "0 th reserve ordinal is not a valid range: 2-x",
        id="malformed reserve ordinal",
    ),
    pytest.param(
        _edit("spec.updateStrategy", {"type": "RollingUpdate", "rollingUpdate": IN_PLACE}),
        "spec.template.spec.readinessGates: Invalid value: []v1.PodReadinessGate(nil): "
        "must contains InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible",
        id="missing readiness gate",
    ),
    pytest.param(
        _edit("spec.selector", {"matchLabels": {"app": "other"}}),
        "`selector` does not match template `labels`",
        id="mismatched selector",
    ),
    pytest.param(
        _edit("spec.template.spec.activeDeadlineSeconds", 10),
        "spec.template.spec.activeDeadlineSeconds: Forbidden: "
        "activeDeadlineSeconds in StatefulSet is not Supported",
        id="activeDeadlineSeconds",
    ),
    pytest.param(
        _edit("spec.template.spec.containers", [{"name": "nginx", "image": " registry.example.com/web:1"}]),
        "spec.template.spec.containers[0].image: Invalid value",
        id="a pod no node could run (the API server's dry run)",
    ),
]


@pytest.mark.parametrize(("mutate", "message"), REFUSED)
async def test_invalid_create_is_refused_with_upstreams_message(
    kube: KubeClient, namespace: str, mutate: Callable[[JSON], None], message: str
) -> None:
    body = new_statefulset("bad", 1)
    mutate(body)
    with pytest.raises(ApiError) as err:
        await kube.create(STATEFULSETS, body, namespace)
    assert message in str(err.value)
    assert await kube.get_or_none(STATEFULSETS, "bad", namespace) is None


async def test_invalid_updates_are_refused_and_change_nothing(kube: KubeClient, namespace: str) -> None:
    body = new_statefulset("web", 1, parallel=True, in_place=True)
    body["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] = "InPlaceOnly"
    created = await kube.create(STATEFULSETS, body, namespace)
    for patch, message in (
        ({"spec": {"serviceName": "other"}}, "updates to statefulset spec for fields other than 'replicas'"),
        (
            {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "nginx", "image": "x:1", "env": [{"name": "A"}]}]}
                    }
                }
            },
            "invalid template modified with InPlaceOnly strategy: add /containers/0/env, "
            "currently only image update is allowed for InPlaceOnly",
        ),
        (
            {"spec": {"updateStrategy": {"rollingUpdate": {"partition": -1}}}},
            "must be greater than or equal to 0",
        ),
    ):
        with pytest.raises(ApiError) as err:
            await kube.patch(STATEFULSETS, "web", copy.deepcopy(patch), namespace, patch_type="merge")
        assert message in str(err.value)
        now = await kube.get(STATEFULSETS, "web", namespace)
        assert (
            now["spec"] == created["spec"]
            and now["metadata"]["generation"] == created["metadata"]["generation"]
        )
    image = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "x:2"}]
    await kube.patch(STATEFULSETS, "web", image, namespace, patch_type="json")  # an image change is fine


async def test_v1alpha1_and_v1beta1_are_one_object(kube: KubeClient, namespace: str) -> None:
    alpha = new_statefulset("both", 1)
    alpha["apiVersion"] = "apps.kruise.io/v1alpha1"
    await kube.create(ALPHA, alpha, namespace)
    beta = await kube.get(STATEFULSETS, "both", namespace)
    assert beta["apiVersion"] == "apps.kruise.io/v1beta1"
    # v1beta1-only defaults are not given to an object written as v1alpha1 (upstream converts back)
    assert "persistentVolumeClaimRetentionPolicy" not in beta["spec"]
    await kube.patch(STATEFULSETS, "both", {"spec": {"reserveOrdinals": [0]}}, namespace, patch_type="merge")
    seen = await kube.get(ALPHA, "both", namespace)
    assert seen["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert "reserveOrdinals" not in seen["spec"]
    assert seen["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 0
    assert (await kube.get(STATEFULSETS, "both", namespace))["spec"]["reserveOrdinals"] == [0]
