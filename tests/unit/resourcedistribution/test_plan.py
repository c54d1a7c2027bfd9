"""The ResourceDistribution plan: targets, copies, conflicts, cleanup and status."""

from __future__ import annotations

from typing import Any

from kruise.workloads.api.resourcedistribution import RESOURCE_FROM_ANNOTATION, RESOURCE_HASH_ANNOTATION
from kruise.workloads.resourcedistribution.plan import (
    CONFLICT,
    DELETE_FAILED,
    NOT_EXISTS,
    Failure,
    new_status,
    plan,
    resource_hash,
    target_namespaces,
)

SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "s"},
    "data": {"k": "dg=="},
    "type": "Opaque",
}


def ns(name: str, deleting: bool = False, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


def rd(targets: dict[str, Any], resource: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "dist", "uid": "rd-uid", "generation": 3},
        "spec": {"resource": resource or SECRET, "targets": targets},
    }


def names(*items: str) -> dict[str, Any]:
    return {"list": [{"name": n} for n in items]}


def copy_of(owner_uid: str, namespace: str, **extra: Any) -> dict[str, Any]:
    refs = [{"kind": "ResourceDistribution", "name": "dist", "uid": owner_uid, "controller": True}]
    return {
        **SECRET,
        **extra,
        "metadata": {
            "name": "s",
            "namespace": namespace,
            "uid": f"u-{namespace}",
            "resourceVersion": "7",
            "ownerReferences": refs,
        },
    }


def test_targets_union_of_included_and_selected_minus_excluded_and_system() -> None:
    all_ns = [ns("a", env="x"), ns("b"), ns("c", env="x"), ns("kube-system", env="x"), ns("d")]
    targets = {
        "includedNamespaces": names("b", "missing", "kube-public"),
        "excludedNamespaces": names("c"),
        "namespaceLabelSelector": {"matchLabels": {"env": "x"}},
    }
    assert target_namespaces(targets, all_ns) == (["a", "b", "missing"], ["c", "d", "kube-system"])


def test_all_namespaces_never_takes_kube_system_or_kube_public() -> None:
    all_ns = [ns("a"), ns("kube-system"), ns("kube-public"), ns("b")]
    assert target_namespaces({"allNamespaces": True, "excludedNamespaces": names("b")}, all_ns)[0] == ["a"]


def test_an_empty_selector_selects_nothing() -> None:
    assert target_namespaces({"namespaceLabelSelector": {}}, [ns("a")]) == ([], ["a"])


def test_plan_creates_owned_annotated_copies() -> None:
    out = plan(rd({"includedNamespaces": names("a")}), [ns("a")], {})
    assert out is not None and list(out.create) == ["a"] and out.desired == 1
    body = out.create["a"]
    assert body["metadata"]["namespace"] == "a" and body["data"] == SECRET["data"]
    assert body["metadata"]["annotations"] == {
        RESOURCE_HASH_ANNOTATION: resource_hash(SECRET),
        RESOURCE_FROM_ANNOTATION: "dist",
    }
    (ref,) = body["metadata"]["ownerReferences"]
    assert ref["uid"] == "rd-uid" and ref["controller"] is True and ref["kind"] == "ResourceDistribution"


def test_plan_never_touches_a_same_named_object_it_does_not_own() -> None:
    foreign = {**SECRET, "metadata": {"name": "s", "namespace": "a", "uid": "x"}}
    out = plan(rd({"includedNamespaces": names("a")}), [ns("a")], {"a": foreign})
    assert out is not None and not out.create and not out.update and not out.delete
    assert [(f.condition, f.namespace) for f in out.failures] == [(CONFLICT, "a")]


def test_plan_reverts_a_hand_edited_copy_keeping_its_extra_metadata() -> None:
    edited = copy_of("rd-uid", "a", data={"k": "dg==", "updated": "eWVz"})
    edited["metadata"]["labels"] = {"team": "x"}
    out = plan(rd({"includedNamespaces": names("a")}), [ns("a")], {"a": edited})
    assert out is not None and list(out.update) == ["a"]
    body = out.update["a"]
    assert body["data"] == {"k": "dg=="} and body["metadata"]["labels"] == {"team": "x"}
    assert body["metadata"]["resourceVersion"] == "7"


def test_plan_leaves_an_up_to_date_copy_alone() -> None:
    out = plan(rd({"includedNamespaces": names("a")}), [ns("a")], {"a": copy_of("rd-uid", "a")})
    assert out is not None and not out.create and not out.update and not out.failures


def test_plan_deletes_only_its_own_copies_where_no_longer_targeted() -> None:
    existing = {"a": copy_of("rd-uid", "a"), "b": copy_of("other", "b"), "c": copy_of("rd-uid", "c")}
    out = plan(rd({"includedNamespaces": names("c")}), [ns("a"), ns("b"), ns("c")], existing)
    assert out is not None and out.delete == {"a": "u-a"}


def test_plan_counts_missing_and_terminating_namespaces_as_not_exists() -> None:
    out = plan(rd({"includedNamespaces": names("gone", "ending")}), [ns("ending", deleting=True)], {})
    assert out is not None and out.desired == 2 and not out.create
    assert sorted(f.namespace for f in out.failures if f.condition == NOT_EXISTS) == ["ending", "gone"]


def test_plan_refuses_unsupported_resources() -> None:
    assert (
        plan(
            rd({"allNamespaces": True}, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}),
            [],
            {},
        )
        is None
    )


def test_status_counts_failures_and_keeps_transition_times() -> None:
    first = new_status(
        rd({}), 3, [Failure(CONFLICT, "b", "conflict"), Failure(DELETE_FAILED, "z", "boom")], "T1"
    )
    assert (first["desired"], first["succeeded"], first["failed"], first["observedGeneration"]) == (
        3,
        2,
        1,
        3,
    )
    conds = first["conditions"]
    assert [c["type"] for c in conds] == [
        "GetResourceFailed",
        "CreateResourceFailed",
        "UpdateResourceFailed",
        "DeleteResourceFailed",
        "ConflictOccurred",
        "NamespaceNotExists",
    ]
    assert conds[CONFLICT] == {
        "type": "ConflictOccurred",
        "status": "True",
        "reason": "conflict",
        "failedNamespace": ["b"],
        "lastTransitionTime": "T1",
    }
    assert conds[0]["status"] == "False" and conds[0]["reason"] == "Succeeded"
    again = new_status({**rd({}), "status": first}, 3, [], "T2")
    assert again["succeeded"] == 3 and again["failed"] == 0
    assert again["conditions"][0]["lastTransitionTime"] == "T1"  # unchanged status keeps its time
    assert again["conditions"][CONFLICT]["lastTransitionTime"] == "T2"
    assert "failedNamespace" not in again["conditions"][CONFLICT]
