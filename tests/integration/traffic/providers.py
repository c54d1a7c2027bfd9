"""The providers the router contract suite runs against: how to set each up and read it back.

Every case creates its own objects in the test namespace and knows how to read, from the API
server, the weights it holds, whether a match step reached it, and a snapshot of the user's
objects that a restore must give back exactly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kruise.core.kube import KubeClient
from kruise.traffic.configmap_source import ConfigMapLuaSource
from kruise.traffic.custom import ORIGINAL_SPEC_ANNOTATION
from kruise.traffic.resources import (
    CONFIGMAPS,
    DESTINATIONRULES,
    HTTPROUTES,
    INGRESSES,
    VIRTUALSERVICES,
    Resource,
)
from kruise.traffic.scripts import LUA_CONFIGMAP, LuaScriptSource, StaticLuaSource

JSON = dict[str, Any]
STABLE, CANARY = "echo", "echo-canary"
NGINX = "nginx.ingress.kubernetes.io/"
MATCHES: list[JSON] = [
    {
        "headers": [{"type": "Exact", "name": "user", "value": "beta"}],
        "queryParams": [{"type": "Exact", "name": "v", "value": "2"}],
    },
    {"path": {"type": "PathPrefix", "value": "/beta"}},
]

USER_GRPC_SCRIPT = """
-- a user's GRPCRoute script (no built-in exists for the kind, so the ConfigMap's is used):
-- weights on the first rule's backends, a rule per match header in front
local data = obj.data
local rules = data.spec.rules
local function backend(name, weight)
  return {group = "", kind = "Service", name = name, port = 9000, weight = weight}
end
if obj.matches then
  for _, m in ipairs(obj.matches) do
    local h = m.headers and m.headers[1]
    if h then
      table.insert(rules, 1, {
        matches = {{headers = {{type = "Exact", name = h.name, value = h.value}}}},
        backendRefs = {backend(obj.canaryService, 1)},
      })
    end
  end
else
  rules[1].backendRefs = {
    backend(obj.stableService, obj.stableWeight),
    backend(obj.canaryService, obj.canaryWeight),
  }
end
data.labels = data.labels or {}
data.labels["example.com/routed-by"] = "user-script"
return data
"""

GRPCROUTES = Resource("gateway.networking.k8s.io", "v1", "grpcroutes", "GRPCRoute")

Reader = Callable[[KubeClient, str], Awaitable[Any]]


@dataclass
class Case:
    """One provider under the contract: objects, the Rollout's ``trafficRoutings[]`` entry, readers."""

    id: str
    objects: list[tuple[Any, JSON]]
    ref: JSON
    weights: Reader
    """(stable, canary) weight pairs the objects hold now."""
    matched: Reader
    """True when the objects route the ``MATCHES`` step to the canary."""
    configmap: dict[str, str] = field(default_factory=dict)

    async def setup(self, kube: KubeClient, ns: str) -> LuaScriptSource:
        for res, body in self.objects:
            await kube.create(res, body, ns)
        if not self.configmap:
            return StaticLuaSource()
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": LUA_CONFIGMAP},
            "data": self.configmap,
        }
        await kube.create(CONFIGMAPS, body, ns)
        return ConfigMapLuaSource(kube, ns)

    async def snapshot(self, kube: KubeClient, ns: str) -> list[Any]:
        """The user's objects (spec, labels, annotations) and whether a canary Ingress exists."""
        out: list[Any] = []
        for res, body in self.objects:
            obj = await kube.get(res, body["metadata"]["name"], ns)
            meta = obj["metadata"]
            out.append((obj.get("spec"), meta.get("labels"), meta.get("annotations")))
            if res is INGRESSES:
                out.append(await kube.get_or_none(INGRESSES, f"{meta['name']}-canary", ns) is not None)
        return out


def meta(name: str, **extra: Any) -> JSON:
    return {"name": name, **extra}


def http_route() -> JSON:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": meta("echo-route", labels={"app": "echo"}),
        "spec": {
            "parentRefs": [{"name": "gateway"}],
            "hostnames": ["echo.example.com"],
            "rules": [
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                    "backendRefs": [{"name": STABLE, "port": 80}],
                },
                {
                    "matches": [{"path": {"type": "PathPrefix", "value": "/static"}}],
                    "backendRefs": [{"name": "static", "port": 80}],
                },
            ],
        },
    }


