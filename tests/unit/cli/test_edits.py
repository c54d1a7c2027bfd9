"""kubectl-kruise verbs on objects (pure): patches and upstream's refusals."""

from __future__ import annotations

import datetime
from typing import Any

import jsonpatch
import pytest

from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, SERVICES
from kruise.rollouts.cli.edits import (
    EditError,
    abort_retry_patch,
    approve_patch,
    cloneset_undo_patch,
    deployment_undo_patch,
    fast_rollback_patch,
    pause_patch,
    pick_deployment_revision,
    pick_revision,
    restart_edit,
)
from kruise.rollouts.cli.refs import Ref
from kruise.rollouts.resources import ROLLOUTS

RO, CS, DEPLOY = Ref(ROLLOUTS, "web", "ns"), Ref(CLONESETS, "web", "ns"), Ref(DEPLOYMENTS, "web", "ns")


def template(image: str, **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web", **labels}},
        "spec": {"containers": [{"name": "main", "image": image}]},
    }


@pytest.mark.parametrize(
    ("ref", "obj", "patch"),
    [
        (RO, {"spec": {"strategy": {}}}, {"spec": {"strategy": {"paused": True}}}),
        (CS, {"spec": {"updateStrategy": {"paused": False}}}, {"spec": {"updateStrategy": {"paused": True}}}),
        (DEPLOY, {"spec": {}}, {"spec": {"paused": True}}),
    ],
)
def test_pause_each_kind(ref: Ref, obj: dict[str, Any], patch: dict[str, Any]) -> None:
    assert pause_patch(ref, obj, True) == patch


def test_pause_and_resume_refuse_when_already_so() -> None:
    with pytest.raises(EditError, match=r"^is already paused$"):
        pause_patch(CS, {"spec": {"updateStrategy": {"paused": True}}}, True)
    with pytest.raises(EditError, match=r"^is not paused$"):
        pause_patch(RO, {"spec": {"strategy": {}}}, False)
    with pytest.raises(EditError, match="pausing is not supported"):
        pause_patch(Ref(SERVICES, "web", "ns"), {}, True)


def test_approve_only_a_paused_step() -> None:
    paused = {"status": {"canaryStatus": {"currentStepState": "StepPaused"}}}
    assert approve_patch(RO, paused) == {"status": {"canaryStatus": {"currentStepState": "StepReady"}}}
    blue_green = {"status": {"blueGreenStatus": {"currentStepState": "StepPaused"}}}
    assert approve_patch(RO, blue_green) == {"status": {"blueGreenStatus": {"currentStepState": "StepReady"}}}
    with pytest.raises(EditError, match="current canary state is not 'StepPaused'"):
        approve_patch(RO, {"status": {"canaryStatus": {"currentStepState": "StepUpgrade"}}})
    with pytest.raises(EditError, match="no need to approve"):
        approve_patch(RO, {"status": {}})
    with pytest.raises(EditError, match="approving is not supported"):
        approve_patch(CS, paused)


def test_restart() -> None:
    how, patch = restart_edit(DEPLOY, {"spec": {}}, "2026-01-01T00:00:00Z")
    assert how == "merge"
    assert patch["spec"]["template"]["metadata"]["annotations"] == {
        "kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"
    }
    with pytest.raises(EditError, match="can't restart paused deployment"):
        restart_edit(DEPLOY, {"spec": {"paused": True}}, "t")
    cs = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "a", "env": [{"name": "RESTARTED_AT", "value": "old"}]},
                        {"name": "b"},
                    ]
                }
            }
        }
    }
    how, body = restart_edit(CS, cs, "t2")
    assert how == "replace"
    assert [c["env"] for c in body["spec"]["template"]["spec"]["containers"]] == [
        [{"name": "RESTARTED_AT", "value": "t2"}],
        [{"name": "RESTARTED_AT", "value": "t2"}],
    ]
    assert cs["spec"]["template"]["spec"]["containers"][1] == {"name": "b"}, "the input is not touched"


def test_fast_rollback_goes_to_the_latest_earlier_step_without_traffic_and_most_pods() -> None:
    steps = [
        {"replicas": 1},
        {"replicas": "30%"},
        {"replicas": "50%", "traffic": "50%"},
        {"replicas": "100%"},
    ]
    rollout = {"spec": {"strategy": {"canary": {"steps": steps}}}, "status": {"currentStepIndex": 4}}
    assert fast_rollback_patch(rollout) == {"status": {"canaryStatus": {"nextStepIndex": 2}}}
    with pytest.raises(EditError, match="already at the first step"):
        fast_rollback_patch({**rollout, "status": {"currentStepIndex": 1}})


