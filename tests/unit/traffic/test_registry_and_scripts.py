"""Picking routers from a trafficRoutings entry, script lookup, the intent and report values."""

from __future__ import annotations

from typing import cast

import pytest

from kruise.core.errors import ProviderError
from kruise.core.kube import KubeClient
from kruise.traffic.composite import CompositeRouter
from kruise.traffic.custom_router import CustomRouter
from kruise.traffic.gateway_router import GatewayRouter
from kruise.traffic.ingress_router import IngressRouter
from kruise.traffic.intent import RouteReport, TrafficIntent, TrafficRouter
from kruise.traffic.registry import build_router, grace_period_seconds
from kruise.traffic.scripts import (
    StaticLuaSource,
    builtin_custom_script,
    builtin_ingress_script,
    custom_script,
    custom_script_key,
    ingress_script,
    ingress_script_key,
)

KUBE = cast(KubeClient, object())  # build_router does no I/O
VS_REF = {"apiVersion": "networking.istio.io/v1beta1", "kind": "VirtualService", "name": "vs"}


@pytest.mark.parametrize(
    ("ref", "kind"),
    [
        pytest.param({"service": "s", "ingress": {"name": "web"}}, IngressRouter, id="ingress"),
        pytest.param({"service": "s", "gateway": {"httpRouteName": "r"}}, GatewayRouter, id="gateway"),
        pytest.param({"service": "s", "customNetworkRefs": [VS_REF]}, CustomRouter, id="custom"),
        pytest.param(
            {"service": "s", "customNetworkRefs": [VS_REF], "ingress": {"name": "web"}},
            CompositeRouter,
            id="both",
        ),
    ],
)
def test_build_router_picks_the_provider(ref: dict[str, object], kind: type) -> None:
    router = build_router(KUBE, ref, "ns", StaticLuaSource())
    assert isinstance(router, kind)
    assert isinstance(router, TrafficRouter)


def test_composite_keeps_upstream_order() -> None:
    ref = {
        "service": "s",
        "gateway": {"httpRouteName": "r"},
        "ingress": {"name": "w"},
        "customNetworkRefs": [VS_REF],
    }
    router = build_router(KUBE, ref, "ns")
    assert isinstance(router, CompositeRouter)
    assert [type(r) for r in router.routers] == [CustomRouter, IngressRouter, GatewayRouter]


def test_ingress_class_defaults_to_nginx() -> None:
    router = build_router(KUBE, {"service": "s", "ingress": {"name": "web"}}, "ns")
    assert isinstance(router, IngressRouter)
    assert router.class_type == "nginx"
    assert router.canary_name == "web-canary"


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ({"service": "s"}, "only supports Ingress, Gateway API and CustomNetworkRefs"),
        ({"service": "s", "ingress": {}}, "Ingress cannot be empty"),
        ({"service": "s", "gateway": {}}, "name of HTTPRoute"),
        ({"service": "s", "customNetworkRefs": [{"kind": "X"}]}, "apiVersion, kind and name"),
    ],
)
def test_build_router_rejects_incomplete_entries(ref: dict[str, object], message: str) -> None:
    with pytest.raises(ProviderError, match=message):
        build_router(KUBE, ref, "ns")


@pytest.mark.parametrize(("value", "expected"), [(None, 3), (0, 0), (10, 10), (-1, 3)])
def test_grace_period_seconds(value: int | None, expected: int) -> None:
    assert grace_period_seconds({"gracePeriodSeconds": value}) == expected


def test_script_keys_follow_upstream() -> None:
    assert ingress_script_key("nginx") == "lua.traffic.routing.ingress.nginx"
    assert ingress_script_key("") == "lua.traffic.routing.ingress.nginx"
    assert custom_script_key("networking.istio.io/v1beta1", "VirtualService") == (
        "lua.traffic.routing.VirtualService.networking.istio.io"
    )


