"""PersistentPodState's validating webhook and its pod webhook step, over a fake informer cache."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.workloads.api.persistentpodstate import INJECTED_ANNOTATION, PERSISTENTPODSTATES
from kruise.workloads.persistentpodstate.webhooks import PersistentPodStateWebhooks, PpsPodMutator
from kruise.workloads.podwebhook import PodWebhook

ZONE = "topology.kubernetes.io/zone"
STS = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"}


class _Cache:
    def __init__(self, *objs: dict[str, Any]) -> None:
        self.objs = list(objs)

    def get(self, *args: Any) -> None:
        return None

    def by_index(self, *args: Any) -> list[Any]:
        return []

    def list(self, resource: Any) -> list[dict[str, Any]]:
        assert resource == PERSISTENTPODSTATES
        return self.objs


def _pps(name: str = "web", ns: str = "ns") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": ns},
        "spec": {"targetRef": dict(STS), "requiredPersistentTopology": {"nodeTopologyKeys": [ZONE]}},
        "status": {
            "observedGeneration": 1,
            "podStates": {"web-0": {"nodeName": "n1", "nodeTopologyLabels": {ZONE: "z1"}}},
        },
    }


def _req(operation: str, obj: dict[str, Any], old: dict[str, Any] | None = None) -> AdmissionRequest:
    return AdmissionRequest("u", operation, "", "ns", None, obj, old, False, "me", {})


def _run(coro: Any) -> AdmissionResponse:
    return asyncio.run(coro)  # type: ignore[no-any-return]


def test_validating_refuses_second_pps_on_the_same_statefulset() -> None:
    hooks = PersistentPodStateWebhooks(_Cache(_pps("first")))  # type: ignore[arg-type]
    answer = _run(hooks.validate(_req("CREATE", _pps("second"))))
    assert not answer.allowed and answer.code == 400
    assert answer.message.endswith("targetReference is in conflict with other PersistentPodState first")
    assert _run(hooks.validate(_req("CREATE", _pps("first")))).allowed
    other_ns = PersistentPodStateWebhooks(_Cache(_pps("first", ns="elsewhere")))  # type: ignore[arg-type]
    assert _run(other_ns.validate(_req("CREATE", _pps("second")))).allowed


def _pod(name: str, owner: dict[str, Any] | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns"}
    if owner is not None:
        meta["ownerReferences"] = [{**owner, "uid": "1", "controller": True}]
    return {"metadata": meta, "spec": {"containers": [{"name": "c", "image": "i"}]}, "status": {}}


def test_pod_chain_injects_recorded_zone_as_node_selector() -> None:
    chain = PodWebhook([PpsPodMutator(_Cache(_pps()))])  # type: ignore[arg-type]
    answer = _run(chain.mutate(_req("CREATE", _pod("web-0", STS))))
    assert answer.allowed
    assert {"op": "add", "path": "/spec/nodeSelector", "value": {ZONE: "z1"}} in answer.patch
    assert any(
        p["path"] == "/metadata/annotations" and p["value"] == {INJECTED_ANNOTATION: "web"}
        for p in answer.patch
    )


def test_pod_mutator_leaves_other_pods_alone() -> None:
    mutator = PpsPodMutator(_Cache(_pps()))  # type: ignore[arg-type]
    for pod in (
        _pod("web-1", STS),  # no state recorded
        _pod("web-0", {**STS, "kind": "Deployment"}),
        _pod("web-0", {**STS, "name": "db"}),
        _pod("web-0", None),
    ):
        before = copy.deepcopy(pod)
        assert not asyncio.run(mutator.mutate(pod, _req("CREATE", pod)))
        assert pod == before
    kruise_owned = _pod("web-0", {**STS, "apiVersion": "apps.kruise.io/v1beta1"})
    assert not asyncio.run(mutator.mutate(kruise_owned, _req("CREATE", kruise_owned)))  # other group


def test_the_pod_webhook_scope_names_each_persistentpodstates_statefulset() -> None:
    from kruise.workloads.persistentpodstate.webhooks import ANY_STATEFULSET_POD, pod_terms

    def pps(ns: str, name: str, kind: str = "StatefulSet") -> dict[str, Any]:
        ref = {"apiVersion": "apps/v1", "kind": kind, "name": name}
        return {"metadata": {"namespace": ns, "name": name}, "spec": {"targetRef": ref}}

    (term,) = pod_terms([pps("shop", "db")])
    assert term.startswith("(request.namespace == 'shop' && ")
    assert "r.kind == 'StatefulSet' && r.name == 'db'" in term
    assert pod_terms([]) == [] and pod_terms([pps("shop", "db", kind="Deployment")]) == []
    assert pod_terms([pps("shop", "db"), pps("shop", "db")]) == [term]  # one term per StatefulSet
    assert pod_terms([pps("shop", "x' || true || '")]) == [ANY_STATEFULSET_POD]  # never injected
