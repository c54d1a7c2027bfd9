"""A canary release driven with ``kubectl kruise`` only, the namespace from the kubeconfig context.

``set image`` starts it; ``rollout status`` times out (exit 2) on a step waiting for approval;
``approve`` (by name and with ``-f``), ``describe rollout`` and ``undo --fast`` act on it; ``status``
exits 0 once it is released. A second release is cancelled by undoing the CloneSet: ``status``
exits 1.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import DEPLOYMENTS, NATIVE_DAEMONSETS, NODES, PODS
from kruise.rollouts.api.common import ROLLOUT_BATCH_ID_LABEL, ROLLOUT_ID_LABEL
from kruise.rollouts.api.rollouthistory import ROLLOUT_NAME_LABEL
from kruise.rollouts.release.constants import ROLLOUT_LABEL
from kruise.rollouts.resources import ROLLOUT_HISTORIES, ROLLOUTS
from kruise.rollouts.rollout.analysis_gate import REVISION_LABEL, release_canary
from tests.integration.cli.conftest import Kubectl
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

STEPS = [
    {"replicas": 1, "pause": {}},
    {"replicas": "50%", "traffic": "50%", "pause": {}},
    {"replicas": "100%", "traffic": "100%"},
]


async def test_a_release_with_kubectl_kruise(
    kube: KubeClient, namespace: str, kk: Kubectl, tmp_path: Path
) -> None:
    ro = h.rollout(namespace, STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute", replicas=4)
    idle = kk("rollout", "status", "rollout/web")
    assert idle.returncode == 0 and 'rollout "web" is healthy: no release in progress' in idle.stdout

    assert kk("set", "image", "cloneset/web", f"web={h.V2}").returncode == 0
    await h.wait_paused_at(kube, namespace, 1)
    waiting = kk("rollout", "status", "rollout", "web", "--timeout", "3s")
    assert waiting.returncode == 2, waiting.stdout + waiting.stderr
    assert "error: timed out waiting for the condition" in waiting.stderr
    assert "step=1/3 state=StepPaused outcome=AwaitingApproval" in waiting.stdout
    assert "pods: stable 3 (3 ready), canary 1 (1 ready)" in waiting.stdout

    described = kk("describe", "rollout", "web")
    assert described.returncode == 0, described.stderr
    for line in (f"{'Status:':<19} Progressing", f"{' Step:':<19}1/3", "      HttpRouteName: web"):
        assert line in described.stdout, described.stdout

    manifest = tmp_path / "rollout.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "metadata": {"name": "web"}}
        )
    )
    approved = kk("rollout", "approve", "-f", str(manifest))
    assert approved.stdout == "rollout.rollouts.kruise.io/web approved\n", approved.stderr
    await h.wait_paused_at(kube, namespace, 2)
    weights = kk("rollout", "status", "-w=false", "rollout/web")  # pflag's spelling
    assert weights.returncode == 0 and "traffic: web=50, web-canary=50" in weights.stdout, weights.stdout

    back = kk("rollout", "undo", "rollout/web", "--fast")
    assert back.stdout == "rollout.rollouts.kruise.io/web rolled back\n", back.stderr
    await h.wait_paused_at(kube, namespace, 1)
    assert kk("rollout", "approve", "rollout/web").returncode == 0
    await h.wait_paused_at(kube, namespace, 2)
    assert kk("rollout", "approve", "rollout/web").returncode == 0
    done = kk("rollout", "status", "rollout/web", "--timeout", "2m", timeout=150)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == 'rollout "web" successfully rolled out'
    refused = kk("rollout", "approve", "rollout/web")
    assert refused.returncode == 1
    assert "does not allow to approve, because current canary state is not 'StepPaused'" in refused.stderr


async def test_a_cancelled_release_exits_1(kube: KubeClient, namespace: str, kk: Kubectl) -> None:
    ro = h.rollout(namespace, STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute", replicas=4)
    assert kk("set", "image", "cloneset/web", f"web={h.V2}").returncode == 0
    await h.wait_paused_at(kube, namespace, 1)
    assert kk("rollout", "undo", "rollout/web").returncode == 0, "undo of a Rollout undoes its workload"

    async def over() -> bool:
        status = (await h.get_rollout(kube, namespace)).get("status") or {}
        return (
            status.get("phase") == "Healthy"
            and h.condition({"status": status}, "Progressing").get("reason") == "Completed"
        )

    await eventually(over, timeout=60, what="the cancelled release finalised")
    cancelled = kk("rollout", "status", "rollout/web", "--timeout", "30s")
    assert cancelled.returncode == 1, cancelled.stdout + cancelled.stderr
    assert 'rollout "web" was cancelled' in cancelled.stdout.splitlines()[-1]
    pods = [line.strip() for line in cancelled.stdout.splitlines() if line.strip().startswith("pods:")]
    assert pods and set(pods) == {"pods: stable 4 (4 ready)"}, "no canary count left from the undone release"


async def test_plan_reads_the_workload_the_rollout_names_a_native_daemonset(
    kube: KubeClient, namespace: str, kk: Kubectl
) -> None:
    """``rollout plan`` over a native DaemonSet plans its scheduled pods (one per KWOK node), not a
    Deployment of the same name (7 replicas here): it read every non-CloneSet as a Deployment."""
    labels = {"app": "agent"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "a", "image": h.V1}]}}
    daemonset = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": labels}, "template": template},
    }
    await kube.create(NATIVE_DAEMONSETS, daemonset, namespace)
    other = {"metadata": {"labels": {"app": "other"}}, "spec": template["spec"]}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "agent"},
        "spec": {"replicas": 7, "selector": {"matchLabels": {"app": "other"}}, "template": other},
    }
    await kube.create(DEPLOYMENTS, deployment, namespace)
    nodes = len((await kube.list(NODES))["items"])

    async def scheduled() -> bool:
        ds = await kube.get(NATIVE_DAEMONSETS, "agent", namespace)
        return (ds.get("status") or {}).get("desiredNumberScheduled") == nodes

    await eventually(scheduled, what=f"the DaemonSet on {nodes} nodes")
    rollout = {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "agent"},
        "spec": {
            "workloadRef": {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent"},
            "strategy": {"canary": {"steps": [{"replicas": 1}, {"replicas": "100%"}]}},
        },
    }
    await kube.create(ROLLOUTS, rollout, namespace)
    plan = kk("rollout", "plan", "rollout/agent", "-o", "json")
    assert plan.returncode == 0, plan.stderr
    steps = json.loads(plan.stdout)
    assert [(s["canaryPods"], s["stablePods"]) for s in steps] == [(1, nodes - 1), (nodes, 0)], steps


async def test_status_of_a_rollout_without_its_workload_exits_1_at_once(
    kube: KubeClient, namespace: str, kk: Kubectl
) -> None:
    """The Rollout says "Workload Not Found": ``status`` reports it and exits 1 without waiting for
    ``--timeout`` (it waited forever by default), with ``--watch`` as without."""
    ro = h.rollout(namespace, [{"replicas": 1}, {"replicas": "100%"}])
    ro["spec"]["workloadRef"] = {**h.CLONESET_API, "name": "nowhere"}
    await kube.create(ROLLOUTS, ro, namespace)

    async def reported() -> bool:
        status = (await h.get_rollout(kube, namespace)).get("status") or {}
        return status.get("message") == "Workload Not Found"

    await eventually(reported, timeout=30, what="the Rollout reports its workload missing")
    for flags in ((), ("-w=false",)):
        started = time.monotonic()
        shown = kk("rollout", "status", "rollout/web", "--timeout", "60s", *flags)
        assert shown.returncode == 1, shown.stdout + shown.stderr
        assert time.monotonic() - started < 30, "reported at once, not at the timeout"
        last = shown.stdout.splitlines()[-1]
        assert last == 'rollout "web" is degraded: Workload Not Found: CloneSet nowhere', shown.stdout


async def test_status_shows_the_current_releases_runs_and_batches_only(
    kube: KubeClient, namespace: str, kk: Kubectl
) -> None:
    """Runs of an earlier release of this Rollout, and pods of another app carrying the same
    rollout-id, are not the current release's: ``status`` listed every run labelled with the
    Rollout and counted every pod of the namespace with the rollout-id."""
    ro = h.rollout(namespace, STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute", replicas=4)
    assert kk("set", "image", "cloneset/web", f"web={h.V2}").returncode == 0
    now = await h.wait_paused_at(kube, namespace, 1)
    canary = release_canary(now["status"])
    rollout_id = h.canary_status(now)["observedRolloutID"]
    owner = {"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "name": "web"}
    owner["uid"] = now["metadata"]["uid"]
    metric = {"name": "m", "provider": {"web": {"url": "http://127.0.0.1:1/x"}}}
    for name, revision in ((f"web-{canary}-step1", canary), ("web-0ldrev-step1", "0ldrev")):
        labels = {ROLLOUT_LABEL: "web", REVISION_LABEL: revision}
        run = {
            "apiVersion": "rollouts.kruise.io/v1alpha1",
            "kind": "AnalysisRun",
            "metadata": {"name": name, "labels": labels, "ownerReferences": [owner]},
            "spec": {"metrics": [metric], "terminate": True},
        }
        await kube.create(ANALYSIS_RUNS, run, namespace)
    stray = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "other-app",
            "labels": {"app": "other", ROLLOUT_ID_LABEL: rollout_id, ROLLOUT_BATCH_ID_LABEL: "1"},
        },
        "spec": {"containers": [{"name": "c", "image": h.V1}]},
    }
    await kube.create(PODS, stray, namespace)

    shown = kk("rollout", "status", "rollout/web", "-w=false")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    analysis = [line.strip() for line in shown.stdout.splitlines() if line.strip().startswith("analysis:")]
    assert len(analysis) == 1 and analysis[0].startswith(f"analysis: web-{canary}-step1="), shown.stdout
    assert "0ldrev" not in shown.stdout
    assert f"rollout-id {rollout_id}: batch 1=1\n" in shown.stdout, shown.stdout


async def test_history_of_a_rollout_is_its_workloads_and_releases_are_behind_a_flag(
    kube: KubeClient, namespace: str, kk: Kubectl
) -> None:
    """``history rollout/NAME`` prints what ``history`` of its workload prints (kubectl-kruise's
    table, nothing appended); the recorded releases only with ``--releases``; ``--rollout-id``
    picks one of them and is refused without ``--releases``."""
    ro = h.rollout(namespace, STEPS, h.ROUTING_GATEWAY)
    await h.start(kube, namespace, ro, "httproute", replicas=2)
    release = {
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "kind": "RolloutHistory",
        "metadata": {"name": "web-7", "labels": {ROLLOUT_NAME_LABEL: "web"}},
        "spec": {"rollout": {"name": "web", "rolloutID": "7"}},
    }
    await kube.create(ROLLOUT_HISTORIES, release, namespace)
    steps = [{"canaryStepIndex": 1, "pods": [{"name": "web-abc", "ip": "10.0.0.9", "nodeName": "n1"}]}]
    await kube.patch(
        ROLLOUT_HISTORIES,
        "web-7",
        {"status": {"phase": "completed", "canarySteps": steps}},
        namespace,
        subresource="status",
    )

    workload = kk("rollout", "history", "cloneset/web")
    of_rollout = kk("rollout", "history", "rollout/web")
    assert workload.returncode == of_rollout.returncode == 0, of_rollout.stderr
    assert of_rollout.stdout == workload.stdout and "REVISION" in workload.stdout
    listed = kk("rollout", "history", "rollout/web", "--releases")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[2].split()[:4] == ["7", "completed", "1", "1"], listed.stdout
    one = kk("rollout", "history", "rollout/web", "--releases", "--rollout-id", "7")
    assert one.returncode == 0 and "1     web-abc  10.0.0.9" in one.stdout, one.stdout + one.stderr
    refused = kk("rollout", "history", "rollout/web", "--rollout-id", "7")
    assert refused.returncode == 2 and "add --releases" in refused.stderr, refused.stderr
    not_a_rollout = kk("rollout", "history", "cloneset/web", "--releases")
    assert not_a_rollout.returncode == 2 and "rollouts only" in not_a_rollout.stderr
