"""``rollout status`` of a Rollout (pure parts): when it ends, with what, and what it shows; and
which of its meanings ``rollout history`` takes for its flags."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.core.kube.resources import CLONESETS
from kruise.rollouts.cli.refs import Ref
from kruise.rollouts.cli.rollout_history import HistoryMode, history_mode
from kruise.rollouts.cli.status_view import (
    current_release_pods,
    current_release_runs,
    degraded_reason,
    final_line,
    finished_exit_code,
    progress_of,
)
from kruise.rollouts.resources import ROLLOUTS
from kruise.rollouts.rollout.analysis_gate import release_run_names, run_request, step_analysis
from kruise.rollouts.rollout.outcome import Outcome, release_outcome
from kruise.rollouts.workloads.podlabels import batch_summary


def rollout(status: dict[str, Any], generation: int = 2) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "generation": generation},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "gone"}
        },
        "status": status,
    }


NOT_FOUND = {"observedGeneration": 2, "phase": "Initial", "message": "Workload Not Found"}


@pytest.mark.parametrize(
    ("status", "missing", "expected"),
    [
        pytest.param(NOT_FOUND, True, "Workload Not Found: CloneSet gone", id="reported and missing"),
        pytest.param(NOT_FOUND, False, "", id="the workload appeared since: wait"),
        pytest.param({**NOT_FOUND, "observedGeneration": 1}, True, "", id="an older generation's status"),
        pytest.param({}, True, "", id="no controller has looked yet: wait"),
        pytest.param(
            {"observedGeneration": 2, "phase": "Healthy", "message": "rollout is healthy"},
            True,
            "",
            id="healthy",
        ),
    ],
)
def test_a_missing_workload_is_degraded_only_when_the_rollout_says_so(
    status: dict[str, Any], missing: bool, expected: str
) -> None:
    assert degraded_reason(rollout(status), workload_missing=missing) == expected


def test_degraded_ends_the_watch_with_exit_1_and_says_why() -> None:
    ro = rollout(NOT_FOUND)
    assert release_outcome(ro) is Outcome.PENDING  # the outcome alone would wait forever
    waiting = progress_of(ro, release_outcome(ro))
    assert finished_exit_code(waiting) is None
    degraded = progress_of(ro, release_outcome(ro), degraded=degraded_reason(ro, workload_missing=True))
    assert finished_exit_code(degraded) == 1
    assert final_line(degraded) == 'rollout "web" is degraded: Workload Not Found: CloneSet gone'


@pytest.mark.parametrize(
    ("outcome", "code"),
    [
        (Outcome.SUCCEEDED, 0),
        (Outcome.IDLE, 0),
        (Outcome.FAILED, 1),
        (Outcome.CANCELLED, 1),
        (Outcome.PAUSED, None),
    ],
)
def test_outcomes_keep_their_exit_codes(outcome: Outcome, code: int | None) -> None:
    assert finished_exit_code(progress_of(rollout({}), outcome)) == code


def releasing(canary: str = "v2hash", rollout_id: str = "r2") -> dict[str, Any]:
    ro = rollout({"observedGeneration": 2, "phase": "Progressing"})
    ro["metadata"]["uid"] = "uid-now"
    ro["spec"]["strategy"] = {"canary": {"steps": [{"replicas": 1}, {"replicas": 2}]}}
    ro["status"]["canaryStatus"] = {"canaryRevision": canary, "observedRolloutID": rollout_id}
    return ro


def run(name: str, uid: str = "uid-now", revision: str | None = None, rollout: str = "web") -> dict[str, Any]:
    labels = {"rollouts.kruise.io/rollout": rollout}
    if revision is not None:
        labels["rollouts.kruise.io/canary-revision"] = revision
    return {"metadata": {"name": name, "labels": labels, "ownerReferences": [{"uid": uid}]}}


def test_only_the_current_releases_analysis_runs_are_shown() -> None:
    runs = [
        run("web-v1hash-step1", revision="v1hash"),  # the release before
        run("web-v2hash-step1", revision="v2hash"),  # this one
        run("web-v2hash-background"),  # this one, made before the revision label
        run("web-v1hash-step2"),  # the release before, unlabelled
        run("web-v2hash-step2", uid="uid-gone", revision="v2hash"),  # a deleted Rollout of this name
        run("web-v2hash-step9"),  # no such step: not a gate of this release
    ]
    names = [r["metadata"]["name"] for r in current_release_runs(runs, releasing())]
    assert names == ["web-v2hash-step1", "web-v2hash-background"]
    assert current_release_runs(runs, rollout({"phase": "Healthy"})) == [], "no release, no runs"


def pod(revision: str, rollout_id: str, batch: str) -> dict[str, Any]:
    labels = {
        "controller-revision-hash": f"web-{revision}",
        "rollouts.kruise.io/rollout-id": rollout_id,
        "rollouts.kruise.io/rollout-batch-id": batch,
    }
    return {"metadata": {"labels": labels}}


def test_batches_count_the_current_releases_pods_only() -> None:
    """Pods of the release before carried the same rollout-id (not changed between releases)."""
    pods = [
        pod("v2hash", "r2", "1"),
        pod("v2hash", "r2", "2"),
        pod("v1hash", "r2", "1"),
        pod("v1hash", "r2", "2"),
    ]
    sub = releasing()["status"]["canaryStatus"]
    current = current_release_pods(pods, "controller-revision-hash", sub)
    assert batch_summary(current, "r2") == "rollout-id r2: batch 1=1, 2=1"
    assert batch_summary(pods, "r2") == "rollout-id r2: batch 1=2, 2=2", "what it showed before"


def test_analysis_runs_are_labelled_with_their_release_revision() -> None:
    ro = releasing()
    ro["spec"]["strategy"]["canary"]["steps"][0]["analysis"] = {"templates": [{"templateName": "t"}]}
    gate = step_analysis(ro, 1)
    assert gate is not None
    request = run_request(ro, ro["status"], gate, "step1")
    assert request["labels"]["rollouts.kruise.io/canary-revision"] == "v2hash"
    assert request["name"] in release_run_names(ro, "v2hash")


ROLLOUT_REF = Ref(ROLLOUTS, "web", "ns")
CLONESET_REF = Ref(CLONESETS, "web", "ns")


@pytest.mark.parametrize(
    ("refs", "flags", "expected"),
    [
        pytest.param([CLONESET_REF], {}, HistoryMode.REVISIONS, id="a workload: kubectl-kruise's"),
        pytest.param([ROLLOUT_REF], {}, HistoryMode.REVISIONS, id="a Rollout: its workload's revisions"),
        pytest.param([ROLLOUT_REF], {"revision": 2}, HistoryMode.REVISIONS, id="--revision"),
        pytest.param([ROLLOUT_REF], {"releases": True}, HistoryMode.RELEASES, id="--releases"),
        pytest.param(
            [ROLLOUT_REF],
            {"releases": True, "rollout_id": "7"},
            HistoryMode.RELEASE,
            id="--releases --rollout-id",
        ),
        pytest.param([ROLLOUT_REF], {"rollout_id": "7"}, "add --releases", id="--rollout-id alone"),
        pytest.param([CLONESET_REF], {"releases": True}, "rollouts only", id="--releases of a CloneSet"),
        pytest.param(
            [ROLLOUT_REF], {"releases": True, "revision": 2}, "does not go with", id="--releases --revision"
        ),
    ],
)
def test_history_flags_pick_one_meaning(refs: list[Ref], flags: dict[str, Any], expected: object) -> None:
    args = {"releases": False, "rollout_id": "", "revision": 0, **flags}
    if isinstance(expected, HistoryMode):
        assert history_mode(refs, **args) is expected
    else:
        with pytest.raises(ValueError, match=str(expected)):
            history_mode(refs, **args)
