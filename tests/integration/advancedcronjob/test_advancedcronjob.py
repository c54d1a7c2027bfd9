"""AdvancedCronJob through ``kruise manager`` on the real control plane.

Upstream's e2e ``test/e2e/apps/v1alpha1/advancedcronjob.go`` (one test per ``It``), then the
scheduling rules end to end on second-scale schedules (``@every 2s``) in a non-UTC ``timeZone``:
children named by scheduled time, Forbid skipping runs while one is active, history limits.
BroadcastJob pods run on the test's own KWOK nodes and finish by the
``kwok.kruise.local/exit-code`` / ``run-duration`` annotations.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from kruise.core.api.base import parse_time
from kruise.core.errors import InvalidError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import ADVANCEDCRONJOBS, BROADCASTJOBS, JOBS, PODS
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.broadcastjob.helpers import EXIT_CODE, RUN_DURATION, condition, new_job, node_label
from tests.integration.test_manager_metrics import scrape
from tests.support.nodes import NodePool
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")
JSON = dict[str, Any]
SCHEDULED_AT = "apps.kruise.io/scheduled-at"


def new_acj(name: str, template: JSON, **spec: Any) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": name},
        "spec": {"schedule": "@every 2s", "timeZone": "Europe/Berlin", "template": template, **spec},
    }


def bcj_template(pool: NodePool, *, run: str = "1s", exit_code: int = 0) -> JSON:
    job = new_job("tmpl", pool, run=run, exit_code=exit_code)
    return {"broadcastJobTemplate": {"metadata": {"labels": {"acj-test": "yes"}}, "spec": job["spec"]}}


async def children(kube: KubeClient, res: Any, namespace: str, acj: str) -> list[JSON]:
    items = (await kube.list(res, namespace))["items"]
    return [
        c
        for c in items
        if any(
            r.get("kind") == "AdvancedCronJob" and r.get("name") == acj
            for r in c["metadata"].get("ownerReferences") or ()
        )
    ]


def check_child(child: JSON, acj: str) -> int:
    """The child's name is ``<acj>-<unix scheduled time>`` and matches its annotation; returns it."""
    scheduled = parse_time(child["metadata"]["annotations"][SCHEDULED_AT])
    assert scheduled is not None
    stamp = int(scheduled.timestamp())
    assert child["metadata"]["name"] == f"{acj}-{stamp}"
    ref = child["metadata"]["ownerReferences"][0]
    assert ref["controller"] is True and ref["kind"] == "AdvancedCronJob" and ref["name"] == acj
    return stamp


async def test_should_create_and_schedule_advancedcronjob_with_job_template(
    kube: KubeClient, namespace: str
) -> None:
    """AdvancedCronJobBasic, Job template: batch/v1 Jobs appear, named by scheduled time, and the
    status names the type and the last schedule time."""
    template = {
        "jobTemplate": {
            "spec": {
                "template": {
                    "metadata": {"annotations": {EXIT_CODE: "0", RUN_DURATION: "1s"}},
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
                    },
                }
            }
        }
    }
    await kube.create(ADVANCEDCRONJOBS, new_acj("acj-job", template), namespace)

    async def made() -> list[JSON] | None:
        jobs = await children(kube, JOBS, namespace, "acj-job")
        return jobs or None

    jobs = await eventually(made, timeout=20, interval=0.2, what="a Job from the AdvancedCronJob")
    check_child(jobs[0], "acj-job")

    async def job_pod() -> list[JSON] | None:
        selector = f"job-name={jobs[0]['metadata']['name']}"
        return (await kube.list(PODS, namespace, label_selector=selector))["items"] or None

    await eventually(
        job_pod, timeout=15, interval=0.2, what="kube-controller-manager's job-controller made a pod"
    )
    acj = await eventually(
        lambda: _status(kube, namespace, "acj-job", "lastScheduleTime"), timeout=10, what="status"
    )
    assert acj["status"]["type"] == "Job"
    stored = await kube.get(ADVANCEDCRONJOBS, "acj-job", namespace)
    assert stored["spec"]["concurrencyPolicy"] == "Allow"  # the mutating webhook's defaults
    assert (stored["spec"]["successfulJobsHistoryLimit"], stored["spec"]["failedJobsHistoryLimit"]) == (3, 1)


