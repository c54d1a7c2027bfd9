"""Which pod requests reach the budget check: ``vpod.kb.io`` only for pods a PUB counts,
``vpodeviction.kb.io`` only in namespaces holding a PUB, both with the manager's failure policy,
and what the gates register."""

from __future__ import annotations

from typing import Any

from kruise.core.webhook.configuration import ClientTarget, build_configuration
from kruise.rollouts.manager.options import FEATURE_GATES, ManagerOptions
from kruise.rollouts.manager.webhooks import webhook_specs
from kruise.workloads.podwebhook import EVICTION_CONDITION

JSON = dict[str, Any]


def validating(pubs: Any = (), **gates: bool) -> dict[str, JSON]:
    """The validating configuration's webhooks by name; WorkloadSpread (which widens the pod
    webhooks' scope, tests/unit/workloadspread/test_scope.py) off unless asked."""
    gates = {"WorkloadSpread": False, **gates}
    opts = ManagerOptions(leader_election_namespace="kruise-ops", feature_gates={**FEATURE_GATES, **gates})
    config = build_configuration(
        webhook_specs(opts, (), pubs),
        mutating=False,
        target=ClientTarget(url_base="https://127.0.0.1:9876"),
        ca_bundle="",
    )
    return {h["name"]: h for h in config["webhooks"]}


def pub(ns: str, name: str = "web") -> JSON:
    return {"metadata": {"name": name, "namespace": ns}}


def test_deletions_are_sent_only_for_protected_pods() -> None:
    hook = validating()["vpod.kb.io"]
    assert hook["clientConfig"]["url"] == "https://127.0.0.1:9876/validate-pod"
    assert hook["rules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["DELETE"]}
    ]
    assert hook["failurePolicy"] == "Fail"
    assert hook["matchConditions"] == [
        {
            "name": "pub-protected-pod",
            "expression": "has(oldObject.metadata.annotations) && "
            "'kruise.io/related-pub' in oldObject.metadata.annotations",
        }
    ]
    assert "kube-system" in hook["namespaceSelector"]["matchExpressions"][1]["values"]


def test_evictions_are_sent_only_in_namespaces_with_a_budget() -> None:
    hook = validating()["vpodeviction.kb.io"]
    assert hook["rules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/eviction"], "operations": ["CREATE"]}
    ]
    assert hook["matchConditions"] == [{"name": EVICTION_CONDITION, "expression": "request.namespace in []"}]
    hook = validating([pub("shop"), pub("bank", "a"), pub("shop", "b")])["vpodeviction.kb.io"]
    assert hook["matchConditions"][0]["expression"] == "request.namespace in ['bank', 'shop']"


def test_update_gate_adds_updates_and_both_gates_off_remove_both() -> None:
    hook = validating(PodUnavailableBudgetUpdateGate=True)["vpod.kb.io"]
    assert hook["rules"][0]["operations"] == ["UPDATE", "DELETE"]
    only_updates = validating(PodUnavailableBudgetDeleteGate=False, PodUnavailableBudgetUpdateGate=True)
    assert only_updates["vpod.kb.io"]["rules"][0]["operations"] == ["UPDATE"]
    assert "vpodeviction.kb.io" not in only_updates
    off = validating(PodUnavailableBudgetDeleteGate=False)
    assert "vpod.kb.io" not in off and "vpodeviction.kb.io" not in off
    assert "vpodunavailablebudget.kb.io" in off  # refuses PUBs with upstream's gate message


def test_pub_webhook_rules() -> None:
    hook = validating()["vpodunavailablebudget.kb.io"]
    assert hook["clientConfig"]["url"].endswith("/validate-policy-kruise-io-podunavailablebudget")
    assert hook["rules"] == [
        {
            "apiGroups": ["policy.kruise.io"],
            "apiVersions": ["v1alpha1"],
            "resources": ["podunavailablebudgets"],
            "operations": ["CREATE", "UPDATE"],
        }
    ]
