"""The ImagePullJob's pure core: targets, status read back from NodeImages, parallelism, tags."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.daemon.imagepulljob.plan import (
    add_tag,
    after_completion,
    format_time,
    plan,
    tag_pull_policy,
    targets,
)

NOW = datetime(2024, 1, 1, 12, 0, 0, tzinfo=UTC)
UID = "job-uid"


def job(parallelism: Any = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "j", "namespace": "ns", "uid": UID},
        "spec": {"image": "nginx:1.9.1", "completionPolicy": {"type": "Always"}, **spec},
    }
    if parallelism is not None:
        body["spec"]["parallelism"] = parallelism
    return body


def nodeimage(
    name: str,
    labels: dict[str, str] | None = None,
    phase: str | None = None,
    owned: bool = True,
    version: int = 0,
    reported: int | None = None,
) -> dict[str, Any]:
    ni: dict[str, Any] = {"metadata": {"name": name, "labels": labels or {}}, "spec": {}}
    if owned:
        ni["spec"]["images"] = {
            "nginx": {"tags": [{"tag": "1.9.1", "version": version, "ownerReferences": [{"uid": UID}]}]}
        }
    if phase is not None:
        ni["status"] = {
            "imageStatuses": {
                "nginx": {
                    "tags": [
                        {"tag": "1.9.1", "phase": phase, "version": version if reported is None else reported}
                    ]
                }
            }
        }
    return ni


def pod(name: str, node: str, labels: dict[str, str], phase: str = "Running") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": labels},
        "spec": {"nodeName": node},
        "status": {"phase": phase},
    }


TARGETS = [
    ("no selector takes every node", {}, ["a", "b", "c"]),
    ("names take those that exist, in order", {"selector": {"names": ["c", "x", "a"]}}, ["c", "a"]),
    ("labels match the node's labels", {"selector": {"matchLabels": {"zone": "z1"}}}, ["a", "c"]),
    (
        "a pod selector takes the nodes of active matching pods",
        {"podSelector": {"matchLabels": {"app": "web"}}},
        ["b"],
    ),
]


@pytest.mark.parametrize(("spec", "names"), [c[1:] for c in TARGETS], ids=[c[0] for c in TARGETS])
def test_targets(spec: dict[str, Any], names: list[str]) -> None:
    nis = [nodeimage("a", {"zone": "z1"}), nodeimage("b", {"zone": "z2"}), nodeimage("c", {"zone": "z1"})]
    pods = [
        pod("p1", "b", {"app": "web"}),
        pod("p2", "c", {"app": "web"}, phase="Succeeded"),
        pod("p3", "a", {"app": "db"}),
    ]
    assert [n["metadata"]["name"] for n in targets(job(**spec), nis, pods)] == names


def test_a_new_job_writes_its_tag_to_parallelism_nodes_and_starts() -> None:
    nis = [nodeimage(n, owned=False) for n in "abcd"]
    decided = plan(job(parallelism=2), nis, [], NOW)
    assert decided.sync == ("a", "b")
    assert decided.status == {
        "startTime": format_time(NOW),
        "desired": 4,
        "message": "job is running, progress 0.0%",
    }


def test_percent_parallelism_is_a_share_of_desired_rounded_up() -> None:
    nis = [nodeimage(n, owned=False) for n in "abcde"]
    assert plan(job(parallelism="50%"), nis, [], NOW).sync == ("a", "b", "c")


def test_counts_follow_the_statuses_of_the_same_version() -> None:
    nis = [
        nodeimage("a", phase="Succeeded"),
        nodeimage("b", phase="Failed"),
        nodeimage("c", phase="Pulling"),
        nodeimage("d", phase="Succeeded", version=1, reported=0),  # a stale report: still pulling
        nodeimage("e", owned=False),
    ]
    decided = plan(job(parallelism=3), nis, [], NOW)
    assert decided.status["active"] == 2
    assert decided.status["succeeded"] == 1
    assert decided.status["failed"] == 1
    assert decided.status["failedNodes"] == ["b"]
    assert decided.status["message"] == "job is running, progress 40.0%"
    assert decided.sync == ("e",)


def test_an_always_job_completes_when_every_node_finished() -> None:
    decided = plan(job(), [nodeimage("a", phase="Succeeded"), nodeimage("b", phase="Failed")], [], NOW)
    assert decided.status["completionTime"] == format_time(NOW)
    assert decided.status["message"] == "job has completed"


def test_a_never_job_never_completes() -> None:
    never = job(completionPolicy={"type": "Never"})
    decided = plan(never, [nodeimage("a", phase="Succeeded")], [], NOW)
    assert "completionTime" not in decided.status


def test_active_deadline_fails_what_is_left() -> None:
    started = job(completionPolicy={"type": "Always", "activeDeadlineSeconds": 700})
    started["status"] = {"startTime": format_time(NOW - timedelta(seconds=701))}
    decided = plan(
        started,
        [nodeimage("a", phase="Succeeded"), nodeimage("b", phase="Pulling"), nodeimage("c", owned=False)],
        [],
        NOW,
    )
    assert decided.status["message"] == "job exceeds activeDeadlineSeconds"
    assert decided.status["failedNodes"] == ["b", "c"] and decided.status["succeeded"] == 1
    assert decided.sync == ()


def test_ttl_after_completion() -> None:
    done = job(completionPolicy={"type": "Always", "ttlSecondsAfterFinished": 10})
    done["status"] = {"completionTime": format_time(NOW - timedelta(seconds=4))}
    assert after_completion(done, NOW) == (False, 6.0)
    assert after_completion(done, NOW + timedelta(seconds=6)) == (True, None)


def test_tag_entry_and_ttl_as_upstream() -> None:
    policy = tag_pull_policy(job(pullPolicy={"timeoutSeconds": 600, "backoffLimit": 3}), lambda n: 7)
    assert policy == {"timeoutSeconds": 600, "backoffLimit": 3, "ttlSecondsAfterFinished": 1800 + 300 + 7}
    never = tag_pull_policy(job(completionPolicy={"type": "Never"}), lambda n: 600)
    assert never == {"ttlSecondsAfterFinished": 86400, "activeDeadlineSeconds": 1800}
    spec = add_tag(
        {
            "metadata": {"name": "a"},
            "status": {"imageStatuses": {"nginx": {"tags": [{"tag": "1.9.1", "version": 4}]}}},
        },
        job(imagePullPolicy="Always"),
        NOW,
        policy,
        [("kruise-daemon-config", "s-x")],
    )
    assert spec is not None
    image = spec["images"]["nginx"]
    assert image["pullSecrets"] == [{"namespace": "kruise-daemon-config", "name": "s-x"}]
    entry = image["tags"][0]
    assert entry["version"] == 5 and entry["imagePullPolicy"] == "Always"
    assert entry["ownerReferences"] == [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "ImagePullJob",
            "name": "j",
            "namespace": "ns",
            "uid": UID,
        }
    ]


def test_a_second_job_on_the_same_tag_bumps_the_version_and_joins_the_owners() -> None:
    ni = nodeimage("a", version=2)
    other = job()
    other["metadata"]["uid"] = "other"
    spec = add_tag(ni, other, NOW, {}, [])
    assert spec is not None
    entry = spec["images"]["nginx"]["tags"][0]
    assert entry["version"] == 3 and [o["uid"] for o in entry["ownerReferences"]] == [UID, "other"]
    assert add_tag(ni, job(), NOW, {}, []) is None


PHASES = st.sampled_from([None, "Pulling", "Succeeded", "Failed", "unsynced"])


def world(phases: list[str | None]) -> list[dict[str, Any]]:
    return [
        nodeimage(f"n{i}", owned=p != "unsynced", phase=None if p == "unsynced" else p)
        for i, p in enumerate(phases)
    ]


@settings(max_examples=200, deadline=None)
@given(phases=st.lists(PHASES, max_size=12), parallelism=st.integers(min_value=0, max_value=6))
def test_active_plus_new_writes_never_exceed_parallelism(phases: list[str | None], parallelism: int) -> None:
    decided = plan(job(parallelism=parallelism), world(phases), [], NOW)
    assert len(decided.sync) <= max(parallelism - decided.status.get("active", 0), 0)


@settings(max_examples=100, deadline=None)
@given(phases=st.lists(PHASES, max_size=8), parallelism=st.integers(min_value=1, max_value=4))
def test_planning_twice_on_an_applied_world_adds_nothing_new(
    phases: list[str | None], parallelism: int
) -> None:
    nis = world(phases)
    first = plan(job(parallelism=parallelism), nis, [], NOW)
    for ni in nis:
        if ni["metadata"]["name"] in first.sync:
            ni["spec"] = add_tag(ni, job(parallelism=parallelism), NOW, {}, [])
    again = plan({**job(parallelism=parallelism), "status": first.status}, nis, [], NOW)
    assert not set(again.sync) & set(first.sync)
    by_name = {ni["metadata"]["name"]: ni for ni in nis}
    assert all(add_tag(by_name[n], job(), NOW, {}, []) is not None for n in again.sync)
