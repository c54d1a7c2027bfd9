"""Checks shared by the v1alpha1 and v1beta1 Rollout validation.

Mirrors ``pkg/util/controller_finder.go`` (``IsSupportedWorkload``, which compares group and
kind only) and ``validateRolloutSpecCanaryTraffic``, whose rules and messages are the same in
both versions. Values arrive in wire form (camelCase dicts), so one function serves both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.rollouts.admission.gorender import Struct, render
from kruise.workloads.admission.fielderrors import FieldError, invalid
from kruise.workloads.admission.intstr import get_scaled_value

__all__ = [
    "BLUE_GREEN_WORKLOADS",
    "KNOWN_WORKLOADS",
    "group_kind",
    "is_supported_workload",
    "scaled_percent",
    "traffic_routing_errors",
]

KNOWN_WORKLOADS: frozenset[tuple[str, str]] = frozenset(
    {
        ("apps", "ReplicaSet"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("apps.kruise.io", "CloneSet"),
        ("apps.kruise.io", "StatefulSet"),
        ("apps.kruise.io", "DaemonSet"),
    }
)
"""(group, kind) of the workloads a Rollout may reference (``knownWorkloadGVKs``; any version)."""

BLUE_GREEN_WORKLOADS: frozenset[tuple[str, str]] = frozenset(
    {("apps", "Deployment"), ("apps.kruise.io", "CloneSet")}
)
"""(group, kind) allowed with a blue-green strategy (``blueGreenSupportWorkloadGVKs``)."""


def group_kind(api_version: str, kind: str) -> tuple[str, str]:
    """``schema.FromAPIVersionAndKind`` reduced to (group, kind).

    ``""``/``"/"`` and ``"v1"`` have no group; ``"g/v"`` has group ``g``; more than one ``/`` is
    a parse error, for which Go keeps only the kind.
    """
    if api_version in ("", "/"):
        return "", kind
    slashes = api_version.count("/")
    if slashes == 0:
        return "", kind
    if slashes == 1:
        return api_version.split("/", 1)[0], kind
    return "", kind


def is_supported_workload(api_version: str, kind: str, *, filter_workload_type: bool = True) -> bool:
    """``IsSupportedWorkload``: true for a known (group, kind), or always when filtering is off.

    ``filter_workload_type=False`` mirrors kruise-rollout's ``--filter-workload-type=false``.
    """
    if not filter_workload_type:
        return True
    return group_kind(api_version, kind) in KNOWN_WORKLOADS


def scaled_percent(value: Any) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(value, 100, true)``; raises ``IntOrStringError``."""
    return get_scaled_value(value, 100, True)


def traffic_routing_errors(
    ref: Mapping[str, Any], path: str, *, ingress_type: Struct, gateway_type: Struct
) -> list[FieldError]:
    """``validateRolloutSpecCanaryTraffic`` for one ``trafficRoutings[]`` entry (wire form).

    All rules are reported, in upstream's order: negative grace period, empty service, no
    provider at all (ingress, gateway and customNetworkRefs all absent; an empty list counts as
    set, as a non-nil Go slice does), ingress without name, gateway without httpRouteName.
    """
    errors: list[FieldError] = []
    service = ref.get("service") or ""
    grace = ref.get("gracePeriodSeconds") or 0
    ingress, gateway = ref.get("ingress"), ref.get("gateway")
    if grace < 0:
        errors.append(
            invalid(
                f"{path}.GracePeriodSeconds", service, "TrafficRouting.GracePeriodSeconds cannot be negative"
            )
        )
    if not service:
        errors.append(invalid(f"{path}.Service", service, "TrafficRouting.Service cannot be empty"))
    if gateway is None and ingress is None and ref.get("customNetworkRefs") is None:
        errors.append(invalid(f"{path}.TrafficRoutings", None, "TrafficRoutings are not set"))
    if ingress is not None and not ingress.get("name"):
        errors.append(
            invalid(
                f"{path}.Ingress",
                render(ingress_type, ingress),
                "TrafficRouting.Ingress.Ingress cannot be empty",
            )
        )
    if gateway is not None and not gateway.get("httpRouteName"):
        errors.append(
            invalid(
                f"{path}.Gateway",
                render(gateway_type, gateway),
                "TrafficRouting.Gateway must set the name of HTTPRoute or HTTPsRoute",
            )
        )
    return errors
