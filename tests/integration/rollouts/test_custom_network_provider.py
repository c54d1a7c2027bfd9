"""Custom network providers: which Lua script drives a VirtualService, and what it writes.

Upstream rule (``KR:pkg/trafficrouting/network/customNetworkProvider/custom_network_provider.go``,
``getLuaScript``): for a ``customNetworkRefs[]`` kind the script built into the controller
(``lua_configuration/<group>/<Kind>/trafficRouting.lua``) is used whenever there is one; the
``kruise-rollout-configuration`` ConfigMap is read only for kinds without a built-in script.
Upstream's e2e suite installs that ConfigMap with VirtualService and DestinationRule scripts of
its own before these specs; with the built-in winning they never run.

Here the ConfigMap holds a VirtualService script that writes ``queryParams.<name>.exact`` as a
bare string (the shape Istio's schema refuses) and labels what it touches, so a manager that
preferred the ConfigMap would leave the Rollout stuck at step 1 with the API server's error.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, INGRESSES, SERVICES
from kruise.traffic.custom import ORIGINAL_SPEC_ANNOTATION
from kruise.traffic.resources import CONFIGMAPS, VIRTUALSERVICES, Resource
from kruise.traffic.scripts import LUA_CONFIGMAP
from tests.integration.rollouts import workload_support as w
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

CONFIG_NAMESPACE = "kruise-system"
"""The test manager's ``--rollout-configuration-namespace`` (its default)."""
VS_V1ALPHA3 = Resource("networking.istio.io", "v1alpha3", "virtualservices", "VirtualService")
VS_REF = {"apiVersion": "networking.istio.io/v1alpha3", "kind": "VirtualService", "name": "vs-demo"}

REFUSED_VS_SCRIPT = """
-- writes match.queryParams.<name>.exact as a string: Istio's schema refuses it
local data = obj.data
if obj.matches then
  for _, m in ipairs(obj.matches) do
    if m.queryParams then
      for _, q in ipairs(m.queryParams) do
        table.insert(data.spec.http, 1, {
          match = {{queryParams = {exact = q.value}}},
          route = {{destination = {host = obj.canaryService}}},
        })
      end
    end
  end
end
data.labels = {["example.com/routed-by"] = "configmap"}
return data
"""

MATCHES = [
    {"headers": [{"type": "Exact", "name": "user-agent", "value": "pc"}]},
    {"queryParams": [{"type": "Exact", "name": "user-agent", "value": "pc"}]},
    {"path": {"value": "/pc"}},
]
ORIGINAL_SPEC = {
    "gateways": ["nginx-gateway"],
    "hosts": ["*"],
    "http": [{"route": [{"destination": {"host": "web"}}]}],
}
STEP1_SPEC = {
    "gateways": ["nginx-gateway"],
    "hosts": ["*"],
    "http": [
        {"match": [{"uri": {"prefix": "/pc"}}], "route": [{"destination": {"host": "web-canary"}}]},
        {
            "match": [{"queryParams": {"user-agent": {"exact": "pc"}}}],
            "route": [{"destination": {"host": "web-canary"}}],
        },
        {
            "match": [{"headers": {"user-agent": {"exact": "pc"}}}],
            "route": [{"destination": {"host": "web-canary"}}],
        },
        {"route": [{"destination": {"host": "web"}}]},
    ],
}
STEP2_SPEC = {
    "gateways": ["nginx-gateway"],
    "hosts": ["*"],
    "http": [
        {
            "route": [
                {"destination": {"host": "web"}, "weight": 50},
                {"destination": {"host": "web-canary"}, "weight": 50},
            ]
        }
    ],
}
SAVED_ORIGINAL = (
    '{"spec":{"gateways":["nginx-gateway"],"hosts":["*"],'
    '"http":[{"route":[{"destination":{"host":"web"}}]}]}}'
)
"""Upstream's ``OriginalSpecAnnotation`` value for the VirtualService, byte for byte."""


@pytest.fixture
async def lua_configmap(kube: KubeClient) -> AsyncIterator[None]:
    """The configuration ConfigMap with a VirtualService script, removed afterwards."""
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": LUA_CONFIGMAP, "namespace": CONFIG_NAMESPACE},
        "data": {"lua.traffic.routing.VirtualService.networking.istio.io": REFUSED_VS_SCRIPT},
    }
    await kube.delete(CONFIGMAPS, LUA_CONFIGMAP, CONFIG_NAMESPACE, missing_ok=True)
    await kube.create(CONFIGMAPS, body, CONFIG_NAMESPACE)
    yield
    await kube.delete(CONFIGMAPS, LUA_CONFIGMAP, CONFIG_NAMESPACE, missing_ok=True)


def virtual_service(namespace: str) -> dict[str, Any]:
    """``KR:test/e2e/test_data/customNetworkProvider/virtualservice_without_destinationrule.yaml``."""
    return {
        "apiVersion": "networking.istio.io/v1alpha3",
        "kind": "VirtualService",
        "metadata": {"name": "vs-demo", "namespace": namespace},
        "spec": ORIGINAL_SPEC,
    }


def routing_rollout(namespace: str, routing: dict[str, Any]) -> dict[str, Any]:
    """``rollout_with_trafficrouting.yaml`` / ``rollout_with_multi_trafficrouting.yaml`` in shape."""
    steps = [{"replicas": 1, "matches": MATCHES}, {"replicas": "50%", "traffic": "50%"}]
    strategy = {
        "canary": {"enableExtraWorkloadForCanary": True, "steps": steps, "trafficRoutings": [routing]}
    }
    return w.rollout(namespace, w.DEPLOYMENT_REF, strategy)


