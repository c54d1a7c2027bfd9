"""Which nodes a BroadcastJob's pod may run on (pure): upstream's ``checkNodeFitness``.

A node is eligible for the job's pod (the template's spec with ``nodeName`` set to the node, as
``NewMockPod`` builds it) when, in upstream's order:

1. the pod's ``spec.nodeName``, if set, names the node (``PodFitsHost``);
2. ``nodeSelector`` and the required node affinity match it (``PodMatchNodeSelector``);
3. no ``NoSchedule``/``NoExecute`` taint is left untolerated (``PodToleratesNodeTaints``);
4. the node is not ``spec.unschedulable``, unless the pod tolerates the
   ``node.kubernetes.io/unschedulable:NoSchedule`` taint (``CheckNodeUnschedulable``);
5. the pod's requests fit the node's ``status.allocatable`` with no other pod counted
   (``noderesources.Fits`` on an empty NodeInfo): one pod slot, and each requested resource.

Unlike a daemon pod, the job's pod gets no default tolerations: a cordoned or not-ready node is
not eligible. Each function returns the reason a node does not fit (upstream's wording of the
scheduler plugin, for logs) or ``None`` when it fits.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from kruise.workloads.admission.quantity import quantity_value
from kruise.workloads.nodepredicates import (
    NO_EXECUTE,
    NO_SCHEDULE,
    node_affinity_matches,
    tolerates,
    untolerated_taints,
)
from kruise.workloads.objects import KubeObject, mapping, name, sequence, spec

__all__ = ["UNSCHEDULABLE_TAINT", "node_misfit", "pod_requests"]

UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": NO_SCHEDULE}


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, Decimal]:
    """Resource name -> requested amount: the sum over containers, raised to any init container's
    own request (``resource.PodRequests`` without overhead accounting for sidecars); plus
    ``spec.overhead``."""
    total: dict[str, Decimal] = {}
    for container in sequence(pod_spec.get("containers")):
        for res, qty in mapping(mapping(mapping(container).get("resources")).get("requests")).items():
            value = quantity_value(qty)
            if value is not None:
                total[res] = total.get(res, Decimal(0)) + value
    for container in sequence(pod_spec.get("initContainers")):
        for res, qty in mapping(mapping(mapping(container).get("resources")).get("requests")).items():
            value = quantity_value(qty)
            if value is not None and value > total.get(res, Decimal(0)):
                total[res] = value
    for res, qty in mapping(pod_spec.get("overhead")).items():
        value = quantity_value(qty)
        if value is not None:
            total[res] = total.get(res, Decimal(0)) + value
    return total


def _resources_misfit(pod_spec: Mapping[str, Any], node: KubeObject) -> str | None:
    """A node's allocatable amount absent counts as 0, as in the scheduler's NodeInfo (so a node
    without ``allocatable.pods`` fits no pod)."""
    allocatable = mapping(mapping(node.get("status")).get("allocatable"))
    if (quantity_value(allocatable.get("pods")) or 0) < 1:
        return "Too many pods"
    for res, wanted in sorted(pod_requests(pod_spec).items()):
        if wanted > 0 and wanted > (quantity_value(allocatable.get(res)) or 0):
            return f"Insufficient {res}"
    return None


def node_misfit(pod_spec: Mapping[str, Any], node: KubeObject) -> str | None:
    """Why ``node`` cannot run a pod of ``pod_spec`` (``checkNodeFitness``), ``None`` if it can."""
    node_name = str(pod_spec.get("nodeName") or "")
    if node_name and node_name != name(node):
        return "node(s) didn't match the requested node name"
    if not node_affinity_matches(pod_spec, node):
        return "node(s) didn't match Pod's node affinity/selector"
    tolerations = sequence(pod_spec.get("tolerations"))
    blocking = untolerated_taints(sequence(spec(node).get("taints")), tolerations, (NO_SCHEDULE, NO_EXECUTE))
    if blocking:
        taint = blocking[0]
        key, value = taint.get("key"), taint.get("value") or ""
        return f"node(s) had taint {{{key}: {value}}}, that the pod didn't tolerate"
    if spec(node).get("unschedulable") and not any(
        tolerates(mapping(t), UNSCHEDULABLE_TAINT) for t in tolerations
    ):
        return "node(s) were unschedulable"
    return _resources_misfit(pod_spec, node)
