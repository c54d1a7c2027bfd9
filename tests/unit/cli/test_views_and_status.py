"""Status verdicts of workloads, migration moves, expose's Service, create job, history text."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.rollouts.cli.create import job_from_cronjob, job_from_image
from kruise.rollouts.cli.edits import EditError
from kruise.rollouts.cli.expose import service_for
from kruise.rollouts.cli.migration import Move, cloneset_from_deployment, next_move
from kruise.rollouts.cli.status_view import cloneset_verdict, deployment_verdict, pods_by_role
from kruise.rollouts.cli.views import describe_rollout, history_table, human_age, pod_template


def cloneset(replicas: int, partition: Any, **status: int) -> dict[str, Any]:
    return {
        "metadata": {"name": "web", "generation": 2},
        "spec": {"replicas": replicas, "updateStrategy": {"partition": partition}},
        "status": {"observedGeneration": 2, "updateRevision": "web-2", **status},
    }


@pytest.mark.parametrize(
    ("cs", "message", "done"),
    [
        (
            {**cloneset(4, 0), "status": {"observedGeneration": 1}},
            "Waiting for CloneSet spec update to be observed...",
            False,
        ),
        (
            cloneset(4, 0, updatedReplicas=1, readyReplicas=4),
            'Waiting for CloneSet "web" rollout to finish: 1 out of 4 new pods have been updated...',
            False,
        ),
        (
            cloneset(4, "50%", updatedReplicas=1, readyReplicas=4),
            "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...",
            False,
        ),
        (cloneset(4, 0, updatedReplicas=4, readyReplicas=3), "Waiting for 1 pods to be ready...", False),
        (
            cloneset(4, 2, updatedReplicas=2, readyReplicas=4),
            "partitioned roll out complete: 2 new pods have been updated...",
            True,
        ),
        (
            cloneset(4, 0, updatedReplicas=4, readyReplicas=4, availableReplicas=4),
            "CloneSet rolling update complete 4 pods at revision web-2...",
            True,
        ),
    ],
)
def test_cloneset_verdicts(cs: dict[str, Any], message: str, done: bool) -> None:
    verdict = cloneset_verdict(cs)
    assert (verdict.message, verdict.done) == (message, done)


def test_deployment_verdicts() -> None:
    deploy = {
        "metadata": {"name": "web", "generation": 1},
        "spec": {"replicas": 2},
        "status": {"observedGeneration": 1, "updatedReplicas": 2, "replicas": 3, "availableReplicas": 2},
    }
    assert (
        deployment_verdict(deploy).message
        == 'Waiting for deployment "web" rollout to finish: 1 old replicas are pending termination...'
    )
    deploy["status"]["replicas"] = 2
    assert deployment_verdict(deploy).message == 'deployment "web" successfully rolled out'
    assert (
        deployment_verdict(deploy, revision=3).error
        == "desired revision (3) is different from the running revision (0)"
    )
    deploy["status"]["conditions"] = [{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}]
    assert deployment_verdict(deploy).error == 'deployment "web" exceeded its progress deadline'


def test_pods_are_counted_by_role() -> None:
    def pod(rev: str, ready: bool) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"controller-revision-hash": rev}},
            "status": {"conditions": [{"type": "Ready", "status": str(ready)}]},
        }

    pods = [pod("web-aaa", True), pod("web-bbb", True), pod("web-bbb", False), pod("web-ccc", True)]
    assert pods_by_role(pods, "controller-revision-hash", "aaa", "bbb") == {
        "stable": (1, 1),
        "canary": (2, 1),
        "web-ccc": (1, 1),
    }


def test_after_an_undo_pods_at_the_stable_revision_are_not_counted_canary() -> None:
    """``rollout status`` after ``rollout undo`` (a release cancelled by restoring the workload's
    template): the Rollout then records the stable revision as ``canaryRevision`` too, so the
    last release's canary count must not be shown for the stable pods."""

    def pod(rev: str) -> dict[str, Any]:
        return {
            "metadata": {"labels": {"controller-revision-hash": rev}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        }

    pods = [pod("web-aaa") for _ in range(4)]
    assert pods_by_role(pods, "controller-revision-hash", "aaa", "aaa") == {"stable": (4, 4)}


def test_migration_moves_at_most_max_surge_ahead() -> None:
    kw = {"src_replicas": 5, "dst_replicas": 0, "dst_available": 0}
    assert next_move(5, 2, 0, 0, **kw) == Move(out=2)
    assert next_move(5, 2, 0, 2, src_replicas=5, dst_replicas=2, dst_available=1) == Move(), (
        "wait for availability"
    )
    assert next_move(5, 2, 0, 2, src_replicas=5, dst_replicas=2, dst_available=2) == Move(in_=2)
    assert next_move(5, 2, 5, 5, **kw) == Move(done=True)
    deploy = {
        "metadata": {
            "name": "web",
            "namespace": "ns",
            "labels": {"app": "web"},
            "annotations": {"deployment.kubernetes.io/revision": "4", "team": "a"},
        },
        "spec": {
            "replicas": 5,
            "paused": False,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"x": 1},
            "strategy": {"rollingUpdate": {"maxSurge": "25%"}},
        },
    }
    cs = cloneset_from_deployment(deploy, "web-cs", copy_replicas=False)
    assert cs["metadata"] == {
        "name": "web-cs",
        "namespace": "ns",
        "labels": {"app": "web"},
        "annotations": {"team": "a"},
    }
    assert cs["spec"]["replicas"] == 0
    assert cs["spec"]["updateStrategy"] == {"type": "ReCreate", "paused": False, "maxSurge": "25%"}
    assert cloneset_from_deployment(deploy, "x", copy_replicas=True)["spec"]["replicas"] == 5