async def release(kube: KubeClient, namespace: str, routing: dict[str, Any]) -> None:
    """Service, VirtualService, Ingress, a 4-replica Deployment and the Rollout, Healthy."""
    await kube.create(VS_V1ALPHA3, virtual_service(namespace), namespace)
    await w.start(kube, namespace, w.deployment(namespace, replicas=4), routing_rollout(namespace, routing))
    await w.set_image(kube, namespace, "Deployment", w.V2)


async def vs_spec_is(kube: KubeClient, namespace: str, want: dict[str, Any]) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        vs = await kube.get(VIRTUALSERVICES, "vs-demo", namespace)
        return vs if vs["spec"] == want else None

    return await eventually(probe, timeout=30, interval=0.3, what=f"vs-demo spec {json.dumps(want)}")


async def check_step1(kube: KubeClient, namespace: str) -> None:
    ro = await w.wait_paused_at(kube, namespace, 1)
    cs = ro["status"]["canaryStatus"]
    assert (cs["canaryReplicas"], cs["canaryReadyReplicas"]) == (1, 1)
    vs = await vs_spec_is(kube, namespace, STEP1_SPEC)
    assert vs["metadata"]["annotations"][ORIGINAL_SPEC_ANNOTATION] == SAVED_ORIGINAL
    assert "example.com/routed-by" not in (vs["metadata"].get("labels") or {})


async def check_step2(kube: KubeClient, namespace: str) -> None:
    await w.approve(kube, namespace)
    ro = await w.wait_paused_at(kube, namespace, 2)
    cs = ro["status"]["canaryStatus"]
    assert (cs["canaryReplicas"], cs["canaryReadyReplicas"]) == (2, 2)
    vs = await vs_spec_is(kube, namespace, STEP2_SPEC)
    assert vs["metadata"]["annotations"][ORIGINAL_SPEC_ANNOTATION] == SAVED_ORIGINAL


async def check_completed(kube: KubeClient, namespace: str) -> None:
    await w.approve(kube, namespace)
    ro = await w.wait_phase(kube, namespace, "Healthy")
    assert w.conditions(ro)["Succeeded"]["status"] == "True"
    vs = await kube.get(VIRTUALSERVICES, "vs-demo", namespace)
    assert vs["spec"] == ORIGINAL_SPEC
    assert ORIGINAL_SPEC_ANNOTATION not in (vs["metadata"].get("annotations") or {})
    svc = await kube.get(SERVICES, "web", namespace)
    assert "pod-template-hash" not in (svc["spec"].get("selector") or {})
    assert await kube.get_or_none(SERVICES, "web-canary", namespace) is None
    dep = await kube.get(DEPLOYMENTS, "web", namespace)
    assert not dep["spec"].get("paused")
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == w.V2
    await w.wait_pods(kube, namespace, {w.V2: 4})  # the canary Deployment's pods are going


@pytest.mark.usefixtures("lua_configmap")
async def test_route_traffic_with_header_queryparams_path_matches_and_weight_using_rollout_for_virtualservice(
    kube: KubeClient, namespace: str
) -> None:
    """Upstream e2e "Canary rollout with custom network provider > V1->V2: Route traffic with
    header/queryParams/path matches and weight using rollout for VirtualService"
    (``KR:test/e2e/rollout_test.go:2597`` at 9dd6279).

    The built-in VirtualService script runs although the ConfigMap has one: step 1 puts one rule
    per match (path, then queryParams, then headers) in front, each to the canary Service;
    step 2 splits the stable route 50/50; completion restores the spec and drops the annotation.
    """
    await release(kube, namespace, {"service": "web", "gracePeriodSeconds": 1, "customNetworkRefs": [VS_REF]})
    await check_step1(kube, namespace)
    await check_step2(kube, namespace)
    await check_completed(kube, namespace)


@pytest.mark.usefixtures("lua_configmap")
async def test_route_traffic_with_header_queryparams_path_matches_and_weight_for_istio_and_ingress(
    kube: KubeClient, namespace: str
) -> None:
    """Upstream e2e "Canary rollout with multiple network providers > V1->V2: Route traffic with
    header/queryParams/path matches and weight using rollout for Istio and Ingress"
    (``KR:test/e2e/rollout_v1beta1_test.go:6608`` at 9dd6279).

    One ``trafficRoutings[]`` entry with both an nginx Ingress and the VirtualService: the
    VirtualService as in the single-provider spec, and the canary Ingress routes by the first
    header at step 1 (no weight) and by weight 50 at step 2 (no header); both go at the end.
    """
    routing = {
        "service": "web",
        "gracePeriodSeconds": 1,
        "ingress": {"classType": "nginx", "name": "web"},
        "customNetworkRefs": [VS_REF],
    }
    await release(kube, namespace, routing)
    await check_step1(kube, namespace)
    notes = (await kube.get(INGRESSES, "web-canary", namespace))["metadata"]["annotations"]
    assert notes[f"{w.NGINX}canary"] == "true"
    assert not notes.get(f"{w.NGINX}canary-weight")  # upstream: BeEmpty()
    assert (notes[f"{w.NGINX}canary-by-header"], notes[f"{w.NGINX}canary-by-header-value"]) == (
        "user-agent",
        "pc",
    )
    await check_step2(kube, namespace)
    notes = (await kube.get(INGRESSES, "web-canary", namespace))["metadata"]["annotations"]
    assert notes[f"{w.NGINX}canary-weight"] == "50"
    assert not notes.get(f"{w.NGINX}canary-by-header")
    await check_completed(kube, namespace)
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None
