"""SidecarSet revisions: data, plan, restore, which version a new pod gets, history limits."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.workloads.sidecarset.history import (
    RevisionNotFoundError,
    choose_revision,
    find_revision,
    new_revision,
    plan,
    restore,
    revision_data,
    revisions_to_delete,
)
from kruise.workloads.sidecarset.inject import inject
from kruise.workloads.sidecarset.keys import HASH_ANNOTATION, SIDECARSET_NAME_LABEL
from tests.unit.sidecarset.builders import NOW, pod, running, sidecarset, with_image

JSON = dict[str, Any]


def test_revision_records_the_five_fields_with_replace_directive() -> None:
    s = sidecarset(imagePullSecrets=[{"name": "reg"}])
    data = revision_data(s)["spec"]
    assert data["$patch"] == "replace"
    assert set(data) == {
        "$patch",
        "volumes",
        "containers",
        "initContainers",
        "imagePullSecrets",
        "patchPodMetadata",
    }
    assert data["volumes"] is None and data["imagePullSecrets"] == [{"name": "reg"}]


def test_new_revision_lives_in_the_manager_namespace_owned_and_labelled() -> None:
    s = sidecarset()
    s["metadata"]["labels"] = {"apps.kruise.io/sidecarset-custom-version": "v1"}
    rev = new_revision(s, "kruise-system", 1, 0)
    meta = rev["metadata"]
    assert meta["namespace"] == "kruise-system"
    assert meta["name"].startswith("log-")
    assert meta["labels"][SIDECARSET_NAME_LABEL] == "log"
    assert meta["labels"]["apps.kruise.io/sidecarset-custom-version"] == "v1"
    assert meta["annotations"][HASH_ANNOTATION] == s["metadata"]["annotations"][HASH_ANNOTATION]
    assert (
        meta["ownerReferences"][0]["kind"] == "SidecarSet" and meta["ownerReferences"][0]["uid"] == "uid-log"
    )


def test_plan_reuses_bumps_and_creates() -> None:
    v1 = sidecarset()
    v2 = with_image(v1, "busybox:2")
    first = plan(v1, [], "kruise-system")
    assert first.action == "create"
    r1 = dict(first.update_revision)
    assert plan(v1, [r1], "kruise-system").action == "reuse"
    second = plan(v2, [r1], "kruise-system")
    assert second.action == "create" and second.revision_number == 2
    r2 = dict(second.update_revision)
    back = plan(v1, [r1, r2], "kruise-system")
    assert back.action == "bump" and back.revision_number == 3


def test_restore_replaces_the_spec_and_takes_the_revisions_hashes() -> None:
    v1 = sidecarset()
    r1 = new_revision(v1, "kruise-system", 1, 0)
    v2 = with_image(v1, "busybox:2")
    restored = restore(v2, r1)
    assert restored["spec"]["containers"][0]["image"] == "busybox:1"
    assert "selector" not in restored["spec"]  # the directive replaces the whole spec
    assert (
        restored["metadata"]["annotations"][HASH_ANNOTATION] == v1["metadata"]["annotations"][HASH_ANNOTATION]
    )
    assert restored["status"]["latestRevision"] == r1["metadata"]["name"]


def test_find_revision_by_name_or_newest_custom_version() -> None:
    s = sidecarset()
    a = new_revision(s, "kruise-system", 1, 0)
    b = new_revision(with_image(s, "busybox:2"), "kruise-system", 2, 0)
    for rev, version in ((a, "v1"), (b, "v1")):
        rev["metadata"]["labels"]["apps.kruise.io/sidecarset-custom-version"] = version
    by_name = {a["metadata"]["name"]: a}.get
    assert find_revision(s, {"revisionName": a["metadata"]["name"]}, by_name, [a, b]) is a
    assert find_revision(s, {"customVersion": "v1"}, by_name, [a, b]) is b
    with pytest.raises(RevisionNotFoundError, match=r'controllerrevisions\.apps "nope" not found'):
        find_revision(s, {"revisionName": "nope"}, by_name, [a, b])
    with pytest.raises(RevisionNotFoundError, match=r'ControllerRevision\.apps "log" not found'):
        find_revision(s, {"customVersion": "v9"}, by_name, [a, b])


def _with_revision(policy: str, **strategy: Any) -> JSON:
    s = sidecarset(
        injectionStrategy={"revision": {"revisionName": "log-old", "policy": policy}},
        updateStrategy={"type": "RollingUpdate", **strategy},
    )
    return s


@pytest.mark.parametrize(
    ("policy", "strategy", "labels", "draw", "expected"),
    [
        pytest.param("Always", {}, {"app": "web"}, 0.9, "old", id="always"),
        pytest.param("Partial", {"paused": True}, {"app": "web"}, 0.9, "old", id="paused"),
        pytest.param("Partial", {"partition": 3}, {"app": "web"}, 0.1, "latest", id="int-partition"),
        pytest.param("Partial", {"partition": "30%"}, {"app": "web"}, 0.2, "old", id="drawn-old"),
        pytest.param("Partial", {"partition": "30%"}, {"app": "web"}, 0.5, "latest", id="drawn-latest"),
        pytest.param(
            "Partial",
            {"selector": {"matchLabels": {"canary": "true"}}},
            {"app": "web"},
            0.0,
            "old",
            id="not-selected",
        ),
        pytest.param(
            "Partial",
            {"selector": {"matchLabels": {"canary": "true"}}},
            {"app": "web", "canary": "true"},
            0.0,
            "latest",
            id="selected-int-partition",
        ),
    ],
)
def test_choose_revision(policy: str, strategy: JSON, labels: JSON, draw: float, expected: str) -> None:
    s = _with_revision(policy, **strategy)
    old = {"old": True}
    chosen = choose_revision(s, pod(labels=labels), lambda info: old, lambda: draw)
    assert (chosen is old) == (expected == "old")


def test_no_revision_info_injects_the_latest() -> None:
    s = sidecarset()
    assert choose_revision(s, pod(), lambda info: {"x": 1}, lambda: 0.0) is s


def test_history_keeps_what_pods_use_and_the_newest() -> None:
    s = sidecarset(revisionHistoryLimit=1)
    revs = [new_revision(with_image(s, f"busybox:{i}"), "kruise-system", i, 0) for i in range(1, 5)]
    in_use = running(inject(pod(), [s], NOW) or {})
    in_use["metadata"]["annotations"][HASH_ANNOTATION] = json.dumps(
        {"log": {"hash": "h", "sidecarSetName": "log", "controllerRevision": revs[0]["metadata"]["name"]}}
    )
    deleted = [r["metadata"]["name"] for r in revisions_to_delete(s, [in_use], revs)]
    assert deleted == [revs[1]["metadata"]["name"], revs[2]["metadata"]["name"]]
    assert revisions_to_delete(sidecarset(), [], revs) == []  # default limit 10