def test_expose_builds_the_service_from_the_workload() -> None:
    workload = {
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "m",
                            "ports": [{"containerPort": 8080}, {"containerPort": 9090, "protocol": "UDP"}],
                        }
                    ]
                }
            },
        },
    }
    svc = service_for(workload)
    assert svc["spec"] == {
        "ports": [
            {"port": 8080, "protocol": "TCP", "targetPort": 8080, "name": "port-1"},
            {"port": 9090, "protocol": "UDP", "targetPort": 9090, "name": "port-2"},
        ],
        "selector": {"app": "web"},
    }
    one = service_for(workload, name="front", port="80", target_port="http", service_type="NodePort")
    assert one["metadata"]["name"] == "front"
    assert one["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": "http"}]
    assert one["spec"]["type"] == "NodePort"
    with pytest.raises(EditError, match="expressions are not supported"):
        service_for({"metadata": {"name": "x"}, "spec": {"selector": {"matchExpressions": [{}]}}})


def test_jobs() -> None:
    assert job_from_image("j", "busybox", ["echo", "hi"])["spec"]["template"]["spec"] == {
        "containers": [{"name": "j", "image": "busybox", "command": ["echo", "hi"]}],
        "restartPolicy": "Never",
    }
    cronjob = {
        "metadata": {"name": "nightly", "uid": "u1"},
        "spec": {
            "jobTemplate": {
                "metadata": {"labels": {"a": "b"}, "annotations": {"x": "y"}},
                "spec": {"backoffLimit": 1},
            }
        },
    }
    job = job_from_cronjob("manual-1", cronjob)
    assert job["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual", "x": "y"}
    assert job["metadata"]["ownerReferences"][0] == {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "name": "nightly",
        "uid": "u1",
    }
    assert job["spec"] == {"backoffLimit": 1}


def test_history_and_templates_read_as_kubectl() -> None:
    assert (
        history_table({2: "", 1: "kubectl set image"})
        == "REVISION  CHANGE-CAUSE\n1         kubectl set image\n2         <none>\n"
    )
    assert history_table({}) == "No rollout history found.\n"
    text = pod_template(
        {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "m", "image": "web:1"}]}}
    )
    assert "Pod Template:" in text and "Image:\tweb:1" in text and "Labels:\tapp=web" in text
    assert [human_age(s) for s in (5, 125, 7300, 200000)] == ["5s", "2m", "2h", "2d"]


def test_describe_rollout_marks_the_current_step() -> None:
    rollout = {
        "metadata": {"name": "web", "namespace": "shop", "generation": 1},
        "spec": {
            "strategy": {
                "canary": {
                    "steps": [{"replicas": 1, "traffic": "10%"}, {"replicas": "100%"}],
                    "trafficRoutings": [{"service": "web", "gateway": {"httpRouteName": "web"}}],
                }
            }
        },
        "status": {
            "observedGeneration": 1,
            "phase": "Progressing",
            "message": "m",
            "canaryStatus": {
                "currentStepIndex": 1,
                "currentStepState": "StepPaused",
                "stableRevision": "a",
                "canaryRevision": "b",
            },
        },
    }
    workload = {
        "spec": {"replicas": 4, "template": {"spec": {"containers": [{"image": "web:2"}]}}},
        "status": {"updatedReplicas": 1},
    }
    text = describe_rollout(
        rollout, workload, [["web-1", "1/1", "1", "b", "1m", "0", "Running"]], color=False
    )
    assert f"{'Name:':<19}web\n" in text and f"{' Step:':<19}1/2\n" in text
    assert f"{'     State:':<19}StepPaused" in text
    assert "      HttpRouteName: web" in text
    assert "Update Revision:   b" in text and " Desired:          4" in text
    assert text.rstrip().endswith("web-1  1/1    1         b         1m   0         Running")