async def _status(kube: KubeClient, namespace: str, name: str, key: str) -> JSON | None:
    acj = await kube.get(ADVANCEDCRONJOBS, name, namespace)
    return acj if (acj.get("status") or {}).get(key) else None


async def test_should_create_and_schedule_advancedcronjob_with_broadcastjob_template(
    kube: KubeClient, namespace: str, nodes: NodePool, manager: ManagerProcess
) -> None:
    """AdvancedCronJobBasic, BroadcastJob template: BroadcastJobs appear with the template's
    labels, run on the nodes and complete; status.type is BroadcastJob."""
    await nodes.add_nodes(1, node_label(nodes))
    await kube.create(ADVANCEDCRONJOBS, new_acj("acj-bcj", bcj_template(nodes)), namespace)

    async def completed() -> JSON | None:
        for c in await children(kube, BROADCASTJOBS, namespace, "acj-bcj"):
            if condition(c, "Complete"):
                return c
        return None

    job = await eventually(completed, timeout=25, interval=0.2, what="a completed BroadcastJob")
    check_child(job, "acj-bcj")
    assert job["metadata"]["labels"]["acj-test"] == "yes"
    acj = await kube.get(ADVANCEDCRONJOBS, "acj-bcj", namespace)
    assert acj["status"]["type"] == "BroadcastJob"
    metrics = scrape(manager)
    assert metrics.value("controller_runtime_reconcile_total", controller="advancedcronjob-controller") > 0


