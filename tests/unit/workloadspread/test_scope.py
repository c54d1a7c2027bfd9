"""Which pod deletions and evictions reach WorkloadSpread's step of the validating pod webhook:
``vpod.kb.io`` only for DELETEs of pods carrying the matched annotation (OR'ed with the budget
check's pods), ``vpodeviction.kb.io`` only in namespaces holding a WorkloadSpread or a PUB."""

from __future__ import annotations

from typing import Any

from kruise.core.webhook.configuration import ClientTarget, build_configuration
from kruise.rollouts.manager.options import FEATURE_GATES, ManagerOptions
from kruise.rollouts.manager.webhooks import webhook_specs
from kruise.workloads.podunavailablebudget.scope import PROTECTED_POD
from kruise.workloads.podwebhook import VALIDATED_POD, ValidatingScope, merge_scopes
from kruise.workloads.workloadspread.podstep import WS_DELETED_POD, pod_terms

JSON = dict[str, Any]


def validating(pubs: Any = (), wss: Any = (), **gates: bool) -> dict[str, JSON]:
    opts = ManagerOptions(leader_election_namespace="kruise-ops", feature_gates={**FEATURE_GATES, **gates})
    config = build_configuration(
        webhook_specs(opts, (), pubs, (), wss),
        mutating=False,
        target=ClientTarget(url_base="https://127.0.0.1:9876"),
        ca_bundle="",
    )
    return {h["name"]: h for h in config["webhooks"]}


def obj(ns: str, name: str = "x") -> JSON:
    return {"metadata": {"name": name, "namespace": ns}}


def test_workloadspread_alone_sends_deletions_of_its_pods_and_evictions_in_its_namespaces() -> None:
    hooks = validating(wss=[obj("shop"), obj("bank")], PodUnavailableBudgetDeleteGate=False)
    pod = hooks["vpod.kb.io"]
    assert pod["rules"][0]["operations"] == ["DELETE"]
    assert pod["matchConditions"] == [WS_DELETED_POD.to_dict()]
    assert "'apps.kruise.io/matched-workloadspread' in oldObject" in WS_DELETED_POD.expression
    assert WS_DELETED_POD.expression.startswith("request.operation == 'DELETE' && ")
    eviction = hooks["vpodeviction.kb.io"]
    assert eviction["matchConditions"][0]["expression"] == "request.namespace in ['bank', 'shop']"


def test_with_the_budget_check_conditions_are_ored_and_namespaces_united() -> None:
    hooks = validating(pubs=[obj("bank")], wss=[obj("shop")], PodUnavailableBudgetUpdateGate=True)
    pod = hooks["vpod.kb.io"]
    assert pod["rules"][0]["operations"] == ["UPDATE", "DELETE"]
    assert pod["matchConditions"] == [
        {
            "name": VALIDATED_POD,
            "expression": f"(({PROTECTED_POD.expression})) || (({WS_DELETED_POD.expression}))",
        }
    ]
    eviction = hooks["vpodeviction.kb.io"]
    assert eviction["matchConditions"][0]["expression"] == "request.namespace in ['bank', 'shop']"


def test_gate_off_leaves_only_the_budget_check() -> None:
    hooks = validating(pubs=[obj("bank")], wss=[obj("shop")], WorkloadSpread=False)
    assert hooks["vpod.kb.io"]["matchConditions"] == [PROTECTED_POD.to_dict()]
    assert hooks["vpodeviction.kb.io"]["matchConditions"][0]["expression"] == "request.namespace in ['bank']"
    off = validating(WorkloadSpread=False, PodUnavailableBudgetDeleteGate=False)
    assert "vpod.kb.io" not in off and "vpodeviction.kb.io" not in off


def test_merge_keeps_a_lone_scope_and_a_scope_without_pod_operations_adds_none() -> None:
    only_evictions = ValidatingScope(eviction_namespaces=frozenset({"a"}))
    pods = ValidatingScope(("DELETE",), (WS_DELETED_POD,), None)
    assert merge_scopes(None, pods) is pods
    assert merge_scopes(None, None) is None
    merged = merge_scopes(only_evictions, pods)
    assert merged == ValidatingScope(("DELETE",), (WS_DELETED_POD,), frozenset({"a"}))


def test_pod_terms_send_a_custom_targets_namespace_every_controlled_pod() -> None:
    """A custom white-listed target's pods may be owned through its sub-resources (upstream walks
    up the owners), so its term takes any controlled pod of the namespace; a built-in target's
    only the pods its own controller (a Deployment's: its ReplicaSets) owns."""

    def ws(ns: str, api_version: str, kind: str, name: str) -> JSON:
        target = {"apiVersion": api_version, "kind": kind, "name": name}
        return {"metadata": {"name": "s", "namespace": ns}, "spec": {"targetRef": target}}

    custom, deployment = pod_terms(
        [ws("ml", "kubeflow.org/v1", "TFJob", "train"), ws("web", "apps/v1", "Deployment", "w")]
    )
    assert custom == (
        "(request.namespace == 'ml' && has(object.metadata.ownerReferences) && "
        "object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller && true))"
    )
    assert "r.kind == 'ReplicaSet' && r.name.startsWith('w-')" in deployment