def test_scaledown_deletes_exactly_the_named_pods() -> None:
    from kruise.rollouts.cli.scaledown import scaled_down

    cs = {"spec": {"replicas": 4, "scaleStrategy": {"podsToDelete": ["web-a"]}}}
    assert scaled_down(cs, ["web-b", "web-c"])["spec"] == {
        "replicas": 2,
        "scaleStrategy": {"podsToDelete": ["web-a", "web-b", "web-c"]},
    }
    assert cs["spec"]["replicas"] == 4, "the input is not touched"
    with pytest.raises(EditError, match="cannot delete 5 pods of 4 replicas"):
        scaled_down(cs, ["a", "b", "c", "d", "e"])


def test_the_watch_panel_shows_step_pods_and_weights() -> None:
    from rich.console import Console

    from kruise.rollouts.cli.rollout_status import panel
    from kruise.rollouts.cli.status_view import progress_lines, progress_of
    from kruise.rollouts.rollout.outcome import Outcome

    rollout = {
        "metadata": {"name": "web"},
        "spec": {"strategy": {"canary": {"steps": [{}, {}, {}]}}},
        "status": {
            "phase": "Progressing",
            "message": "waiting",
            "canaryStatus": {"currentStepIndex": 2, "currentStepState": "StepPaused"},
        },
    }
    progress = progress_of(
        rollout,
        Outcome.AWAITING_APPROVAL,
        pods={"stable": (5, 5), "canary": (5, 4)},
        weights=["web=50", "web-canary=50"],
    )
    console = Console(width=100, record=True, force_terminal=False)
    console.print(panel(progress))
    text = console.export_text()
    for piece in (
        "rollout/web: AwaitingApproval",
        "2/3 StepPaused",
        "stable: 5 (5 ready)",
        "canary: 5 (4 ready)",
        "web=50, web-canary=50",
    ):
        assert piece in text, text
    assert progress_lines(progress) == [
        "phase=Progressing step=2/3 state=StepPaused outcome=AwaitingApproval: waiting",
        "  pods: stable 5 (5 ready), canary 5 (4 ready)",
        "  traffic: web=50, web-canary=50",
    ]


def test_httproute_weights_show_as_shares_of_their_rule() -> None:
    from kruise.rollouts.cli.rollout_status import _rule_shares

    assert _rule_shares([{"name": "web"}]) == ["web=100"]  # Gateway API's default weight 1
    assert _rule_shares([{"name": "web", "weight": 1}]) == ["web=100"]
    assert _rule_shares([{"name": "web", "weight": 95}, {"name": "web-canary", "weight": 5}]) == [
        "web=95",
        "web-canary=5",
    ]
    assert _rule_shares([{"name": "web", "weight": 0}]) == ["web=0"]


def test_rich_tables_are_not_cut_at_80_columns_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    """Piped (stdout not a terminal), a table keeps its content's width: rich's default of 80
    columns folded and cut the ``rollout plan`` table in logs and pipes."""
    from rich.table import Table

    from kruise.rollouts.cli.output import PIPED_WIDTH, table_console

    console = table_console()
    assert not console.is_terminal and console.width == PIPED_WIDTH
    headers = ["STEP", "REPLICAS", "CANARY PODS", "STABLE PODS", "CANARY %", "STABLE %", "MATCHES", "PAUSE"]
    table = Table()
    for header in [*headers, "A VERY LONG COLUMN HEADER THAT DOES NOT FIT"]:
        table.add_column(header)
    table.add_row(*[str(i) for i in range(len(headers) + 1)])
    console.print(table)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5, "one header row, one data row, three rules: nothing folded"
    assert all(h in lines[1] for h in [*headers, "A VERY LONG COLUMN HEADER THAT DOES NOT FIT"])
    assert len(lines[1]) > 80
