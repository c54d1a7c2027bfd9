"""Which pods a SidecarSet selects (pure; ``sidecarcontrol.PodMatchedSidecarSet``).

A pod matches when all hold:

- ``spec.namespace`` is empty or the pod's namespace (an empty pod namespace reads ``default``);
- ``spec.namespaceSelector`` is unset or matches the labels of the pod's namespace (a namespace
  the caller cannot find matches no selector);
- ``spec.selector`` is set, not empty, and matches the pod's labels (an empty selector selects
  nothing here, unlike a Deployment's; the webhook refuses it anyway).

A malformed selector matches nothing, as upstream's selector conversion errors do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.workloads.objects import KubeObject, labels, mapping, namespace, spec
from kruise.workloads.selector import SelectorError, selector_matches

__all__ = ["matches_labels", "namespace_matches", "pod_matches", "pod_namespace"]


def pod_namespace(pod: KubeObject) -> str:
    """The pod's namespace, ``default`` when empty (as upstream)."""
    return namespace(pod) or "default"


def matches_labels(selector: Any, values: Mapping[str, str]) -> bool:
    """``selector`` (a LabelSelector dict) is set, non-empty and matches ``values``."""
    if not isinstance(selector, Mapping) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        return False
    try:
        return selector_matches(selector, values)
    except SelectorError:
        return False


def namespace_matches(
    sidecarset: KubeObject, pod_ns: str, namespace_labels: Mapping[str, str] | None
) -> bool:
    """The SidecarSet's ``namespace``/``namespaceSelector`` admit ``pod_ns``.

    ``namespace_labels`` are the labels of ``pod_ns`` (``None``: the namespace is unknown).
    """
    body = spec(sidecarset)
    wanted = body.get("namespace")
    if wanted and wanted != pod_ns:
        return False
    selector = body.get("namespaceSelector")
    if selector is None:
        return True
    if namespace_labels is None:
        return False
    try:
        return selector_matches(mapping(selector), namespace_labels)
    except SelectorError:
        return False


def pod_matches(sidecarset: KubeObject, pod: KubeObject, namespace_labels: Mapping[str, str] | None) -> bool:
    """Whether ``sidecarset`` selects ``pod`` (see the module docstring)."""
    if not namespace_matches(sidecarset, pod_namespace(pod), namespace_labels):
        return False
    return matches_labels(spec(sidecarset).get("selector"), labels(pod))
