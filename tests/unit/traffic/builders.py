"""Small builders of the network objects the traffic tests feed to the pure transforms."""

from __future__ import annotations

from typing import Any

from kruise.traffic.intent import TrafficIntent

JSON = dict[str, Any]
STABLE = "echo"
CANARY = "echo-canary"


def intent(
    weight: int | None = None,
    matches: list[JSON] | None = None,
    modifier: JSON | None = None,
    *,
    stable: str = STABLE,
    canary: str = CANARY,
    **kw: Any,
) -> TrafficIntent:
    return TrafficIntent(
        namespace="ns",
        stable_service=stable,
        canary_service=canary,
        weight=weight,
        matches=tuple(matches or ()),
        request_header_modifier=modifier,
        **kw,
    )


def ref(name: str, weight: int | None = None, port: int = 80, **extra: Any) -> JSON:
    """A backendRef as the API server returns it (defaults filled in)."""
    out: JSON = {"group": "", "kind": "Service", "name": name, "port": port, **extra}
    if weight is not None:
        out["weight"] = weight
    return out


def rule(*refs: JSON, path: str = "/", **extra: Any) -> JSON:
    return {
        "matches": [{"path": {"type": "PathPrefix", "value": path}}],
        "backendRefs": list(refs),
        **extra,
    }


def header(name: str, value: str, type_: str | None = "Exact") -> JSON:
    out = {"name": name, "value": value}
    if type_:
        out["type"] = type_
    return out


def ingress(
    name: str = "web", *paths: tuple[str, str], host: str = "web.example.com", **annotations: str
) -> JSON:
    """An Ingress with one rule of ``(path, service)`` pairs."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": name, "namespace": "ns", "annotations": dict(annotations)},
        "spec": {
            "ingressClassName": "nginx",
            "rules": [
                {
                    "host": host,
                    "http": {
                        "paths": [
                            {
                                "path": p,
                                "pathType": "Prefix",
                                "backend": {"service": {"name": svc, "port": {"number": 80}}},
                            }
                            for p, svc in paths
                        ]
                    },
                }
            ],
        },
    }


def virtual_service(*http: JSON, **meta: Any) -> JSON:
    return {
        "apiVersion": "networking.istio.io/v1",
        "kind": "VirtualService",
        "metadata": {"name": "vs", "namespace": "ns", "resourceVersion": "7", **meta},
        "spec": {"hosts": ["echo"], "http": list(http)},
    }


def destination(host: str, weight: int | None = None, subset: str | None = None) -> JSON:
    out: JSON = {"destination": {"host": host}}
    if subset:
        out["destination"]["subset"] = subset
    if weight is not None:
        out["weight"] = weight
    return out