def test_builtin_scripts() -> None:
    assert builtin_ingress_script("nginx")
    assert builtin_ingress_script("aliyun-alb") is None
    assert builtin_ingress_script("../custom_router") is None
    assert builtin_custom_script("networking.istio.io/v1alpha3", "VirtualService")
    assert builtin_custom_script("networking.istio.io/v1", "DestinationRule")
    assert builtin_custom_script("apisix.apache.org/v2", "ApisixRoute") is None


async def test_ingress_configmap_script_wins_over_builtin() -> None:
    """Upstream ``ingressController.getTrafficRoutingIngressLuaScript``: the ConfigMap key
    ``lua.traffic.routing.ingress.<classType>`` first, then the built-in class script."""
    source = StaticLuaSource({"lua.traffic.routing.ingress.nginx": "return {mine = 'ingress'}"})
    assert await ingress_script(source, "nginx") == "return {mine = 'ingress'}"
    empty = StaticLuaSource()
    assert await ingress_script(empty, "nginx") == builtin_ingress_script("nginx")
    with pytest.raises(ProviderError, match="higress lua script is not found"):
        await ingress_script(empty, "higress")


async def test_builtin_custom_script_wins_over_configmap() -> None:
    """Upstream ``customController.getLuaScript`` (custom_network_provider.go:307): the built-in
    ``lua_configuration/<group>/<Kind>/trafficRouting.lua`` first; the ConfigMap key
    ``lua.traffic.routing.<Kind>.<group>`` only for kinds without one."""
    source = StaticLuaSource(
        {
            "lua.traffic.routing.VirtualService.networking.istio.io": "return obj.data",
            "lua.traffic.routing.DestinationRule.networking.istio.io": "return obj.data",
            "lua.traffic.routing.ApisixRoute.apisix.apache.org": "return obj.data",
        }
    )
    vs = await custom_script(source, "networking.istio.io/v1", "VirtualService")
    assert vs == builtin_custom_script("networking.istio.io/v1", "VirtualService") != "return obj.data"
    dr = await custom_script(source, "networking.istio.io/v1alpha3", "DestinationRule")
    assert dr == builtin_custom_script("networking.istio.io/v1alpha3", "DestinationRule")
    assert await custom_script(source, "apisix.apache.org/v2", "ApisixRoute") == "return obj.data"
    with pytest.raises(ProviderError, match=r"^expected script not found neither locally nor in ConfigMap$"):
        await custom_script(StaticLuaSource(), "apisix.apache.org/v2", "ApisixRoute")


def test_intent_from_the_engine_dict() -> None:
    intent = TrafficIntent.from_dict(
        {
            "namespace": "ns",
            "routing": {"service": "echo"},
            "stableService": "echo",
            "canaryService": "echo-canary",
            "weight": 20,
            "matches": [{"headers": [{"name": "a", "value": "b"}]}],
            "requestHeaderModifier": None,
            "stableRevision": "v1",
            "canaryRevision": "v2",
            "revisionLabelKey": "pod-template-hash",
        }
    )
    assert intent == TrafficIntent(
        namespace="ns",
        stable_service="echo",
        canary_service="echo-canary",
        weight=20,
        matches=({"headers": [{"name": "a", "value": "b"}]},),
        revision_key="pod-template-hash",
        stable_revision="v1",
        canary_revision="v2",
    )
    assert intent.routes_traffic
    assert not TrafficIntent("ns", "a", "b").routes_traffic


def test_intent_rejects_weights_outside_a_percentage() -> None:
    with pytest.raises(ValueError, match=r"0\.\.100"):
        TrafficIntent("ns", "a", "b", weight=101)


def test_reports_combine() -> None:
    done = RouteReport.unchanged("a")
    wrote = RouteReport.applied("b")
    assert RouteReport.combine([done, done]) == RouteReport(True, "a; a", False)
    assert RouteReport.combine([done, wrote]) == RouteReport(False, "a; b", True)
    assert RouteReport.combine([done, RouteReport.waiting("c")]) == RouteReport(False, "a; c", False)
