"""CloneSet canary rollout with Ingress > V1->V2: A/B testing, header & cookies; Canary rollout with
custom network provider > V1->V2: Route traffic with header/queryParams/path matches and weight
using rollout for VirtualService; the same A/B step over a Gateway API HTTPRoute.

A first step that only *matches* requests (no weight) routes the matching requests to the
canary, then a weighted step replaces the matches; every provider ends up restored.
"""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube import KubeClient
from kruise.traffic.resources import HTTPROUTES, INGRESSES, VIRTUALSERVICES
from tests.integration.rollouts import helpers as h

pytestmark = pytest.mark.usefixtures("manager")


def ab_steps(matches: list[dict[str, Any]], weight: str) -> list[dict[str, Any]]:
    """Upstream's A/B shape: 1 pod with matches, then 2 pods with a weight (3 replicas)."""
    return [
        {"replicas": 1, "matches": matches, "pause": {}},
        {"replicas": 2, "traffic": weight, "pause": {}},
    ]


async def finish(kube: KubeClient, namespace: str) -> dict[str, Any]:
    """Approve the last (partial) step and wait for the release to be Succeeded on 3 new pods."""
    await h.approve(kube, namespace)
    ro = await h.wait_completed(kube, namespace)
    assert h.condition(ro, "Succeeded")["status"] == "True"
    await h.wait_pods(kube, namespace, {h.V2: 3})
    assert await h.selector(kube, namespace) == {"app": "web"}
    return ro


async def test_nginx_ingress_header_and_cookie(kube: KubeClient, namespace: str) -> None:
    matches = [
        {"headers": [{"type": "RegularExpression", "name": "user_id", "value": "123456"}]},
        {"headers": [{"name": "canary-by-cookie", "value": "demo"}]},
    ]
    ro = h.rollout(namespace, ab_steps(matches, "30%"), h.ROUTING_INGRESS)
    await h.start(kube, namespace, ro, "ingress", replicas=3)
    await h.set_image(kube, namespace, h.V2)

    await h.wait_paused_at(kube, namespace, 1)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 2, h.V2: 1}
    canary = await kube.get(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(canary) == {
        "canary": "true",
        "canary-by-header": "user_id",
        "canary-by-header-pattern": "123456",
        "canary-by-cookie": "demo",
    }

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    assert await h.pods_by_image(kube, namespace) == {h.V1: 1, h.V2: 2}
    canary = await kube.get(INGRESSES, "web-canary", namespace)
    assert h.canary_ingress_annotations(canary) == {"canary": "true", "canary-weight": "30"}

    await finish(kube, namespace)
    assert await kube.get_or_none(INGRESSES, "web-canary", namespace) is None


async def test_httproute_headers_query_params_and_path(kube: KubeClient, namespace: str) -> None:
    matches = [
        {"headers": [{"type": "Exact", "name": "user-agent", "value": "pc"}]},
        {"queryParams": [{"type": "Exact", "name": "user-agent", "value": "pc"}]},
        {"path": {"value": "/pc"}},
    ]
    ro = h.rollout(namespace, ab_steps(matches, "50%"), h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute", replicas=3)
    route0 = await kube.get(HTTPROUTES, "web", namespace)
    await h.set_image(kube, namespace, h.V2)

    await h.wait_paused_at(kube, namespace, 1)
    rules = (await kube.get(HTTPROUTES, "web", namespace))["spec"]["rules"]
    assert len(rules) == 2
    assert [r["name"] for r in rules[0]["backendRefs"]] == ["web"]
    assert [r["name"] for r in rules[1]["backendRefs"]] == ["web-canary"]
    got = rules[1]["matches"]
    assert {"path": {"type": "PathPrefix", "value": "/pc"}} in got
    assert {
        "path": {"type": "PathPrefix", "value": "/"},
        "headers": [{"type": "Exact", "name": "user-agent", "value": "pc"}],
    } in got
    assert {
        "path": {"type": "PathPrefix", "value": "/"},
        "queryParams": [{"type": "Exact", "name": "user-agent", "value": "pc"}],
    } in got

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    route = await kube.get(HTTPROUTES, "web", namespace)
    assert len(route["spec"]["rules"]) == 1
    assert h.route_weights(route) == {"web": 50, "web-canary": 50}

    await finish(kube, namespace)
    route = await kube.get(HTTPROUTES, "web", namespace)
    assert [r["name"] for r in route["spec"]["rules"][0]["backendRefs"]] == ["web"]
    assert len(route["spec"]["rules"]) == len(route0["spec"]["rules"])


async def test_istio_virtualservice_headers(kube: KubeClient, namespace: str) -> None:
    matches = [{"headers": [{"type": "Exact", "name": "user-agent", "value": "pc"}]}]
    ro = h.rollout(namespace, ab_steps(matches, "50%"), h.ROUTING_ISTIO)
    await h.start(kube, namespace, ro, "istio", replicas=3)
    vs0 = await kube.get(VIRTUALSERVICES, "web", namespace)
    await h.set_image(kube, namespace, h.V2)

    await h.wait_paused_at(kube, namespace, 1)
    http = (await kube.get(VIRTUALSERVICES, "web", namespace))["spec"]["http"]
    assert http[0] == {
        "match": [{"headers": {"user-agent": {"exact": "pc"}}}],
        "route": [{"destination": {"host": "web-canary"}}],
    }
    assert http[1:] == vs0["spec"]["http"]

    await h.approve(kube, namespace)
    await h.wait_paused_at(kube, namespace, 2)
    vs = await kube.get(VIRTUALSERVICES, "web", namespace)
    assert len(vs["spec"]["http"]) == 1
    assert h.vs_weights(vs) == {"web": 50, "web-canary": 50}

    await finish(kube, namespace)
    assert (await kube.get(VIRTUALSERVICES, "web", namespace))["spec"] == vs0["spec"]