def stable_ingress() -> JSON:
    def path(p: str, svc: str) -> JSON:
        return {
            "path": p,
            "pathType": "Prefix",
            "backend": {"service": {"name": svc, "port": {"number": 80}}},
        }

    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": meta("echo", annotations={"nginx.ingress.kubernetes.io/proxy-body-size": "1m"}),
        "spec": {
            "ingressClassName": "nginx",
            "rules": [
                {
                    "host": "echo.example.com",
                    "http": {"paths": [path("/", STABLE), path("/static", "static")]},
                }
            ],
        },
    }


def virtual_service() -> JSON:
    return {
        "apiVersion": "networking.istio.io/v1",
        "kind": "VirtualService",
        "metadata": meta("echo-vs", labels={"app": "echo"}, annotations={"team": "payments"}),
        "spec": {
            "hosts": ["echo.example.com"],
            "gateways": ["mesh"],
            "http": [{"route": [{"destination": {"host": STABLE, "port": {"number": 80}}}]}],
        },
    }


def grpc_route() -> JSON:
    """A GRPCRoute written with every field the API server would default, so a replace is stable."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GRPCRoute",
        "metadata": meta("echo-grpc", labels={"app": "echo"}),
        "spec": {
            "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gateway"}],
            "hostnames": ["echo.example.com"],
            "rules": [
                {
                    "matches": [{"method": {"type": "Exact", "service": "echo.Echo"}}],
                    "backendRefs": [
                        {"group": "", "kind": "Service", "name": STABLE, "port": 9000, "weight": 1}
                    ],
                }
            ],
        },
    }


def destination_rule() -> JSON:
    return {
        "apiVersion": "networking.istio.io/v1",
        "kind": "DestinationRule",
        "metadata": meta("echo-dr"),
        "spec": {"host": STABLE, "subsets": [{"name": "stable", "labels": {"app": "echo"}}]},
    }


# ------------------------------------------------------------------ readers
async def route_weights(kube: KubeClient, ns: str) -> list[tuple[int, int]]:
    route = await kube.get(HTTPROUTES, "echo-route", ns)
    out = []
    for rule in route["spec"]["rules"]:
        weights = {ref["name"]: ref.get("weight") for ref in rule["backendRefs"]}
        if STABLE in weights:
            out.append((weights[STABLE], weights.get(CANARY)))
    return out


async def route_matched(kube: KubeClient, ns: str) -> bool:
    rules = (await kube.get(HTTPROUTES, "echo-route", ns))["spec"]["rules"]
    canary = [r for r in rules if [b["name"] for b in r["backendRefs"]] == [CANARY]]
    assert len(canary) == 1, rules
    root = {"type": "PathPrefix", "value": "/"}
    assert canary[0]["matches"] == [
        {"path": {"type": "PathPrefix", "value": "/beta"}},
        {"path": root, "headers": MATCHES[0]["headers"], "queryParams": MATCHES[0]["queryParams"]},
    ]
    return True


async def ingress_weights(kube: KubeClient, ns: str) -> list[tuple[int, int]]:
    canary = await kube.get(INGRESSES, "echo-canary", ns)
    weight = int(canary["metadata"]["annotations"][f"{NGINX}canary-weight"])
    paths = canary["spec"]["rules"][0]["http"]["paths"]
    assert [(p["path"], p["backend"]["service"]["name"]) for p in paths] == [("/", CANARY)]
    return [(100 - weight, weight)]


async def ingress_matched(kube: KubeClient, ns: str) -> bool:
    annotations = (await kube.get(INGRESSES, "echo-canary", ns))["metadata"]["annotations"]
    assert annotations[f"{NGINX}canary"] == "true"
    assert annotations[f"{NGINX}canary-by-header"] == "user"
    assert annotations[f"{NGINX}canary-by-header-value"] == "beta"
    assert f"{NGINX}canary-weight" not in annotations
    return True


async def vs_weights(kube: KubeClient, ns: str) -> list[tuple[int, int]]:
    vs = await kube.get(VIRTUALSERVICES, "echo-vs", ns)
    assert ORIGINAL_SPEC_ANNOTATION in vs["metadata"]["annotations"]
    out = []
    for rule in vs["spec"]["http"]:
        weights = {r["destination"]["host"]: r.get("weight") for r in rule["route"]}
        out.append((weights[STABLE], weights[CANARY]))
    return out


async def vs_matched(kube: KubeClient, ns: str) -> bool:
    http = (await kube.get(VIRTUALSERVICES, "echo-vs", ns))["spec"]["http"]
    assert http[0]["match"] == [{"uri": {"prefix": "/beta"}}]
    assert http[1]["match"] == [
        {"headers": {"user": {"exact": "beta"}}, "queryParams": {"v": {"exact": "2"}}}
    ]
    assert http[0]["route"] == http[1]["route"] == [{"destination": {"host": CANARY}}]
    assert http[2]["route"] == [{"destination": {"host": STABLE, "port": {"number": 80}}}]
    return True


async def vs_dr_weights(kube: KubeClient, ns: str) -> list[tuple[int, int]]:
    subsets = (await kube.get(DESTINATIONRULES, "echo-dr", ns))["spec"]["subsets"]
    assert subsets[-1] == {"name": "canary", "labels": {"istio.service.tag": "gray"}}  # upstream's built-in
    return await vs_weights(kube, ns)


async def user_grpc_weights(kube: KubeClient, ns: str) -> list[tuple[int, int]]:
    route = await kube.get(GRPCROUTES, "echo-grpc", ns)
    assert route["metadata"]["labels"]["example.com/routed-by"] == "user-script"
    weights = {ref["name"]: ref.get("weight") for ref in route["spec"]["rules"][0]["backendRefs"]}
    return [(weights[STABLE], weights[CANARY])]


async def user_grpc_matched(kube: KubeClient, ns: str) -> bool:
    rules = (await kube.get(GRPCROUTES, "echo-grpc", ns))["spec"]["rules"]
    assert rules[0]["matches"] == [{"headers": [{"type": "Exact", "name": "user", "value": "beta"}]}]
    assert [ref["name"] for ref in rules[0]["backendRefs"]] == [CANARY]
    return True


async def composite_weights(kube: KubeClient, ns: str) -> list[tuple[int, int]]:
    return [*(await vs_weights(kube, ns)), *(await ingress_weights(kube, ns))]


async def composite_matched(kube: KubeClient, ns: str) -> bool:
    return await vs_matched(kube, ns) and await ingress_matched(kube, ns)


VS_REF = {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "name": "echo-vs"}
GRPC_REF = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GRPCRoute", "name": "echo-grpc"}
DR_REF = {"apiVersion": "networking.istio.io/v1beta1", "kind": "DestinationRule", "name": "echo-dr"}

CASES = [
    Case(
        "httproute",
        [(HTTPROUTES, http_route())],
        {"service": STABLE, "gateway": {"httpRouteName": "echo-route"}},
        route_weights,
        route_matched,
    ),
    Case(
        "nginx-ingress",
        [(INGRESSES, stable_ingress())],
        {"service": STABLE, "ingress": {"name": "echo", "classType": "nginx"}},
        ingress_weights,
        ingress_matched,
    ),
    Case(
        "istio-vs-dr",
        [(VIRTUALSERVICES, virtual_service()), (DESTINATIONRULES, destination_rule())],
        {"service": STABLE, "customNetworkRefs": [VS_REF, DR_REF]},
        vs_dr_weights,
        vs_matched,
    ),
    Case(
        "custom-lua-grpcroute",
        [(GRPCROUTES, grpc_route())],
        {"service": STABLE, "customNetworkRefs": [GRPC_REF]},
        user_grpc_weights,
        user_grpc_matched,
        configmap={"lua.traffic.routing.GRPCRoute.gateway.networking.k8s.io": USER_GRPC_SCRIPT},
    ),
    Case(
        "composite-istio-ingress",
        [(VIRTUALSERVICES, virtual_service()), (INGRESSES, stable_ingress())],
        {"service": STABLE, "customNetworkRefs": [VS_REF], "ingress": {"name": "echo"}},
        composite_weights,
        composite_matched,
    ),
]
