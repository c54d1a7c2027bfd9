from __future__ import annotations

from typing import Any

from cloneset_builders import NEW, OLD, cloneset, pod, revision, template

from kruise.workloads.cloneset.newpods import CLONESET_KIND
from kruise.workloads.revisions import (
    HASH_LABEL,
    ControllerKind,
    equal_revisions,
    fnv1_32,
    go_encoded_template,
    go_json,
    hash_revision_data,
    new_revision,
    next_revision_number,
    plan_revisions,
    revision_data,
    revision_name,
    revisions_to_delete,
    safe_encode_string,
    sort_revisions,
    template_of_revision,
)

GO_TEMPLATE = {
    "metadata": {"labels": {"app": "demo"}},
    "spec": {"containers": [{"name": "main", "image": "nginx:1.25", "args": ["a<b", "x&y"]}]},
}


def test_fnv_is_fnv1_not_fnv1a() -> None:
    assert fnv1_32(b"") == 0x811C9DC5
    assert fnv1_32(b"a") == 0x050C5D7E
    assert fnv1_32(b"foobar") == 0x31F0B262


def test_safe_encoding_alphabet() -> None:
    assert safe_encode_string("0123456789") == "456789bcdf"


def test_revision_data_marshals_like_go() -> None:
    """The bytes upstream's ``getPatch`` hashes: the template through Go's typed
    ``PodTemplateSpec`` (``creationTimestamp: null``, ``resources: {}``), then a map, marshalled."""
    assert go_json(revision_data(GO_TEMPLATE)) == (
        b'{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"demo"}},'
        b'"spec":{"containers":[{"args":["a\\u003cb","x\\u0026y"],"image":"nginx:1.25","name":"main",'
        b'"resources":{}}]}}}}'
    )


def test_hash_matches_go_history_hash_controller_revision() -> None:
    # Printed by a Go program (k8s.io/api v0.30.11): json.Unmarshal of the template into
    # corev1.PodTemplateSpec, json.Marshal, into a map with "$patch":"replace" under
    # spec.template, json.Marshal, hash/fnv.New32 + the collision count + rand.SafeEncodeString.
    data = revision_data(GO_TEMPLATE)
    assert hash_revision_data(data, 0) == "68f5f8b994"
    assert hash_revision_data(data, 1) == "68f5f8b995"
    assert hash_revision_data(data, 7) == "68f5f8b989"
    limits = {"limits": {"cpu": "1000m", "memory": "1024Mi"}}
    with_limits = {
        "metadata": {"creationTimestamp": None, "labels": {"app": "demo"}},
        "spec": {"containers": [{**GO_TEMPLATE["spec"]["containers"][0], "resources": limits}]},
    }
    assert hash_revision_data(revision_data(with_limits), 0) == "645bc4f9f5"  # quantities canonical


def test_one_template_is_one_revision_however_it_is_stored() -> None:
    """kubectl-kruise ``rollout undo`` writes a revision's Go-encoded template back
    (``creationTimestamp: null``, ``resources: {}``); a manifest leaves them out. Upstream hashes
    the typed encoding, so both are the same revision; a revision stored before this rule (the
    template as written) still equals it, so its name and the pods labelled with it stay valid."""
    bare = cloneset(3, tmpl=GO_TEMPLATE)
    encoded = cloneset(3, tmpl=template_of_revision(new_revision(bare, 1, 0, controller=CLONESET_KIND)))
    assert encoded["spec"]["template"]["metadata"]["creationTimestamp"] is None
    first = new_revision(bare, 1, 0, controller=CLONESET_KIND)
    again = new_revision(encoded, 2, 0, controller=CLONESET_KIND)
    assert first["metadata"]["name"] == again["metadata"]["name"] == "cs-68f5f8b994"
    assert equal_revisions(first, again)
    legacy = {**first, "data": {"spec": {"template": {**GO_TEMPLATE, "$patch": "replace"}}}}
    legacy["metadata"] = {**first["metadata"], "name": "cs-7b85b7669"}
    assert equal_revisions(legacy, again)
    changed = cloneset(3, tmpl={**GO_TEMPLATE, "metadata": {"labels": {"app": "other"}}})
    assert not equal_revisions(legacy, new_revision(changed, 3, 0, controller=CLONESET_KIND))


def test_revision_name_truncates_long_parents() -> None:
    assert revision_name("cs", "abc") == "cs-abc"
    assert revision_name("x" * 300, "abc") == "x" * 223 + "-abc"


def test_new_revision_shape() -> None:
    cs = cloneset(3, tmpl=GO_TEMPLATE)
    cs["metadata"]["annotations"] = {"note": "kept"}
    rev = new_revision(cs, 4, 0, controller=CLONESET_KIND)
    assert rev["metadata"]["name"] == "cs-68f5f8b994"
    assert rev["metadata"]["labels"] == {"app": "demo", HASH_LABEL: "68f5f8b994"}
    assert rev["metadata"]["annotations"] == {"note": "kept"}
    assert rev["metadata"]["ownerReferences"][0]["controller"] is True
    assert rev["revision"] == 4
    assert template_of_revision(rev) == go_encoded_template(GO_TEMPLATE)


