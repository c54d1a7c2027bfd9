"""GitOps fight detection over the network objects (pure; rollout/trafficfight.py)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.rollouts.rollout.trafficfight import (
    Target,
    judge,
    rollout_target_keys,
    route_targets,
    selector_target,
    written_after,
)
from kruise.rollouts.workloads.fight import conflict_conditions, conflict_kind
from kruise.traffic.resources import HTTPROUTES, INGRESSES, SERVICES

OURS = "kruise-manager"
ROUTE_TARGET = Target(HTTPROUTES, "shop", "web", ("spec", "rules"))
ANNOTATIONS_TARGET = Target(INGRESSES, "shop", "web-canary", ("metadata", "annotations"))


def ref(name: str, weight: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"group": "", "kind": "Service", "name": name, "port": 80}
    if weight is not None:
        out["weight"] = weight
    return out


def route(*refs: dict[str, Any], managers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "managedFields": managers or []},
        "spec": {"parentRefs": [{"name": "gw"}], "rules": [{"backendRefs": list(refs)}]},
    }


def applied(manager: str, time: str, fields: dict[str, Any], operation: str = "Apply") -> dict[str, Any]:
    return {"manager": manager, "operation": operation, "time": time, "fieldsV1": fields}


RULES = {"f:spec": {"f:parentRefs": {}, "f:rules": {}}}
ORIGINAL = route(ref("web", 1))
OURS_AT_5 = route(ref("web", 95), ref("web-canary", 5))


def test_route_targets_follow_the_routers_order_and_skip_unknown_custom_kinds() -> None:
    routing = {
        "service": "web",
        "customNetworkRefs": [
            {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService", "name": "vs"},
            {"apiVersion": "example.com/v1", "kind": "Thing", "name": "t"},
        ],
        "ingress": {"name": "web"},
        "gateway": {"httpRouteName": "web"},
    }
    assert [t.key for t in route_targets(routing, "shop")] == [
        "VirtualService/shop/vs",
        "Ingress/shop/web-canary",
        "HTTPRoute/shop/web",
    ]
    assert route_targets({"service": "web"}, "shop") == []


def test_rollout_target_keys_add_both_services() -> None:
    rollout = {
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "strategy": {
                "canary": {"trafficRoutings": [{"service": "web", "gateway": {"httpRouteName": "r"}}]}
            }
        },
    }
    assert rollout_target_keys(rollout) == {"HTTPRoute/shop/r", "Service/shop/web", "Service/shop/web-canary"}
    assert rollout_target_keys({"metadata": {}, "spec": {"strategy": {"canary": {}}}}) == set()


def test_written_after_keeps_what_our_write_changed_under_the_root() -> None:
    written = written_after(ROUTE_TARGET, ORIGINAL, OURS_AT_5, {})
    base = ("spec", "rules", 0, "backendRefs")
    assert written == {
        (*base, 0, "weight"): 95,
        (*base, 1, "group"): "",
        (*base, 1, "kind"): "Service",
        (*base, 1, "name"): "web-canary",
        (*base, 1, "port"): 80,
        (*base, 1, "weight"): 5,
    }
    later = written_after(ROUTE_TARGET, OURS_AT_5, route(ref("web", 50), ref("web-canary", 50)), written)
    assert later[(*base, 1, "weight")] == 50 and later[(*base, 1, "name")] == "web-canary"
    gone = written_after(ROUTE_TARGET, OURS_AT_5, ORIGINAL, written)  # a restore of ours
    assert gone == {(*base, 0, "weight"): 1}


def test_a_created_object_is_written_whole_under_the_root() -> None:
    target = selector_target("shop", "web-canary", "pod-template-hash")
    svc = {"spec": {"selector": {"app": "web", "pod-template-hash": "abc"}}}
    assert target.resource is SERVICES
    assert written_after(target, None, svc, {}) == {("spec", "selector", "pod-template-hash"): "abc"}


def test_an_applier_setting_the_weights_back_is_named_with_the_fields() -> None:
    written = written_after(ROUTE_TARGET, ORIGINAL, OURS_AT_5, {})
    live = route(ref("web", 1), managers=[applied("argocd-controller", "2026-01-01T00:00:05Z", RULES)])
    revert = judge(written, live, OURS)
    assert revert is not None and revert.writer == "argocd-controller"
    assert revert.fields == ("spec.rules[0].backendRefs[0].weight", "spec.rules[0].backendRefs[1]")


def test_values_that_hold_or_that_only_we_moved_are_no_fight() -> None:
    written = written_after(ROUTE_TARGET, ORIGINAL, OURS_AT_5, {})
    ours = [applied(OURS, "2026-01-01T00:00:05Z", RULES, "Update")]
    assert judge(written, copy.deepcopy(OURS_AT_5), OURS) is None
    assert judge(written, route(ref("web", 1), managers=ours), OURS) is None


def test_a_canary_annotation_set_back_names_the_manager_owning_that_key() -> None:
    key = "nginx.ingress.kubernetes.io/canary-weight"
    ours = {"metadata": {"annotations": {"nginx.ingress.kubernetes.io/canary": "true", key: "20"}}}
    before = {"metadata": {"annotations": {"nginx.ingress.kubernetes.io/canary": "true", key: "5"}}}
    written = written_after(ANNOTATIONS_TARGET, before, ours, {})
    assert written == {("metadata", "annotations", key): "20"}
    edit = applied(
        "kubectl-edit", "2026-01-01T00:00:05Z", {"f:metadata": {"f:annotations": {f"f:{key}": {}}}}, "Update"
    )
    live = {
        "metadata": {
            "annotations": {"nginx.ingress.kubernetes.io/canary": "true", key: "0"},
            "managedFields": [edit],
        }
    }
    revert = judge(written, live, OURS)
    assert revert is not None and revert.writer == "kubectl-edit"
    assert revert.fields == ("metadata.annotations[nginx.ingress.kubernetes.io/canary-weight]",)


def test_each_guard_clears_only_its_own_conflict_condition() -> None:
    route_fight = "field manager argocd-controller set spec.rules of HTTPRoute web back; re-asserting"
    workload_fight = "field manager argocd-controller set spec.replicas of CloneSet web back; re-asserting"
    conditions = [{"type": "Conflict", "status": "True", "message": route_fight}]
    assert conflict_kind(conditions[0]) == "HTTPRoute"

    def workload(c: Any) -> bool:
        return conflict_kind(c) in {"CloneSet", ""}

    assert conflict_conditions(conditions, None, "", "t", workload) == conditions
    assert conflict_conditions(conditions, None, "", "t", lambda c: not workload(c)) == []
    other = [{"type": "Conflict", "status": "True", "message": workload_fight}]
    assert conflict_conditions(other, None, "", "t", workload) == []


WEIGHTS = st.integers(0, 100)


@given(WEIGHTS, WEIGHTS)
def test_our_own_next_step_is_never_judged_a_revert(first: int, second: int) -> None:
    """Deciding on a world only we wrote finds no fight, whatever the step's weights."""
    step1 = route(ref("web", 100 - first), ref("web-canary", first))
    step2 = route(ref("web", 100 - second), ref("web-canary", second))
    ours = [applied(OURS, "2026-01-01T00:00:05Z", RULES, "Update")]
    written = written_after(ROUTE_TARGET, ORIGINAL, step1, {})
    step2["metadata"]["managedFields"] = ours
    assert judge(written, step2, OURS) is None
    written = written_after(ROUTE_TARGET, step1, step2, written)
    assert judge(written, step2, OURS) is None


def test_a_selector_pin_set_to_another_value_names_its_owner_but_a_removed_key_has_none() -> None:
    target = selector_target("shop", "web", "pod-template-hash")
    pinned = {"spec": {"selector": {"app": "web", "pod-template-hash": "new"}}}
    written = written_after(target, {"spec": {"selector": {"app": "web"}}}, pinned, {})
    assert written == {("spec", "selector", "pod-template-hash"): "new"}
    fields = {"f:spec": {"f:selector": {"f:app": {}, "f:pod-template-hash": {}}}}
    git = {
        "metadata": {"managedFields": [applied("argocd-controller", "2026-01-01T00:00:05Z", fields)]},
        "spec": {"selector": {"app": "web", "pod-template-hash": "old"}},
    }
    revert = judge(written, git, OURS)
    assert revert is not None and revert.writer == "argocd-controller"
    assert revert.fields == ("spec.selector.pod-template-hash",)
    # a replace that drops the key leaves no owner of it in managedFields: nobody to name
    replaced = {
        "metadata": {
            "managedFields": [applied("argocd-controller", "t", {"f:spec": {"f:selector": {"f:app": {}}}})]
        },
        "spec": {"selector": {"app": "web"}},
    }
    assert judge(written, replaced, OURS) is None
