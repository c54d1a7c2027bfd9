"""The SidecarSet validating webhook through the real API server: upstream's messages
(Appendix B), nothing stored when refused; Kubernetes' own verdict on the containers."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SIDECARSETS
from tests.integration.sidecarset.helpers import (
    base_sidecarset,
    create_sidecarset,
    sidecarset_name,
    update_sidecarset,
)

JSON = dict[str, Any]


def change(mutate: Callable[[JSON], None]) -> Callable[[JSON], JSON]:
    def apply(body: JSON) -> JSON:
        out = copy.deepcopy(body)
        mutate(out)
        return out

    return apply


def _no_selector(b: JSON) -> None:
    b["spec"].pop("selector")


def _both_namespaces(b: JSON) -> None:
    b["spec"]["namespaceSelector"] = {"matchLabels": {"a": "b"}}


def _no_containers(b: JSON) -> None:
    b["spec"]["containers"] = []
    b["spec"]["initContainers"] = []


def _bad_share(b: JSON) -> None:
    b["spec"]["containers"][0]["shareVolumePolicy"] = {"type": "always"}


def _bad_inject(b: JSON) -> None:
    b["spec"]["containers"][0]["podInjectPolicy"] = "Middle"


def _partition_selector(b: JSON) -> None:
    b["spec"]["updateStrategy"] = {"partition": 1, "selector": {"matchLabels": {"a": "b"}}}


def _missing_revision(b: JSON) -> None:
    b["spec"]["injectionStrategy"] = {"revision": {"revisionName": "no-such-revision"}}


def _bad_image(b: JSON) -> None:
    b["spec"]["containers"][0]["image"] = " nginx:1"


def _bad_port(b: JSON) -> None:
    b["spec"]["containers"][1]["ports"] = [{"containerPort": 70000}]


def _unknown_volume(b: JSON) -> None:
    b["spec"]["containers"][0]["volumeMounts"] = [{"name": "missing", "mountPath": "/x"}]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        pytest.param(
            _no_selector, "spec.selector: Required value: no selector defined for SidecarSet", id="selector"
        ),
        pytest.param(
            _both_namespaces,
            "spec.namespace, namespaceSelector: Required value: "
            "namespace and namespaceSelector are mutually exclusive",
            id="namespace-and-selector",
        ),
        pytest.param(
            _no_containers,
            "spec: Required value: no initContainer or container defined for SidecarSet",
            id="no-containers",
        ),
        pytest.param(_bad_share, "unsupported share volume policy", id="share-policy"),
        pytest.param(
            _bad_inject,
            'spec.container.podInjectPolicy: Invalid value: "Middle": unsupported pod inject policy',
            id="inject-policy",
        ),
        pytest.param(
            _partition_selector, "Partition and Selector cannot be used together", id="partition-selector"
        ),
        pytest.param(
            _missing_revision,
            'revision: Invalid value: "null": Cannot find specific ControllerRevision, err: '
            'controllerrevisions.apps "no-such-revision" not found',
            id="missing-revision",
        ),
        pytest.param(_bad_image, "spec.containers[0].image", id="kubernetes-judges-the-image"),
        pytest.param(_bad_port, "spec.containers[1].ports[0].containerPort", id="kubernetes-judges-the-port"),
        pytest.param(
            _unknown_volume, "spec.containers[0].volumeMounts[0].name: Not found", id="mount-without-volume"
        ),
    ],
)
async def test_refused_with_upstreams_message_and_nothing_stored(
    kube: KubeClient, sidecarsets: str, mutate: Callable[[JSON], None], message: str
) -> None:
    body = change(mutate)(base_sidecarset(sidecarsets))
    with pytest.raises(InvalidError) as refused:
        await kube.create(SIDECARSETS, body)
    assert message in str(refused.value)
    assert await kube.get_or_none(SIDECARSETS, body["metadata"]["name"]) is None


async def test_a_conflicting_sidecarset_is_refused(kube: KubeClient, sidecarsets: str) -> None:
    ns = sidecarsets
    first = await create_sidecarset(kube, base_sidecarset(ns, "-a"))
    second = base_sidecarset(ns, "-b")
    with pytest.raises(InvalidError) as refused:
        await kube.create(SIDECARSETS, second)
    assert (
        'spec.containers: Invalid value: "nginx-sidecar": container nginx-sidecar already exist in '
        f"{first['metadata']['name']}"
    ) in str(refused.value)
    assert "container init-sidecar already exist" in str(refused.value)
    disjoint = base_sidecarset(ns, "-c")
    disjoint["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    await create_sidecarset(kube, disjoint)  # selectors cannot overlap: accepted


async def test_updates_keep_the_upgrade_type_and_the_container_list(
    kube: KubeClient, sidecarsets: str
) -> None:
    ns = sidecarsets
    name = (await create_sidecarset(kube, base_sidecarset(ns)))["metadata"]["name"]

    def hot(obj: JSON) -> None:
        obj["spec"]["containers"][0]["upgradeStrategy"] = {
            "upgradeType": "HotUpgrade",
            "hotUpgradeEmptyImage": "e:1",
        }

    with pytest.raises(InvalidError, match="container nginx-sidecar upgradeType is immutable"):
        await update_sidecarset(kube, name, hot)

    def extra(obj: JSON) -> None:
        obj["spec"]["containers"].append({"name": "extra", "image": "e:1"})

    with pytest.raises(InvalidError, match="container extra is not found"):
        await update_sidecarset(kube, name, extra)
    assert name == sidecarset_name(ns)


async def test_defaults_and_hashes_written_by_the_mutating_webhook(
    kube: KubeClient, sidecarsets: str
) -> None:
    created = await create_sidecarset(kube, base_sidecarset(sidecarsets))
    spec = created["spec"]
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "maxUnavailable": 1, "partition": 0}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["containers"][1]["shareVolumePolicy"] == {"type": "disabled"}
    assert spec["containers"][0]["upgradeStrategy"] == {"upgradeType": "ColdUpgrade"}
    assert spec["initContainers"][0]["podInjectPolicy"] == "AfterAppContainer"
    annotations = created["metadata"]["annotations"]
    assert annotations["kruise.io/sidecarset-hash"] and annotations["kruise.io/sidecarset-hash-without-image"]
    assert created["status"]["latestRevision"].startswith(created["metadata"]["name"] + "-")
