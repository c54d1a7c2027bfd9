"""Which nodes a DaemonSet's pod belongs on (pure): taints, tolerations, node selectors, affinity.

Mirrors what the native DaemonSet controller and OpenKruise's Advanced DaemonSet decide
(``nodeShouldRunDaemonPod`` / ``Predicates``, v1.8):

- the pod considered is the template's, with the *default daemon tolerations* added
  (:func:`daemon_pod_spec`, ``AddOrUpdateDaemonPodTolerations``): ``node.kubernetes.io/not-ready``
  and ``/unreachable`` (NoExecute), ``/disk-pressure``, ``/memory-pressure``, ``/pid-pressure``,
  ``/unschedulable`` (NoSchedule) and, with ``hostNetwork``, ``/network-unavailable``; so a
  cordoned node still runs daemons, as it does in Kubernetes;
- a node *fits* when ``spec.nodeName`` (if set) names it, ``spec.nodeSelector`` and the required
  node affinity match it (``nodeaffinity.GetRequiredNodeAffinity``) and no NoSchedule/NoExecute
  taint is left untolerated; a node that fits should run the pod;
- a node that does not fit only because of taints keeps an existing pod unless one of those
  untolerated taints is NoExecute (``shouldContinueRunning``);
- pods are pinned to their node by node affinity on ``metadata.name``
  (:func:`~kruise.workloads.nodepredicates.pin_to_node`) so kube-scheduler binds them, or by
  ``spec.nodeName`` when ``--assign-pods-by-scheduler=false``;
  :func:`~kruise.workloads.nodepredicates.target_node` reads it back.

Taints' ``PreferNoSchedule`` effect never keeps a daemon off a node. The selector, affinity and
taint predicates are :mod:`kruise.workloads.nodepredicates`, shared with the BroadcastJob.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.workloads.nodepredicates import (
    NO_EXECUTE,
    NO_SCHEDULE,
    add_toleration,
    node_affinity_matches,
    untolerated_taints,
)
from kruise.workloads.objects import KubeObject, mapping, name, sequence, spec

DAEMON_TOLERATIONS: tuple[tuple[str, str], ...] = (
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
)
"""``(key, effect)`` of the tolerations (operator ``Exists``) every daemon pod gets."""
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", NO_SCHEDULE)
"""Added as well for ``hostNetwork`` pods."""


@dataclass(frozen=True)
class NodeFit:
    """``nodeShouldRunDaemonPod``: should a pod be created here, may an existing one stay."""

    should_run: bool
    should_continue_running: bool


def daemon_pod_spec(pod_spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``pod_spec`` with the default daemon tolerations (``AddOrUpdateDaemonPodTolerations``)."""
    out: dict[str, Any] = copy.deepcopy(dict(pod_spec))
    wanted = list(DAEMON_TOLERATIONS)
    if out.get("hostNetwork"):
        wanted.append(NETWORK_UNAVAILABLE)
    tolerations: list[dict[str, Any]] = [dict(mapping(t)) for t in sequence(out.get("tolerations"))]
    for key, effect in wanted:
        tolerations = add_toleration(tolerations, {"key": key, "operator": "Exists", "effect": effect})
    out["tolerations"] = tolerations
    return out


def node_fit(pod_spec: Mapping[str, Any], node: KubeObject) -> NodeFit:
    """``nodeShouldRunDaemonPod`` for a daemon pod spec (see :func:`daemon_pod_spec`)."""
    node_name = str(pod_spec.get("nodeName") or "")
    if node_name and node_name != name(node):
        return NodeFit(False, False)
    if not node_affinity_matches(pod_spec, node):
        return NodeFit(False, False)
    taints = sequence(spec(node).get("taints"))
    tolerations = sequence(pod_spec.get("tolerations"))
    blocking = untolerated_taints(taints, tolerations, (NO_SCHEDULE, NO_EXECUTE))
    if not blocking:
        return NodeFit(True, True)
    return NodeFit(False, not any(t.get("effect") == NO_EXECUTE for t in blocking))
