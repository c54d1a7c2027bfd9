"""Which pods a SidecarSet selects (pure; ``sidecarcontrol.PodMatchedSidecarSet``).

A pod matches when all hold:

- ``spec.namespace`` is empty or the pod's namespace (an empty pod namespace reads ``default``);
- ``spec.namespaceSelector`` is unset or matches the labels of the pod's namespace (a namespace
  the caller cannot find matches no selector);
- ``spec.selector`` is set, not empty, and matches the pod's labels (an empty selector selects
  nothing here, unlike a Deployment's; the webhook refuses it anyway).

A malformed selector matches nothing, as upstream's selector conversion errors do.

:class:`SidecarSetMatcher` (:func:`sidecarset_matcher`) is :func:`pod_matches` with the
SidecarSet's selectors parsed once, for the webhook (every SidecarSet per pod) and the controller
(every injected pod per SidecarSet).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.workloads.objects import KubeObject, labels, mapping, namespace, spec
from kruise.workloads.selector import CompiledSelector, SelectorError, compile_selector, selector_matches

__all__ = [
    "SidecarSetMatcher",
    "matches_labels",
    "namespace_matches",
    "pod_matches",
    "pod_namespace",
    "sidecarset_matcher",
]


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


_NOTHING = CompiledSelector((), (("", "In", frozenset()),))  # no label map satisfies it


def _compiled(selector: Any, *, empty_matches: bool) -> CompiledSelector:
    if not isinstance(selector, Mapping):
        return _NOTHING
    if not empty_matches and not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return _NOTHING
    try:
        return compile_selector(selector)
    except SelectorError:
        return _NOTHING


@dataclass(frozen=True)
class SidecarSetMatcher:
    """:func:`pod_matches` for one SidecarSet, its selectors parsed once."""

    namespace: str  # spec.namespace ("" for any)
    namespace_selector: CompiledSelector | None  # None: unset
    selector: CompiledSelector

    def __call__(self, pod: KubeObject, namespace_labels: Mapping[str, str] | None) -> bool:
        if self.namespace and self.namespace != pod_namespace(pod):
            return False
        if self.namespace_selector is not None and (
            namespace_labels is None or not self.namespace_selector(namespace_labels)
        ):
            return False
        return self.selector(labels(pod))


def sidecarset_matcher(sidecarset: KubeObject) -> SidecarSetMatcher:
    """The :class:`SidecarSetMatcher` of ``sidecarset``."""
    body = spec(sidecarset)
    ns_selector = body.get("namespaceSelector")
    return SidecarSetMatcher(
        namespace=str(body.get("namespace") or ""),
        namespace_selector=None
        if ns_selector is None
        else _compiled(mapping(ns_selector), empty_matches=True),
        selector=_compiled(body.get("selector"), empty_matches=False),
    )
