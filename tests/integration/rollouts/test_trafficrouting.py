"""TrafficRouting (``rollouts.kruise.io/v1alpha1``, issue 17 item 4), with upstream's manifests.

- Upstream e2e "Canary rollout with custom network provider > V1->V2: Route traffic with header
  matches and weight for VirtualService and DestinationRule" (``KR:test/e2e/rollout_test.go``): the
  Rollout ``rollouts-demo`` (v1alpha1, annotation ``rollouts.kruise.io/trafficrouting: tr-demo``)
  releases the Deployment ``echoserver`` while the TrafficRouting ``tr-demo`` routes ``user-agent: pc``
  to the ``canary`` subset of its VirtualService; both manifests are upstream's examples.
- Upstream's example TrafficRouting ``mse-traffic`` (an MSE Ingress) referenced by a Rollout whose
  steps carry traffic: its canary Ingress weight follows the steps (20%, then 50%), then goes.
- Phases Initial (objects missing) -> Healthy, deletion (Terminating) and specs refused by the
  API server with a message naming the field.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, INGRESSES, SERVICES
from kruise.rollouts.resources import ROLLOUTS, TRAFFIC_ROUTINGS
from kruise.traffic.custom import ORIGINAL_SPEC_ANNOTATION
from kruise.traffic.resources import DESTINATIONRULES, VIRTUALSERVICES, Resource
from tests.integration.rollouts import helpers as h
from tests.integration.rollouts.workload_support import deployment
from tests.support.corpus import UPSTREAM_EXAMPLES
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

EXAMPLES = UPSTREAM_EXAMPLES / "kruise-rollouts"
ROLLOUTS_V1ALPHA1 = Resource("rollouts.kruise.io", "v1alpha1", "rollouts", "Rollout")
VS_V1ALPHA3 = Resource("networking.istio.io", "v1alpha3", "virtualservices", "VirtualService")
DR_V1ALPHA3 = Resource("networking.istio.io", "v1alpha3", "destinationrules", "DestinationRule")
PROGRESSING_FINALIZER = "progressing.rollouts.kruise.io/"
OWN_FINALIZER = "rollouts.kruise.io/trafficrouting"
M, N = "mse.ingress.kubernetes.io/", "nginx.ingress.kubernetes.io/"


def example(path: str, namespace: str) -> dict[str, Any]:
    body: dict[str, Any] = yaml.safe_load((EXAMPLES / path).read_text())
    body["metadata"]["namespace"] = namespace
    return body


def named_service(namespace: str, name: str) -> dict[str, Any]:
    body = h.service(namespace)
    body["metadata"]["name"] = name
    return body


async def traffic_routing(kube: KubeClient, namespace: str, name: str) -> dict[str, Any]:
    return await kube.get(TRAFFIC_ROUTINGS, name, namespace)


async def wait_tr_phase(kube: KubeClient, namespace: str, name: str, phase: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        tr = await traffic_routing(kube, namespace, name)
        return tr if (tr.get("status") or {}).get("phase") == phase else None

    return await eventually(probe, timeout=60, interval=0.3, what=f"TrafficRouting {name} {phase}")


# ---------------------------------------------------------------------------------- upstream e2e
def _virtual_service(namespace: str) -> dict[str, Any]:
    """``test_data/customNetworkProvider/virtualservice_without_destinationrule.yaml`` in shape."""
    return {
        "apiVersion": "networking.istio.io/v1alpha3",
        "kind": "VirtualService",
        "metadata": {"name": "vs-demo", "namespace": namespace},
        "spec": {
            "hosts": ["*"],
            "gateways": ["nginx-gateway"],
            "http": [{"route": [{"destination": {"host": "echoserver"}}]}],
        },
    }


def _destination_rule(namespace: str) -> dict[str, Any]:
    """``test_data/customNetworkProvider/destinationrule.yaml`` in shape."""
    return {
        "apiVersion": "networking.istio.io/v1alpha3",
        "kind": "DestinationRule",
        "metadata": {"name": "ds-demo", "namespace": namespace},
        "spec": {
            "host": "svc-demo",
            "trafficPolicy": {"loadBalancer": {"simple": "ROUND_ROBIN"}},
            "subsets": [{"labels": {"version": "base"}, "name": "echoserver"}],
        },
    }


async def _echoserver(kube: KubeClient, namespace: str) -> None:
    """The Service and the 4-pod Deployment ``echoserver``, settled."""
    await kube.create(SERVICES, named_service(namespace, "echoserver"), namespace)
    body = deployment(namespace, replicas=4)
    body["metadata"]["name"] = "echoserver"
    await kube.create(DEPLOYMENTS, body, namespace)

    async def settled() -> bool:
        st = (await kube.get(DEPLOYMENTS, "echoserver", namespace)).get("status") or {}
        return st.get("readyReplicas") == 4 and st.get("updatedReplicas") == 4

    await eventually(settled, timeout=60, what="4 ready echoserver pods")


async def test_route_traffic_with_header_matches_and_weight_for_virtualservice_and_destinationrule(
    kube: KubeClient, namespace: str
) -> None:
    await kube.create(ROLLOUTS_V1ALPHA1, example("Rollout/012-rollouts-demo.yaml", namespace), namespace)
    await kube.create(TRAFFIC_ROUTINGS, example("TrafficRouting/002-tr-demo.yaml", namespace), namespace)
    await kube.create(VS_V1ALPHA3, _virtual_service(namespace), namespace)
    await kube.create(DR_V1ALPHA3, _destination_rule(namespace), namespace)
    await _echoserver(kube, namespace)
    vs0 = await kube.get(VIRTUALSERVICES, "vs-demo", namespace)
    dr0 = await kube.get(DESTINATIONRULES, "ds-demo", namespace)
    tr = await wait_tr_phase(kube, namespace, "tr-demo", "Healthy")
    assert tr["metadata"]["finalizers"] == [OWN_FINALIZER]
    assert tr["status"]["message"] == "TrafficRouting is Healthy"

    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": h.V2}]}}}}
    await kube.patch(DEPLOYMENTS, "echoserver", patch, namespace, patch_type="strategic")

    async def paused() -> dict[str, Any] | None:
        ro = await kube.get(ROLLOUTS, "rollouts-demo", namespace)
        cs = (ro.get("status") or {}).get("canaryStatus") or {}
        return ro if (cs.get("currentStepIndex"), cs.get("currentStepState")) == (1, "StepPaused") else None

    ro = await eventually(paused, timeout=60, interval=0.3, what="rollouts-demo paused at step 1")
    assert (
        ro["status"]["canaryStatus"]["canaryReplicas"],
        ro["status"]["canaryStatus"]["canaryReadyReplicas"],
    ) == (1, 1)
    tr = await wait_tr_phase(kube, namespace, "tr-demo", "Progressing")
    assert tr["metadata"]["finalizers"] == [OWN_FINALIZER, f"{PROGRESSING_FINALIZER}rollouts-demo"]
    assert tr["status"]["message"].startswith("TrafficRouting is Progressing")

    async def routed() -> dict[str, Any] | None:
        vs = await kube.get(VIRTUALSERVICES, "vs-demo", namespace)
        return vs if len(vs["spec"]["http"]) == 2 else None

    vs = await eventually(routed, timeout=30, what="the header route in vs-demo")
    assert vs["spec"] == {
        "gateways": ["nginx-gateway"],
        "hosts": ["*"],
        "http": [
            {
                "match": [{"headers": {"user-agent": {"exact": "pc"}}}],
                "route": [{"destination": {"host": "echoserver", "subset": "canary"}}],
            },
            {"route": [{"destination": {"host": "echoserver"}}]},
        ],
    }
    assert ORIGINAL_SPEC_ANNOTATION in vs["metadata"]["annotations"]
    dr = await kube.get(DESTINATIONRULES, "ds-demo", namespace)
    assert dr["spec"]["subsets"] == [  # upstream's built-in DestinationRule script (rollout_test.go:2764)
        {"labels": {"version": "base"}, "name": "echoserver"},
        {"labels": {"istio.service.tag": "gray"}, "name": "canary"},
    ]
    assert ORIGINAL_SPEC_ANNOTATION in dr["metadata"]["annotations"]

    # resume: the release completes, the TrafficRouting lets go and restores both objects
    patch = {"status": {"canaryStatus": {"currentStepState": "StepReady"}}}
    await kube.patch(ROLLOUTS, "rollouts-demo", patch, namespace, patch_type="merge", subresource="status")
    tr = await wait_tr_phase(kube, namespace, "tr-demo", "Healthy")
    assert tr["metadata"]["finalizers"] == [OWN_FINALIZER]

    async def completed() -> dict[str, Any] | None:
        ro = await kube.get(ROLLOUTS, "rollouts-demo", namespace)
        return ro if (ro.get("status") or {}).get("phase") == "Healthy" else None

    ro = await eventually(completed, timeout=60, what="rollouts-demo Healthy")
    assert h.condition(ro, "Succeeded")["status"] == "True"
    vs = await kube.get(VIRTUALSERVICES, "vs-demo", namespace)
    dr = await kube.get(DESTINATIONRULES, "ds-demo", namespace)
    assert vs["spec"] == vs0["spec"] and dr["spec"] == dr0["spec"]
    assert ORIGINAL_SPEC_ANNOTATION not in (vs["metadata"].get("annotations") or {})
    assert ORIGINAL_SPEC_ANNOTATION not in (dr["metadata"].get("annotations") or {})
    assert "pod-template-hash" not in (await kube.get(SERVICES, "echoserver", namespace))["spec"]["selector"]
    assert await kube.get_or_none(SERVICES, "echoserver-canary", namespace) is None


# ------------------------------------------------------------------------------- weights by step
def _mse_ingress(namespace: str) -> dict[str, Any]:
    body = h.nginx_ingress(namespace)
    body["metadata"].update(name="spring-cloud-a", annotations={"kubernetes.io/ingress.class": "mse"})
    body["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] = "spring-cloud-a"
    return body


STEPS = [
    {"replicas": "20%", "traffic": "20%", "pause": {}},
    {"replicas": "50%", "traffic": "50%", "pause": {}},
    {"replicas": "100%", "pause": {"duration": 0}},
]


async def test_upstream_traffic_routing_example_shifts_an_ingress_weights_step_by_step(
    kube: KubeClient, namespace: str
) -> None:
    await kube.create(SERVICES, named_service(namespace, "spring-cloud-a"), namespace)
    await kube.create(INGRESSES, _mse_ingress(namespace), namespace)
    await kube.create(TRAFFIC_ROUTINGS, example("TrafficRouting/001-mse-traffic.yaml", namespace), namespace)
    await wait_tr_phase(kube, namespace, "mse-traffic", "Healthy")
    ro = h.rollout(namespace, STEPS)
    ro["spec"]["strategy"]["canary"]["trafficRoutingRef"] = "mse-traffic"
    await h.start(kube, namespace, ro, replicas=10)
    await h.set_image(kube, namespace, h.V2)

    for step, weight in ((1, "20"), (2, "50")):
        await h.wait_paused_at(kube, namespace, step)

        async def shifted(weight: str = weight) -> dict[str, Any] | None:
            canary = await kube.get_or_none(INGRESSES, "spring-cloud-a-canary", namespace)
            annotations = ((canary or {}).get("metadata") or {}).get("annotations") or {}
            return canary if annotations.get(f"{N}canary-weight") == weight else None

        canary = await eventually(shifted, timeout=30, what=f"canary Ingress weight {weight}")
        annotations = canary["metadata"]["annotations"]
        assert annotations[f"{N}canary-by-header"] == "User-Agent"
        assert annotations[f"{N}canary-by-header-value"] == "xiaoming"
        assert annotations[f"{M}request-header-control-update"] == "x-mse-tag gray"
        backend = canary["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"]
        assert backend == "spring-cloud-a"  # end-to-end routing: the stable Service itself
        assert canary["metadata"]["ownerReferences"][0]["kind"] == "TrafficRouting"
        expected = (
            f"TrafficRouting is Progressing: weight {weight}%, 1 match(es), request headers modified"
            f" (Rollout web step {step})"
        )

        async def settled(expected: str = expected) -> dict[str, Any] | None:
            tr = await traffic_routing(kube, namespace, "mse-traffic")
            return tr if (tr.get("status") or {}).get("message") == expected else None

        tr = await eventually(settled, timeout=15, what=f"TrafficRouting: {expected}")
        assert tr["status"]["phase"] == "Progressing"
        assert f"{PROGRESSING_FINALIZER}web" in tr["metadata"]["finalizers"]
        await h.approve(kube, namespace)

    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    tr = await wait_tr_phase(kube, namespace, "mse-traffic", "Healthy")
    assert tr["metadata"]["finalizers"] == [OWN_FINALIZER]

    async def canary_gone() -> bool:
        return await kube.get_or_none(INGRESSES, "spring-cloud-a-canary", namespace) is None

    await eventually(canary_gone, timeout=30, what="the canary Ingress deleted")
    assert (await kube.get(CLONESETS, "web", namespace))["status"]["updatedReplicas"] == 10


# ------------------------------------------------------------------------ lifecycle and bad specs
async def test_initial_until_its_objects_exist_and_deletion_restores_routes(
    kube: KubeClient, namespace: str
) -> None:
    body = example("TrafficRouting/001-mse-traffic.yaml", namespace)
    body["spec"]["strategy"] = {"weight": 30}
    await kube.create(TRAFFIC_ROUTINGS, body, namespace)

    async def waiting() -> dict[str, Any] | None:
        tr = await traffic_routing(kube, namespace, "mse-traffic")
        message = (tr.get("status") or {}).get("message") or ""
        return tr if "Service spring-cloud-a not found" in message else None

    tr = await eventually(waiting, timeout=30, what="Initial, naming the missing Service")
    assert tr["status"]["phase"] == "Initial"
    await kube.create(SERVICES, named_service(namespace, "spring-cloud-a"), namespace)
    await kube.create(INGRESSES, _mse_ingress(namespace), namespace)
    await wait_tr_phase(kube, namespace, "mse-traffic", "Healthy")

    # a Rollout holding it turns it Progressing: its own weight (30%) is routed
    ro = h.rollout(namespace, [{"replicas": "50%", "pause": {}}, {"replicas": "100%"}])
    ro["spec"]["strategy"]["canary"]["trafficRoutingRef"] = "mse-traffic"
    await h.start(kube, namespace, ro, replicas=4)
    await h.set_image(kube, namespace, h.V2)
    await h.wait_paused_at(kube, namespace, 1)

    async def weighted() -> bool:
        canary = await kube.get_or_none(INGRESSES, "spring-cloud-a-canary", namespace)
        return ((canary or {}).get("metadata") or {}).get("annotations", {}).get(f"{N}canary-weight") == "30"

    await eventually(weighted, timeout=30, what="the TrafficRouting's own weight routed")

    # deleted mid-release: Terminating, routes restored, kept until the Rollout lets go
    await kube.delete(TRAFFIC_ROUTINGS, "mse-traffic", namespace)
    tr = await wait_tr_phase(kube, namespace, "mse-traffic", "Terminating")

    async def restored() -> dict[str, Any] | None:
        tr = await traffic_routing(kube, namespace, "mse-traffic")
        gone = await kube.get_or_none(INGRESSES, "spring-cloud-a-canary", namespace) is None
        return tr if gone and tr["metadata"]["finalizers"] == [f"{PROGRESSING_FINALIZER}web"] else None

    await eventually(restored, timeout=30, what="routes restored, only the Rollout's finalizer left")
    await h.approve(kube, namespace)
    await h.wait_completed(kube, namespace)

    async def deleted() -> bool:
        return await kube.get_or_none(TRAFFIC_ROUTINGS, "mse-traffic", namespace) is None

    await eventually(deleted, timeout=30, what="the TrafficRouting gone once the release ended")


@pytest.mark.parametrize(
    ("object_ref", "field", "message"),
    [
        pytest.param([], "spec.objectRef", "should have at least 1 items", id="no entry"),
        pytest.param(
            [{"service": "spring-cloud-a"}], "spec.objectRef[0]", "TrafficRoutings are not set", id="no route"
        ),
        pytest.param(
            [{"service": "", "ingress": {"name": "spring-cloud-a"}}],
            "spec.objectRef[0]",
            "TrafficRouting.Service cannot be empty",
            id="no service",
        ),
    ],
)
async def test_a_traffic_routing_without_routes_is_refused(
    kube: KubeClient, namespace: str, object_ref: list[dict[str, Any]], field: str, message: str
) -> None:
    body = example("TrafficRouting/001-mse-traffic.yaml", namespace)
    body["spec"]["objectRef"] = object_ref
    with pytest.raises(InvalidError) as refused:
        await kube.create(TRAFFIC_ROUTINGS, body, namespace)
    assert field in refused.value.message and message in refused.value.message, refused.value.message
    assert (await kube.list(TRAFFIC_ROUTINGS, namespace))["items"] == []
