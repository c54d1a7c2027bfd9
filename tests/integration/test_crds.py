"""kruise's generated CRDs in the real API server (issue: foundation, item 3)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, CRDS, UNITEDDEPLOYMENTS
from tests.support.compare import missing
from tests.support.corpus import UPSTREAM_EXAMPLES as CORPUS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cloneset-catalog.yaml"


def example_cloneset() -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d and d["kind"] == "CloneSet"]
    return docs[0]


async def test_cloneset_crd_is_established_with_scale_subresource(kube: KubeClient) -> None:
    crd = await kube.get(CRDS, "clonesets.apps.kruise.io")
    conds = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conds["Established"] == "True"
    assert conds.get("NonStructuralSchema") is None
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")
    assert version["storage"] is True
    assert version["subresources"]["scale"]["specReplicasPath"] == ".spec.replicas"
    assert "clone" in crd["spec"]["names"]["shortNames"]


async def test_documented_example_cloneset_is_accepted_unchanged(kube: KubeClient, namespace: str) -> None:
    body = example_cloneset()
    body["metadata"]["namespace"] = namespace
    created = await kube.create(CLONESETS, body, namespace)
    stored = await kube.get(CLONESETS, body["metadata"]["name"], namespace)
    assert stored["metadata"]["uid"] == created["metadata"]["uid"]
    assert stored["spec"]["replicas"] == 10
    # everything the manifest says is stored as said (webhooks, when running, only add defaults);
    # in particular nothing is pruned from the embedded pod template
    assert missing(body["spec"], stored["spec"]) == []


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        pytest.param(("spec", "replicas"), "ten", "spec.replicas", id="replicas as a word"),
        pytest.param(
            ("spec", "updateStrategy", "paused"), "yes", "spec.updateStrategy.paused", id="paused not bool"
        ),
        pytest.param(("spec", "minReadySeconds"), [1], "spec.minReadySeconds", id="minReadySeconds as list"),
    ],
)
async def test_wrong_type_is_rejected_by_the_schema(
    kube: KubeClient, namespace: str, path: tuple[str, ...], value: Any, needle: str
) -> None:
    body = copy.deepcopy(example_cloneset())
    body["metadata"]["namespace"] = namespace
    target = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(InvalidError) as err:
        await kube.create(CLONESETS, body, namespace)
    assert needle in err.value.message
    assert await kube.get_or_none(CLONESETS, body["metadata"]["name"], namespace) is None


async def test_broadcastjob_crd_is_established_with_upstreams_names_and_columns(kube: KubeClient) -> None:
    crd = await kube.get(CRDS, "broadcastjobs.apps.kruise.io")
    conds = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conds["Established"] == "True" and conds.get("NonStructuralSchema") is None
    assert crd["spec"]["names"]["shortNames"] == ["bcj"]
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["storage"], version["subresources"]) == (
        "v1alpha1",
        True,
        {"status": {}},
    )
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("Desired", ".status.desired"),
        ("Active", ".status.active"),
        ("Succeeded", ".status.succeeded"),
        ("Failed", ".status.failed"),
        ("AGE", ".metadata.creationTimestamp"),
    ]


async def test_ephemeraljob_crd_is_established_with_upstreams_names_and_columns(kube: KubeClient) -> None:
    crd = await kube.get(CRDS, "ephemeraljobs.apps.kruise.io")
    conds = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conds["Established"] == "True" and conds.get("NonStructuralSchema") is None
    assert (crd["spec"]["scope"], crd["spec"]["names"]["shortNames"]) == ("Namespaced", ["ejob"])
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["storage"], version["subresources"]) == (
        "v1alpha1",
        True,
        {"status": {}},
    )
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["selector", "template"]
    assert spec["properties"]["template"]["properties"]["ephemeralContainers"] == {
        "description": "EphemeralContainers defines ephemeral container list in match pods.",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("STATUS", ".status.phase"),
        ("MATCH", ".status.match"),
        ("SUCCEED", ".status.succeeded"),
        ("FAILED", ".status.failed"),
        ("RUNNING", ".status.running"),
        ("WAITING", ".status.waiting"),
        ("AGE", ".metadata.creationTimestamp"),
    ]


UD_EXAMPLE = CORPUS / "kruise" / "UnitedDeployment" / "002-uniteddeployment-sample.yaml"


async def test_uniteddeployment_example_is_stored_unchanged_and_scales(
    kube: KubeClient, namespace: str
) -> None:
    """Upstream's v1alpha1 sample is stored as written; the scale subresource (HPA's door) reads and
    writes ``spec.replicas`` and reports ``status.labelSelector``."""
    crd = await kube.get(CRDS, "uniteddeployments.apps.kruise.io")
    assert crd["spec"]["names"]["shortNames"] == ["ud"]
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha1"]
    body = yaml.safe_load(UD_EXAMPLE.read_text())
    body["metadata"]["namespace"] = namespace
    await kube.create(UNITEDDEPLOYMENTS, body, namespace)
    stored = await kube.get(UNITEDDEPLOYMENTS, body["metadata"]["name"], namespace)
    assert missing(body["spec"], stored["spec"]) == []
    scale = await kube.get(UNITEDDEPLOYMENTS, body["metadata"]["name"], namespace, subresource="scale")
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 6
    scale["spec"]["replicas"] = 9
    scale["metadata"].pop("resourceVersion")  # unconditional, as `kubectl scale` (status writes go on)
    await kube.replace(UNITEDDEPLOYMENTS, scale, subresource="scale")
    stored = await kube.get(UNITEDDEPLOYMENTS, body["metadata"]["name"], namespace)
    assert stored["spec"]["replicas"] == 9


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        pytest.param(
            ("spec", "topology", "scheduleStrategy", "type"), "Random", "scheduleStrategy.type", id="type"
        ),
        pytest.param(
            ("spec", "topology", "subsets", 0, "replicas"), 1.5, "subsets[0].replicas", id="replicas"
        ),
        pytest.param(
            ("spec", "updateStrategy", "manualUpdate", "partitions"), {"a": "x"}, "partitions.a", id="part"
        ),
    ],
)
async def test_uniteddeployment_wrong_value_is_rejected_by_the_schema(
    kube: KubeClient, namespace: str, path: tuple[Any, ...], value: Any, needle: str
) -> None:
    body = yaml.safe_load(UD_EXAMPLE.read_text())
    body["metadata"]["namespace"] = namespace
    node: Any = body
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
    node[path[-1]] = value
    with pytest.raises(InvalidError) as err:
        await kube.create(UNITEDDEPLOYMENTS, body, namespace)
    assert needle in str(err.value)


async def test_workloadspread_crd_is_established_with_upstreams_names(kube: KubeClient) -> None:
    crd = await kube.get(CRDS, "workloadspreads.apps.kruise.io")
    conds = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conds["Established"] == "True" and conds.get("NonStructuralSchema") is None
    assert (crd["spec"]["scope"], crd["spec"]["names"]["shortNames"]) == ("Namespaced", ["ws"])
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["subresources"]) == ("v1alpha1", {"status": {}})
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["required"] == ["subsets", "targetRef"]
    subset = spec["properties"]["subsets"]["items"]
    assert subset["required"] == ["name"]
    assert subset["properties"]["maxReplicas"]["x-kubernetes-int-or-string"] is True
    assert spec["properties"]["scheduleStrategy"]["properties"]["type"]["enum"] == ["Adaptive", "Fixed", ""]
    status = version["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]["subsetStatuses"][
        "items"
    ]
    assert status["required"] == ["missingReplicas", "name", "replicas"]