def test_pick_revision() -> None:
    revisions = {1: "a", 2: "b", 5: "c"}
    assert pick_revision(revisions, 0) == 2
    assert pick_revision(revisions, 1) == 1
    with pytest.raises(EditError, match="unable to find specified revision 3 in history"):
        pick_revision(revisions, 3)
    with pytest.raises(EditError, match="no last revision to roll back to"):
        pick_revision({1: "a"}, 0)


def test_undo_of_a_deployment_held_by_a_canary_release_restores_the_newest_replicaset() -> None:
    held = {
        "metadata": {"annotations": {"rollouts.kruise.io/in-progressing": "{}"}},
        "spec": {"paused": True, "template": template("v2")},
    }
    rs = {n: {"spec": {"template": template(f"v{n}", **{"pod-template-hash": f"h{n}"})}} for n in (1,)}
    assert pick_deployment_revision(held, rs, 0) == 1, (
        "v2 has no ReplicaSet yet: the release has not moved history"
    )
    rs[2] = {"spec": {"template": template("v2", **{"pod-template-hash": "h2"})}}
    assert pick_deployment_revision(held, rs, 0) == 1, "rolling back during a rollback: the one before"


def test_deployment_undo_patch_drops_the_hash_and_keeps_bookkeeping() -> None:
    deploy = {
        "metadata": {
            "annotations": {
                "deployment.kubernetes.io/revision": "3",
                "team": "old",
                "rollouts.kruise.io/x": "y",
            }
        },
        "spec": {"template": template("v3")},
    }
    rs = {
        "metadata": {"annotations": {"deployment.kubernetes.io/revision": "1", "team": "a"}},
        "spec": {"template": template("v1", **{"pod-template-hash": "abc"})},
    }
    patch = deployment_undo_patch(deploy, rs)
    assert patch is not None
    restored = jsonpatch.apply_patch(deploy, patch)
    assert restored["spec"]["template"] == template("v1")
    assert restored["metadata"]["annotations"] == {
        "deployment.kubernetes.io/revision": "3",
        "rollouts.kruise.io/x": "y",
        "team": "a",
    }
    assert deployment_undo_patch({**deploy, "spec": {"template": template("v1")}}, rs) is None


def test_cloneset_undo_replaces_the_whole_template() -> None:
    cs = {
        "spec": {
            "template": {
                **template("v2"),
                "metadata": {"labels": {"app": "web"}, "annotations": {"new": "1"}},
            }
        }
    }
    patch = cloneset_undo_patch(cs, template("v1"))
    assert patch == [{"op": "replace", "path": "/spec/template", "value": template("v1")}]
    assert cloneset_undo_patch({"spec": {"template": template("v1")}}, template("v1")) is None


def test_abort_and_retry_patch_the_aborted_condition_under_the_read_version() -> None:
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    rolling = {
        "metadata": {"resourceVersion": "7"},
        "status": {
            "phase": "Progressing",
            "conditions": [{"type": "Progressing", "status": "True", "reason": "InRolling"}],
        },
    }
    patch = abort_retry_patch(RO, rolling, retry=False, now=now)
    assert patch["metadata"] == {"resourceVersion": "7"}
    progressing, aborted = patch["status"]["conditions"]
    assert progressing == rolling["status"]["conditions"][0]
    assert (aborted["type"], aborted["status"], aborted["reason"]) == ("Aborted", "True", "AbortedByUser")
    with pytest.raises(EditError, match="not aborted"):
        abort_retry_patch(RO, rolling, retry=True, now=now)
    held = {
        "metadata": {"resourceVersion": "9"},
        "status": {
            "phase": "Progressing",
            "conditions": [
                {"type": "Progressing", "status": "True", "reason": "Cancelling"},
                {"type": "Aborted", "status": "True", "reason": "ProgressDeadlineExceeded"},
            ],
        },
    }
    retried = abort_retry_patch(RO, held, retry=True, now=now)["status"]["conditions"][1]
    assert (retried["status"], retried["reason"]) == ("False", "RetryRequested")
    with pytest.raises(EditError, match="already aborted"):
        abort_retry_patch(
            RO,
            {
                **held,
                "status": {
                    **held["status"],
                    "conditions": [
                        {"type": "Progressing", "status": "True", "reason": "InRolling"},
                        {"type": "Aborted", "status": "True", "reason": "AbortedByUser"},
                    ],
                },
            },
            retry=False,
            now=now,
        )
    with pytest.raises(EditError, match="aborting is not supported"):
        abort_retry_patch(CS, rolling, retry=False, now=now)
