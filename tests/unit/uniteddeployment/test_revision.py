"""A UnitedDeployment's ControllerRevisions (upstream revision.go): data, name, labels, history."""

from __future__ import annotations

import copy
import functools
from typing import Any

from kruise.workloads.revisions import HASH_LABEL, hash_revision_data, plan_revisions
from kruise.workloads.uniteddeployment.revision import (
    UNITEDDEPLOYMENT_KIND,
    encoded_subset_template,
    expire_revisions,
    new_ud_revision,
)


def united(image: str = "nginx:1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "ns", "uid": "ud-uid", "annotations": {"a": "b"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "statefulSetTemplate": {
                    "metadata": {"labels": {"app": "web", "tier": "db"}},
                    "spec": {
                        "selector": {"matchLabels": {"app": "web"}},
                        "template": {
                            "metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "web", "image": image}]},
                        },
                    },
                }
            },
            "topology": {"subsets": [{"name": "a"}, {"name": "b"}]},
            **spec,
        },
    }


def test_revision_snapshots_the_subset_template_as_go_marshals_it() -> None:
    ud = united()
    rev = new_ud_revision(ud, 4, 0)
    template = rev["data"]["spec"]["template"]
    assert template["$patch"] == "replace"
    sts = template["statefulSetTemplate"]
    assert sts["metadata"] == {"creationTimestamp": None, "labels": {"app": "web", "tier": "db"}}
    assert sts["spec"]["template"]["metadata"]["creationTimestamp"] is None
    assert sts["spec"]["template"]["spec"]["containers"] == [
        {"name": "web", "image": "nginx:1", "resources": {}}
    ]
    assert set(rev["data"]) == {"spec"} and set(rev["data"]["spec"]) == {"template"}, "only spec.template"
    hash_value = hash_revision_data(rev["data"], 0)
    assert rev["metadata"]["name"] == f"web-{hash_value}"
    assert rev["metadata"]["labels"] == {"app": "web", "tier": "db", HASH_LABEL: hash_value}
    assert "annotations" not in rev["metadata"], "history.NewControllerRevision copies no annotations"
    assert rev["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "UnitedDeployment",
            "name": "web",
            "uid": "ud-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert rev["revision"] == 4 and rev["metadata"]["namespace"] == "ns"
    assert "creationTimestamp" not in ud["spec"]["template"]["statefulSetTemplate"]["metadata"], (
        "ud untouched"
    )


def test_name_follows_the_template_and_the_collision_count_only() -> None:
    base = new_ud_revision(united(), 1, 0)["metadata"]["name"]
    rescaled = united(replicas=9, topology={"subsets": [{"name": "z"}]}, revisionHistoryLimit=2)
    assert new_ud_revision(rescaled, 7, 0)["metadata"]["name"] == base
    assert new_ud_revision(united(image="nginx:2"), 1, 0)["metadata"]["name"] != base
    assert new_ud_revision(united(), 1, 1)["metadata"]["name"] != base
    artifacts = united()
    artifacts["spec"]["template"]["statefulSetTemplate"]["spec"]["template"] = {
        "metadata": {"labels": {"app": "web"}, "creationTimestamp": None},
        "spec": {"containers": [{"name": "web", "image": "nginx:1", "resources": {}}]},
    }
    assert new_ud_revision(artifacts, 1, 0)["metadata"]["name"] == base, "Go's artifacts change nothing"


def test_every_template_kind_labels_its_revision() -> None:
    ud = united()
    template = ud["spec"]["template"].pop("statefulSetTemplate")
    ud["spec"]["template"]["cloneSetTemplate"] = template
    rev = new_ud_revision(ud, 1, 0)
    assert rev["metadata"]["labels"]["tier"] == "db"
    assert "cloneSetTemplate" in rev["data"]["spec"]["template"]
    assert encoded_subset_template({"deploymentTemplate": {"spec": {"replicas": 1}}}) == {
        "deploymentTemplate": {"metadata": {"creationTimestamp": None}, "spec": {"replicas": 1}}
    }


def revision(name: str, number: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "creationTimestamp": "2026-01-01T00:00:00Z"}, "revision": number}


def test_history_beyond_the_limit_is_cleaned_except_the_status_revisions() -> None:
    history = [revision(f"r{i}", i) for i in range(1, 6)]
    ud = united(revisionHistoryLimit=2)
    ud["status"] = {"currentRevision": "r1", "updateStatus": {"updatedRevision": "r5"}}
    expired = expire_revisions(ud, history)
    assert [r["metadata"]["name"] for r in expired.delete] == ["r2", "r3"], "r1 is current"
    assert [r["metadata"]["name"] for r in expired.kept] == ["r4", "r5"], (
        "upstream slices the live one off too"
    )
    assert expire_revisions(united(revisionHistoryLimit=5), history).delete == ()
    ten = [revision(f"r{i}", i) for i in range(1, 12)]
    default = expire_revisions(united(), ten)
    assert [r["metadata"]["name"] for r in default.delete] == ["r1"], "default limit 10"
    assert len(default.kept) == 10


def plan(ud: dict[str, Any], revisions: list[dict[str, Any]]) -> Any:
    return plan_revisions(
        ud, revisions, controller=UNITEDDEPLOYMENT_KIND, build=functools.partial(new_ud_revision, ud)
    )


def test_a_roll_back_reuses_the_earlier_revision_with_the_next_number() -> None:
    v1, v2 = united(), united(image="nginx:2")
    first = plan(v1, [])
    assert first.action == "create" and first.revision_number == 1
    r1 = copy.deepcopy(first.update_revision)
    r2 = new_ud_revision(v2, 2, 0)
    assert plan(v2, [r1, r2]).action == "reuse"
    back = plan(v1, [r1, r2])
    assert back.action == "bump" and back.revision_number == 3
    assert back.update_revision["metadata"]["name"] == r1["metadata"]["name"]
    v1["status"] = {"currentRevision": r2["metadata"]["name"]}
    assert plan(v1, [r1, r2]).current_revision_name == r2["metadata"]["name"]