async def test_should_pause_and_resume_advancedcronjob(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """AdvancedCronJobPause: a paused ACJ creates nothing over several ticks; resumed, it does."""
    await nodes.add_nodes(1, node_label(nodes))
    await kube.create(ADVANCEDCRONJOBS, new_acj("acj-pause", bcj_template(nodes), paused=True), namespace)
    await asyncio.sleep(5)
    assert await children(kube, BROADCASTJOBS, namespace, "acj-pause") == []
    await kube.patch(
        ADVANCEDCRONJOBS, "acj-pause", {"spec": {"paused": False}}, namespace, patch_type="merge"
    )
    resumed = time.time()

    async def made() -> list[JSON] | None:
        return await children(kube, BROADCASTJOBS, namespace, "acj-pause") or None

    jobs = await eventually(made, timeout=15, interval=0.2, what="a BroadcastJob after resuming")
    # the missed ticks while paused are not all replayed: one run, the latest tick
    assert len(jobs) == 1
    assert check_child(jobs[0], "acj-pause") >= int(resumed) - 2


async def test_forbid_skips_runs_while_one_is_active(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """Forbid, @every 2s, pods that run 6 s: while the first BroadcastJob is active no other is
    created; the next one is for a later tick (the skipped ones are not made up)."""
    await nodes.add_nodes(1, node_label(nodes))
    acj = new_acj("acj-forbid", bcj_template(nodes, run="6s"), concurrencyPolicy="Forbid")
    await kube.create(ADVANCEDCRONJOBS, acj, namespace)

    async def first() -> list[JSON] | None:
        return await children(kube, BROADCASTJOBS, namespace, "acj-forbid") or None

    jobs = await eventually(first, timeout=15, interval=0.2, what="the first BroadcastJob")
    first_at = check_child(jobs[0], "acj-forbid")
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        current = await children(kube, BROADCASTJOBS, namespace, "acj-forbid")
        assert [c["metadata"]["name"] for c in current] == [jobs[0]["metadata"]["name"]]
        await asyncio.sleep(0.3)
    status = (await kube.get(ADVANCEDCRONJOBS, "acj-forbid", namespace))["status"]
    assert [a["name"] for a in status["active"]] == [jobs[0]["metadata"]["name"]]

    async def second() -> list[JSON] | None:
        current = await children(kube, BROADCASTJOBS, namespace, "acj-forbid")
        return current if len(current) >= 2 else None

    both = await eventually(second, timeout=20, interval=0.2, what="the run after the first finished")
    stamps = sorted(check_child(c, "acj-forbid") for c in both)
    assert stamps[1] - first_at >= 6, f"ticks skipped while active, got {stamps}"


async def test_history_keeps_three_successful_and_one_failed(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """Allow, @every 2s: after five or more runs, three successful BroadcastJobs are kept; with
    pods that fail, one failed BroadcastJob."""
    await nodes.add_nodes(1, node_label(nodes))
    await kube.create(ADVANCEDCRONJOBS, new_acj("acj-ok", bcj_template(nodes, run="500ms")), namespace)
    await kube.create(
        ADVANCEDCRONJOBS, new_acj("acj-bad", bcj_template(nodes, run="500ms", exit_code=1)), namespace
    )
    seen: dict[str, set[str]] = {"acj-ok": set(), "acj-bad": set()}

    async def enough() -> bool | None:
        for name in seen:
            seen[name] |= {
                c["metadata"]["name"] for c in await children(kube, BROADCASTJOBS, namespace, name)
            }
        return all(len(s) >= 5 for s in seen.values()) or None

    await eventually(enough, timeout=25, interval=0.2, what="five runs of each")

    async def pruned() -> bool | None:
        ok = [c for c in await children(kube, BROADCASTJOBS, namespace, "acj-ok") if condition(c, "Complete")]
        bad = [c for c in await children(kube, BROADCASTJOBS, namespace, "acj-bad") if condition(c, "Failed")]
        return (len(ok) == 3 and len(bad) == 1) or None

    await eventually(pruned, timeout=10, interval=0.2, what="3 successful and 1 failed kept")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"schedule": "61 * * * *"},
            'spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61',
        ),
        (
            {"timeZone": "Mars/Olympus"},
            'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
        ),
        (
            {"template": {}},
            "spec must have one template, either JobTemplate or BroadcastJobTemplate should be provided",
        ),
    ],
)
async def test_webhook_rejects_invalid_advancedcronjob(
    kube: KubeClient, namespace: str, spec: JSON, message: str
) -> None:
    """The validating webhook's messages (upstream's), and nothing is stored."""
    body = new_acj("acj-bad-spec", {"broadcastJobTemplate": {"spec": {}}})
    body["spec"].update(spec)
    with pytest.raises(InvalidError) as err:
        await kube.create(ADVANCEDCRONJOBS, body, namespace)
    assert message in str(err.value)
    assert not [a for a in (await kube.list(ADVANCEDCRONJOBS, namespace))["items"]]


async def test_replace_deletes_the_active_run_and_starts_the_next(
    kube: KubeClient, namespace: str, nodes: NodePool
) -> None:
    """Replace, @every 2s, pods that run 30 s: each tick deletes the active BroadcastJob and makes
    the tick's own, so a later run replaces the first (a 30 s run never finishes by itself here)."""
    await nodes.add_nodes(1, node_label(nodes))
    acj = new_acj("acj-replace", bcj_template(nodes, run="30s"), concurrencyPolicy="Replace")
    await kube.create(ADVANCEDCRONJOBS, acj, namespace)

    async def first() -> list[JSON] | None:
        return await children(kube, BROADCASTJOBS, namespace, "acj-replace") or None

    first_name = (await eventually(first, timeout=15, interval=0.2, what="the first run"))[0]["metadata"][
        "name"
    ]

    async def replaced() -> list[JSON] | None:
        current = await children(kube, BROADCASTJOBS, namespace, "acj-replace")
        names = [c["metadata"]["name"] for c in current if not c["metadata"].get("deletionTimestamp")]
        return current if names and first_name not in names else None

    current = await eventually(replaced, timeout=15, interval=0.2, what="the first run replaced")
    live = [c for c in current if not c["metadata"].get("deletionTimestamp")]
    assert all(check_child(c, "acj-replace") > int(first_name.rsplit("-", 1)[1]) for c in live)