def test_equal_revisions_compare_data() -> None:
    a = revision("cs-a", template("nginx:1"), 1)
    b = revision("cs-b", template("nginx:1"), 2)
    c = revision("cs-c", template("nginx:2"), 3)
    assert equal_revisions(a, b)
    assert not equal_revisions(a, c)
    assert equal_revisions(None, None)
    assert not equal_revisions(a, None)


def test_sort_and_next_number() -> None:
    revs = [revision("cs-c", template(), 3), revision("cs-a", template(), 1), revision("cs-b", template(), 1)]
    assert [r["metadata"]["name"] for r in sort_revisions(revs)] == ["cs-a", "cs-b", "cs-c"]
    assert next_revision_number(sort_revisions(revs)) == 4
    assert next_revision_number([]) == 1


def existing(cs: dict[str, Any], number: int) -> dict[str, Any]:
    return new_revision(cs, number, 0, controller=CLONESET_KIND)


def test_plan_reuses_the_latest_equal_revision() -> None:
    cs = cloneset(3, tmpl=template("nginx:2"))
    old, latest = existing(cloneset(3, tmpl=template("nginx:1")), 1), existing(cs, 2)
    cs["status"]["currentRevision"] = old["metadata"]["name"]
    plan = plan_revisions(cs, [latest, old], controller=CLONESET_KIND)
    assert (plan.action, plan.update_revision, plan.revision_number) == ("reuse", latest, 2)
    assert plan.current_revision_name == old["metadata"]["name"]


def test_plan_bumps_an_older_equal_revision_for_a_rollback() -> None:
    cs = cloneset(3, tmpl=template("nginx:1"))
    old, latest = existing(cs, 1), existing(cloneset(3, tmpl=template("nginx:2")), 2)
    plan = plan_revisions(cs, [old, latest], controller=CLONESET_KIND)
    assert (plan.action, plan.update_revision["metadata"]["name"], plan.revision_number) == (
        "bump",
        old["metadata"]["name"],
        3,
    )


def test_plan_creates_a_new_revision_and_defaults_current_to_it() -> None:
    cs = cloneset(3, tmpl=template("nginx:3"))
    plan = plan_revisions(cs, [existing(cloneset(3, tmpl=template("nginx:1")), 1)], controller=CLONESET_KIND)
    assert plan.action == "create"
    assert plan.revision_number == 2
    assert plan.current_revision_name == plan.update_revision["metadata"]["name"]


def test_history_keeps_live_revisions_and_the_newest_within_the_limit() -> None:
    cs = cloneset(3)
    cs["spec"]["revisionHistoryLimit"] = 1
    revs = [revision(f"cs-r{i}", template(f"nginx:{i}"), i) for i in range(1, 7)]
    pods = [pod("cs-r2")]
    doomed = revisions_to_delete(cs, pods, revs, current_revision="cs-r5", update_revision="cs-r6")
    assert [r["metadata"]["name"] for r in doomed] == ["cs-r1", "cs-r3"]


def test_history_keeps_a_revision_its_pods_name_by_hash_only() -> None:
    """CloneSetShortHash pods, and every DaemonSet pod, carry only the hash of their revision."""
    cs = cloneset(3)
    cs["spec"]["revisionHistoryLimit"] = 0
    revs = [revision(f"cs-r{i}", template(f"nginx:{i}"), i) for i in range(1, 5)]
    doomed = revisions_to_delete(cs, [pod("r2")], revs, current_revision="cs-r3", update_revision="cs-r4")
    assert [r["metadata"]["name"] for r in doomed] == ["cs-r1"]


def test_a_daemonset_revision_carries_its_hash_as_controller_revision_hash() -> None:
    kind = ControllerKind("apps.kruise.io/v1alpha1", "DaemonSet", hash_label="controller-revision-hash")
    rev = new_revision(cloneset(3), 1, None, controller=kind)
    hash_value = rev["metadata"]["name"].rsplit("-", 1)[1]
    assert rev["metadata"]["labels"]["controller-revision-hash"] == hash_value
    assert "controller.kubernetes.io/hash" not in rev["metadata"]["labels"]


def test_history_default_limit_is_ten() -> None:
    revs = [revision(f"cs-r{i}", template(), i) for i in range(1, 14)]
    doomed = revisions_to_delete(cloneset(3), [], revs, OLD, NEW)
    assert [r["metadata"]["name"] for r in doomed] == ["cs-r1", "cs-r2", "cs-r3"]


def test_a_revision_stored_before_go_encoding_still_updates_in_place() -> None:
    """A revision written as the template was stored (no ``resources: {}``) and the next one in Go
    form differ only in the image once read (``template_of_revision``), so the update stays in
    place, as upstream, which reads both into typed structs."""
    from kruise.workloads.inplace.spec import calculate_in_place_update_spec

    legacy = {"data": {"spec": {"template": {**GO_TEMPLATE, "$patch": "replace"}}}}
    container = {**GO_TEMPLATE["spec"]["containers"][0], "image": "nginx:1.27"}
    newer = cloneset(3, tmpl={**GO_TEMPLATE, "spec": {"containers": [container]}})
    update = new_revision(newer, 2, 0, controller=CLONESET_KIND)
    spec = calculate_in_place_update_spec(template_of_revision(legacy), template_of_revision(update))
    assert spec is not None and spec.container_images == {"main": "nginx:1.27"}
