"""Advanced DaemonSet admission through the real API server: upstream's defaults, and invalid
manifests refused with upstream's messages (``pkg/webhook/daemonset``), changing nothing."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DAEMONSETS
from tests.support.corpus import UPSTREAM_EXAMPLES

pytestmark = pytest.mark.usefixtures("manager")
GUESTBOOK = UPSTREAM_EXAMPLES / "kruise" / "DaemonSet" / "001-guestbook-ds.yaml"


def guestbook() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(GUESTBOOK.read_text())
    # never scheduled anywhere: these tests are about admission only
    doc["spec"]["template"]["spec"]["nodeSelector"] = {"kruise-test/none": "none"}
    return doc


async def test_defaults_are_applied_on_create(kube: KubeClient, namespace: str) -> None:
    body = guestbook()
    del body["spec"]["updateStrategy"]
    created = await kube.create(DAEMONSETS, body, namespace)
    spec = created["spec"]
    assert spec["burstReplicas"] == 250 and spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"rollingUpdateType": "Standard", "maxUnavailable": 1, "maxSurge": 0},
    }
    assert "restartPolicy" not in spec["template"]["spec"], "the template is stored as written"


async def test_surging_is_rewritten_as_standard_with_surge(kube: KubeClient, namespace: str) -> None:
    body = guestbook()
    body["spec"]["updateStrategy"] = {"rollingUpdate": {"rollingUpdateType": "Surging"}}
    created = await kube.create(DAEMONSETS, body, namespace)
    assert created["spec"]["updateStrategy"]["rollingUpdate"] == {
        "rollingUpdateType": "Standard",
        "maxSurge": 1,
        "maxUnavailable": 0,
    }


INVALID = [
    pytest.param(
        {"maxSurge": 1, "maxUnavailable": 1},
        "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "
        'intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
        id="maxSurge with a non-zero maxUnavailable",
    ),
    pytest.param(
        {"maxSurge": 0, "maxUnavailable": 0},
        "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
        id="both zero",
    ),
    pytest.param(
        {"rollingUpdateType": "InPlaceIfPossible", "maxSurge": 1, "maxUnavailable": 0},
        "spec.updateStrategy.rollingUpdate.maxSurge: Required value: must be 0 for InPlaceIfPossible type",
        id="surge with InPlaceIfPossible",
    ),
]


@pytest.mark.parametrize(("rolling", "message"), INVALID)
async def test_invalid_strategies_are_refused(
    kube: KubeClient, namespace: str, rolling: dict[str, Any], message: str
) -> None:
    body = guestbook()
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": rolling}
    with pytest.raises(InvalidError) as refused:
        await kube.create(DAEMONSETS, body, namespace)
    assert message in str(refused.value)
    assert await kube.get_or_none(DAEMONSETS, "guestbook-ds", namespace) is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda b: b["spec"]["template"]["metadata"]["labels"].update(app="other"),
            "`selector` does not match template `labels`",
            id="mismatched selector",
        ),
        pytest.param(
            lambda b: b["spec"].update(selector={}),
            "empty selector is invalid for daemonset",
            id="empty selector",
        ),
        pytest.param(
            lambda b: b["spec"]["template"]["spec"].update(activeDeadlineSeconds=10),
            "spec.template.spec.activeDeadlineSeconds: Forbidden: "
            "activeDeadlineSeconds in DaemonSet is not Supported",
            id="activeDeadlineSeconds",
        ),
        pytest.param(
            lambda b: b["spec"].update(lifecycle={"inPlaceUpdate": {"labelsHandler": {"hold": "true"}}}),
            "spec.lifecycle.inPlaceUpdate: Forbidden: inPlaceUpdate hook has not supported yet",
            id="inPlaceUpdate hook",
        ),
        pytest.param(
            lambda b: b["spec"]["template"]["spec"]["containers"][0].update(image=" openkruise/guestbook:v1"),
            "spec.template.spec.containers[0].image: Invalid value",
            id="a template no pod can be made of (the API server's verdict)",
        ),
    ],
)
async def test_invalid_templates_are_refused(
    kube: KubeClient, namespace: str, change: Any, message: str
) -> None:
    body = guestbook()
    change(body)
    with pytest.raises(InvalidError) as refused:
        await kube.create(DAEMONSETS, body, namespace)
    assert message in str(refused.value)


async def test_an_update_of_an_immutable_field_is_refused_and_changes_nothing(
    kube: KubeClient, namespace: str
) -> None:
    created = await kube.create(DAEMONSETS, guestbook(), namespace)
    change = {
        "spec": {
            "selector": {"matchLabels": {"tier": "web"}},
            "template": {"metadata": {"labels": {"tier": "web"}}},
        }
    }
    with pytest.raises(InvalidError) as refused:
        await kube.patch(DAEMONSETS, "guestbook-ds", change, namespace, patch_type="merge")
    assert (
        "spec: Forbidden: updates to daemonset spec for fields other than 'BurstReplicas', 'template', "
        "'lifecycle',  'updateStrategy', 'minReadySeconds', and 'revisionHistoryLimit' are forbidden"
    ) in str(refused.value)
    stored = await kube.get(DAEMONSETS, "guestbook-ds", namespace)
    assert stored["spec"] == created["spec"]
    assert stored["metadata"]["generation"] == created["metadata"]["generation"]
    partition = {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 3}}}}
    patched = await kube.patch(DAEMONSETS, "guestbook-ds", partition, namespace, patch_type="merge")
    assert patched["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 3
