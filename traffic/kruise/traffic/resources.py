"""Descriptors of the third-party network kinds the traffic routers read and write.

The versions are the storage versions of the CRDs kruise is tested with
(``hack/crds``: Gateway API v1.6.1 serves HTTPRoute ``v1``/``v1beta1``; Istio 1.30 serves
VirtualService/DestinationRule ``v1``/``v1beta1``/``v1alpha3``). A ``customNetworkRefs`` entry
names its own ``apiVersion``; :func:`known_resource` maps the kinds we know to their plural and
anything else is resolved through API discovery by the custom router.
"""

from __future__ import annotations

from kruise.core.kube.resources import CONFIGMAPS, INGRESSES, SERVICES, Resource

HTTPROUTES = Resource("gateway.networking.k8s.io", "v1", "httproutes", "HTTPRoute")
VIRTUALSERVICES = Resource("networking.istio.io", "v1", "virtualservices", "VirtualService")
DESTINATIONRULES = Resource("networking.istio.io", "v1", "destinationrules", "DestinationRule")

__all__ = [
    "CONFIGMAPS",
    "DESTINATIONRULES",
    "HTTPROUTES",
    "INGRESSES",
    "SERVICES",
    "VIRTUALSERVICES",
    "known_resource",
    "split_api_version",
]

_KNOWN_PLURALS = {
    ("gateway.networking.k8s.io", "HTTPRoute"): "httproutes",
    ("networking.istio.io", "VirtualService"): "virtualservices",
    ("networking.istio.io", "DestinationRule"): "destinationrules",
    ("networking.k8s.io", "Ingress"): "ingresses",
    ("", "Service"): "services",
}


def split_api_version(api_version: str) -> tuple[str, str]:
    """``"networking.istio.io/v1"`` -> ``("networking.istio.io", "v1")``; ``"v1"`` -> ``("", "v1")``."""
    group, _, version = api_version.rpartition("/")
    return group, version


def known_resource(api_version: str, kind: str) -> Resource | None:
    """The namespaced Resource for a kind we know, at the ``apiVersion`` the reference names."""
    group, version = split_api_version(api_version)
    plural = _KNOWN_PLURALS.get((group, kind))
    if plural is None or not version:
        return None
    return Resource(group, version, plural, kind)
