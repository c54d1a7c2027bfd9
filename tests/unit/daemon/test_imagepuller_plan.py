"""The image puller's pure core: which tags need a worker, and the NodeImage status it reports."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.daemon.imagepuller.plan import (
    DEFAULT_BACKOFF_LIMIT,
    DEFAULT_TIMEOUT_SECONDS,
    TagJob,
    TagState,
    finished_states,
    in_pulling,
    node_status,
    plan_workers,
    tag_jobs,
)

REPO = "kruise.local/busybox"


def spec(*tags: dict[str, Any], repo: str = REPO, **image: Any) -> dict[str, Any]:
    return {"images": {repo: {"tags": list(tags), **image}}}


def test_tag_jobs_read_the_pull_policy_and_default_what_is_missing() -> None:
    jobs = tag_jobs(
        spec(
            {"tag": "v1", "version": 2, "pullPolicy": {"timeoutSeconds": 30, "backoffLimit": 1,
                                                        "activeDeadlineSeconds": 90}},
            {"tag": "v2", "imagePullPolicy": "Always", "pullPolicy": {"backoffLimit": -4}},
            pullSecrets=[{"namespace": "kruise-daemon-config", "name": "reg"}],
            sandboxConfig={"labels": {"a": "b"}},
        )
    )  # fmt: skip
    v1, v2 = jobs[(REPO, "v1")], jobs[(REPO, "v2")]
    assert (v1.version, v1.timeout, v1.backoff_limit, v1.active_deadline) == (2, 30.0, 1, 90.0)
    assert v1.image == "kruise.local/busybox:v1"
    assert v1.pull_secrets == (("kruise-daemon-config", "reg"),)
    assert v1.sandbox_config == {"labels": {"a": "b"}}
    assert v1.image_pull_policy == "IfNotPresent"
    # a negative backoffLimit means the default, as upstream's worker reads it
    assert (v2.timeout, v2.backoff_limit, v2.active_deadline) == (
        DEFAULT_TIMEOUT_SECONDS,
        DEFAULT_BACKOFF_LIMIT,
        None,
    )
    assert v2.image_pull_policy == "Always"


@pytest.mark.parametrize(
    ("status_tag", "finished"),
    [
        pytest.param({"tag": "v1", "phase": "Succeeded", "version": 1, "completionTime": "t"}, True,
                     id="same version, completed: finished"),
        pytest.param({"tag": "v1", "phase": "Failed", "version": 1, "completionTime": "t"}, True,
                     id="a failure is final too"),
        pytest.param({"tag": "v1", "phase": "Succeeded", "version": 0, "completionTime": "t"}, False,
                     id="an older version asks for a new pull"),
        pytest.param({"tag": "v1", "phase": "Pulling", "version": 1}, False,
                     id="no completionTime: still active (a restarted daemon pulls again)"),
    ],
)  # fmt: skip
def test_finished_states_need_the_same_version_and_a_completion_time(
    status_tag: dict[str, Any], finished: bool
) -> None:
    jobs = tag_jobs(spec({"tag": "v1", "version": 1}))
    status = {"imageStatuses": {REPO: {"tags": [status_tag]}}}
    assert (((REPO, "v1")) in finished_states(jobs, status)) is finished


def test_plan_starts_active_tags_and_stops_workers_of_removed_finished_or_changed_tags() -> None:
    jobs = tag_jobs(spec({"tag": "v1", "version": 1}, {"tag": "v2", "version": 5}, {"tag": "v3"}))
    finished = {(REPO, "v3"): TagState(tag="v3", phase="Succeeded", completion_time="t")}
    running = {(REPO, "v1"): 1, (REPO, "v2"): 4, (REPO, "v3"): 0, (REPO, "gone"): 0}
    plan = plan_workers(jobs, finished, running)
    assert plan.stop == ((REPO, "gone"), (REPO, "v2"), (REPO, "v3"))
    assert [(j.tag, j.version) for j in plan.start] == [("v2", 5)]


def test_node_status_counts_phases_sorts_tags_and_keeps_first_sync_status() -> None:
    the_spec = spec({"tag": "v2"}, {"tag": "v1"}, {"tag": "v3"}, {"tag": "v4"})
    the_spec["images"]["other"] = {"tags": [{"tag": "latest"}]}
    states = {
        (REPO, "v2"): TagState(tag="v2", phase="Pulling", start_time="s"),
        (REPO, "v1"): TagState(
            tag="v1", phase="Succeeded", progress=100, completion_time="c", image_id="x@sha256:1"
        ),
        (REPO, "v3"): TagState(tag="v3", phase="Failed", completion_time="c", message="boom"),
        (REPO, "v4"): TagState(tag="v4", phase="Waiting"),
        (REPO, "not-in-spec"): TagState(tag="not-in-spec", phase="Succeeded"),
    }
    first = {"syncAt": "2026-01-01T00:00:00Z", "status": "Succeeded"}
    status = node_status(the_spec, states, {"firstSyncStatus": first})
    assert {k: status[k] for k in ("desired", "succeeded", "failed", "pulling", "waiting")} == {
        "desired": 5, "succeeded": 1, "failed": 1, "pulling": 1, "waiting": 1,
    }  # fmt: skip
    assert [t["tag"] for t in status["imageStatuses"][REPO]["tags"]] == ["v1", "v2", "v3", "v4"]
    assert "other" not in status["imageStatuses"]  # nothing reported for it yet
    assert status["imageStatuses"][REPO]["tags"][0] == {
        "tag": "v1", "phase": "Succeeded", "progress": 100, "completionTime": "c", "imageID": "x@sha256:1",
    }  # fmt: skip
    assert status["firstSyncStatus"] == first


def test_node_status_of_an_empty_spec_omits_image_statuses() -> None:
    assert node_status({}, {}, {}) == {"desired": 0, "succeeded": 0, "failed": 0, "pulling": 0, "waiting": 0}


def test_in_pulling_while_unfinished_or_reported_for_another_version() -> None:
    jobs = list(tag_jobs(spec({"tag": "v1", "version": 2})).values())
    done = {"desired": 1, "succeeded": 1, "imageStatuses": {REPO: {"tags": [{"tag": "v1", "version": 2}]}}}
    assert not in_pulling(jobs, done)
    assert in_pulling(jobs, {**done, "succeeded": 0})
    stale = {**done, "imageStatuses": {REPO: {"tags": [{"tag": "v1", "version": 1}]}}}
    assert in_pulling(jobs, stale)


tags = st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=4)
versions = st.integers(min_value=0, max_value=2)


@given(
    spec_tags=st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), versions, max_size=4),
    done=tags,
    running=st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]), versions, max_size=5),
)
def test_after_the_plan_each_active_tag_has_exactly_one_worker_of_its_version(
    spec_tags: dict[str, int], done: list[str], running: dict[str, int]
) -> None:
    jobs = {(REPO, t): TagJob(REPO, t, version=v) for t, v in spec_tags.items()}
    finished = {
        (REPO, t): TagState(tag=t, phase="Succeeded", completion_time="c") for t in done if t in spec_tags
    }
    now_running = {(REPO, t): v for t, v in running.items()}
    plan = plan_workers(jobs, finished, now_running)
    for key in plan.stop:
        del now_running[key]
    for job in plan.start:
        assert job.key not in now_running  # never two workers for one tag
        now_running[job.key] = job.version
    active = {key: job.version for key, job in jobs.items() if key not in finished}
    assert now_running == active
    # deciding again on the world the plan made changes nothing
    assert plan_workers(jobs, finished, now_running).empty
