"""The pod webhook's scope keeper: woken by SidecarSet spec changes only, and the CEL condition
built again only when a SidecarSet's (uid, generation) moved."""

from __future__ import annotations

import copy
from typing import Any

from kruise.core.informer import Delta, EventType
from kruise.workloads.sidecarset import podscope
from kruise.workloads.sidecarset.podscope import PodWebhookScope, pod_conditions, spec_changed
from tests.unit.sidecarset.builders import sidecarset


def test_status_writes_do_not_wake_the_scope() -> None:
    old = sidecarset("log")
    status_only = copy.deepcopy(old)
    status_only["status"] = {"matchedPods": 3}
    status_only["metadata"]["resourceVersion"] = "8"
    respec = copy.deepcopy(old)
    respec["metadata"]["generation"] = 2
    assert not spec_changed(Delta(EventType.MODIFIED, status_only, old))
    assert spec_changed(Delta(EventType.MODIFIED, respec, old))
    assert spec_changed(Delta(EventType.ADDED, old, None))
    assert spec_changed(Delta(EventType.DELETED, old, old))


def test_the_condition_is_rebuilt_only_when_a_generation_moves(monkeypatch: Any) -> None:
    calls: list[int] = []

    def counted(sidecarsets: Any, also: Any = ()) -> Any:
        calls.append(1)
        return pod_conditions(sidecarsets, also)

    monkeypatch.setattr(podscope, "pod_conditions", counted)
    current = [sidecarset("log")]
    scope = PodWebhookScope(None, lambda: current)  # type: ignore[arg-type]
    first = scope.wanted()
    status_write = copy.deepcopy(current[0])
    status_write["status"] = {"matchedPods": 1}
    current = [status_write]
    assert scope.wanted() == first
    assert len(calls) == 1
    respec = copy.deepcopy(status_write)
    respec["metadata"]["generation"] = 2
    respec["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    current = [respec]
    assert scope.wanted() != first
    assert len(calls) == 2
    current = []
    assert scope.wanted() == pod_conditions([])


def test_term_sources_add_their_objects_terms_and_are_watched() -> None:
    from kruise.core.kube.resources import Resource
    from kruise.workloads.sidecarset.podscope import TermSource

    things = Resource("example.io", "v1", "things", "Thing")
    current: list[dict[str, Any]] = []
    source = TermSource(
        things, lambda: current, lambda objs: [f"(n == '{o['metadata']['name']}')" for o in objs]
    )
    scope = PodWebhookScope(None, lambda: [], also=("(fixed)",), sources=(source,))  # type: ignore[arg-type]
    assert [c.expression for c in scope.wanted()] == ["(fixed)"]
    current = [{"metadata": {"name": "a", "uid": "u1", "generation": 1}}]
    assert [c.expression for c in scope.wanted()] == ["(fixed) || (n == 'a')"]  # rebuilt: a new object
    current = []
    assert [c.expression for c in scope.wanted()] == ["(fixed)"]
    assert {w.resource for w in scope.spec().watches} >= {things}
