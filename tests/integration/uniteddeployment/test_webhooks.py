"""UnitedDeployment validation through the real API server and the manager's webhook
(``vuniteddeployment.kb.io``): upstream's sample is admitted, every upstream message of
``pkg/webhook/uniteddeployment`` comes back on the manifest that earns it, and what Kubernetes'
own validators judge (pod template, node selector terms, tolerations) is the API server's verdict."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.errors import ConflictError, InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import UNITEDDEPLOYMENTS
from tests.support.compare import missing
from tests.support.uniteddeployment_cases import CREATE_CASES, UPDATE_CASES, Edit, sample, subsets
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
NAME = "uniteddeployment-sample"


async def refused(kube: KubeClient, namespace: str, body: dict[str, Any]) -> str:
    with pytest.raises(InvalidError) as err:
        await kube.create(UNITEDDEPLOYMENTS, body, namespace)
    assert await kube.get_or_none(UNITEDDEPLOYMENTS, NAME, namespace) is None
    return str(err.value)


async def test_upstream_sample_is_admitted_as_written(kube: KubeClient, namespace: str) -> None:
    body = sample()
    await kube.create(UNITEDDEPLOYMENTS, body, namespace)
    stored = await kube.get(UNITEDDEPLOYMENTS, NAME, namespace)
    assert missing(body["spec"], stored["spec"]) == []


@pytest.mark.parametrize(("edit", "message"), [pytest.param(e, m, id=i) for i, e, m in CREATE_CASES])
async def test_create_is_refused_with_upstreams_message(
    kube: KubeClient, namespace: str, edit: Edit, message: str
) -> None:
    body = sample()
    edit(body)
    assert message in await refused(kube, namespace, body)


@pytest.mark.parametrize(("edit", "message"), [pytest.param(e, m, id=i) for i, e, m in UPDATE_CASES])
async def test_update_is_refused_with_upstreams_message(
    kube: KubeClient, namespace: str, edit: Edit, message: str
) -> None:
    stored = await kube.create(UNITEDDEPLOYMENTS, sample(), namespace)
    changed = sample()
    edit(changed)

    async def rejection() -> InvalidError | None:
        """The update's error; None on a conflict with the controller's status write."""
        current = await kube.get(UNITEDDEPLOYMENTS, NAME, namespace)
        meta = {**changed["metadata"], "namespace": namespace}
        meta["resourceVersion"] = current["metadata"]["resourceVersion"]
        try:
            await kube.replace(UNITEDDEPLOYMENTS, {**changed, "metadata": meta})
        except ConflictError:
            return None
        except InvalidError as err:
            return err
        raise AssertionError("the update was admitted")

    err = await eventually(rejection, timeout=30, what="the update refused")
    assert message in str(err)
    after = await kube.get(UNITEDDEPLOYMENTS, NAME, namespace)
    assert after["metadata"]["generation"] == stored["metadata"]["generation"], "nothing changed"
    assert after["spec"] == stored["spec"]


async def test_subset_node_selector_and_tolerations_are_judged_by_the_api_server(
    kube: KubeClient, namespace: str
) -> None:
    body = sample()
    subsets(body)[0]["nodeSelectorTerm"]["matchExpressions"][0].pop("values")
    subsets(body)[2]["tolerations"] = [{"key": "k", "operator": "Exists", "value": "v"}]
    text = await refused(kube, namespace, body)
    assert (
        "spec.topology.subsets[0].nodeSelectorTerm.matchExpressions[0].values: Required value: "
        "must be specified when `operator` is 'In' or 'NotIn'"
    ) in text
    assert "spec.topology.subsets[2].tolerations[0].operator: Invalid value: " in text


async def test_pod_template_is_judged_by_the_api_server(kube: KubeClient, namespace: str) -> None:
    body = sample()
    container = body["spec"]["template"]["statefulSetTemplate"]["spec"]["template"]["spec"]["containers"][0]
    container["name"] = "Not_A_Name"
    text = await refused(kube, namespace, body)
    assert (
        'spec.template.statefulSetTemplate.spec.template.spec.containers[0].name: Invalid value: "Not_A_Name"'
        in text
    )


async def test_defaults_are_applied_on_create(kube: KubeClient, namespace: str) -> None:
    body = sample()
    del body["spec"]["revisionHistoryLimit"]
    for subset in subsets(body):
        subset.pop("replicas", None)
    subsets(body)[0]["maxReplicas"] = 2
    created = await kube.create(UNITEDDEPLOYMENTS, body, namespace)
    spec = created["spec"]
    assert spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"] == {"type": "Manual", "manualUpdate": {}}
    assert [s["minReplicas"] for s in spec["topology"]["subsets"]] == [0, 0, 0]
    pod_spec = spec["template"]["statefulSetTemplate"]["spec"]["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always" and pod_spec["dnsPolicy"] == "ClusterFirst"
