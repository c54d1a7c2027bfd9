"""kubectl-kruise's workload commands through ``kubectl kruise``, the namespace from the context.

A CloneSet and a Deployment go through what a release engineer scripts: ``set image`` (done in
place on the CloneSet: same pods), ``rollout status`` of each kind, ``history``/``undo``,
``pause``/``resume`` (refused when already so), ``scale``, ``set env|resources``, ``restart``,
``expose``, ``create job --from=cronjob`` and ``migrate`` a Deployment to a CloneSet.
"""

from __future__ import annotations

import json

import pytest

from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, DEPLOYMENTS, SERVICES
from kruise.rollouts.cli.refs import CRONJOBS, JOBS
from tests.integration.cli.conftest import Kubectl
from tests.integration.rollouts import helpers as h
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")


def ok(out: object) -> str:
    assert out.returncode == 0, out.stdout + out.stderr  # type: ignore[attr-defined]
    return str(out.stdout)  # type: ignore[attr-defined]


def deployment(namespace: str, replicas: int = 2) -> dict[str, object]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "api", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "api"}},
            "template": {
                "metadata": {"labels": {"app": "api"}},
                "spec": {
                    "terminationGracePeriodSeconds": 0,
                    "containers": [{"name": "api", "image": h.V1, "ports": [{"containerPort": 8080}]}],
                },
            },
        },
    }


async def test_cloneset_set_image_status_history_undo(kube: KubeClient, namespace: str, kk: Kubectl) -> None:
    await h.create_web(kube, namespace, replicas=4)
    uids = {p["metadata"]["uid"] for p in (await kube.list(h.PODS, namespace))["items"]}

    assert (
        ok(kk("set", "image", "cloneset/web", f"web={h.V2}")) == "cloneset.apps.kruise.io/web image updated\n"
    )
    watched = kk("rollout", "status", "cloneset/web", "--timeout", "2m")
    assert watched.returncode == 0, watched.stdout + watched.stderr
    assert watched.stdout.splitlines()[-1].startswith(
        "CloneSet rolling update complete 4 pods at revision web-"
    )
    pods = (await kube.list(h.PODS, namespace))["items"]
    assert {p["metadata"]["uid"] for p in pods} == uids, "an image-only change is done in place"
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {h.V2}

    history = ok(kk("rollout", "history", "cloneset/web"))
    assert history.splitlines()[:3] == [
        "cloneset.apps.kruise.io/web ",
        "REVISION  CHANGE-CAUSE",
        "1         <none>",
    ]
    assert f"Image:\t{h.V1}" in ok(kk("rollout", "history", "cloneset/web", "--revision", "1"))
    revisions = json.loads(ok(kk("rollout", "history", "cloneset", "web", "-o", "json")))
    assert [r["revision"] for r in revisions["items"]] == [1, 2]

    assert (
        ok(kk("rollout", "undo", "cloneset/web", "--to-revision=1"))
        == "cloneset.apps.kruise.io/web rolled back\n"
    )
    cs = await kube.get(CLONESETS, "web", namespace)
    assert cs["spec"]["template"]["spec"]["containers"][0]["image"] == h.V1

    async def renumbered() -> bool:  # the restored template's revision becomes the newest, 3
        return [
            r["revision"]
            for r in json.loads(ok(kk("rollout", "history", "cloneset/web", "-o", "json")))["items"]
        ] == [2, 3]

    await eventually(renumbered, timeout=30, what="revision 1 renumbered 3")
    again = ok(kk("rollout", "undo", "cloneset/web", "--to-revision", "3"))
    assert "skipped rollback (current template already matches revision 3)" in again
    missing = kk("rollout", "undo", "cloneset/web", "--to-revision", "9")
    assert missing.returncode == 1 and "unable to find specified revision 9 in history" in missing.stderr


async def test_status_answers_about_the_kind_it_is_given(
    kube: KubeClient, namespace: str, kk: Kubectl
) -> None:
    await h.create_web(kube, namespace, replicas=2)
    done = kk("rollout", "status", "cloneset/web", "--watch=false")
    assert done.returncode == 0 and "CloneSet rolling update complete" in done.stdout, (
        done.stdout + done.stderr
    )
    nothere = kk("rollout", "status", "deployment/nothere")
    assert nothere.returncode == 1
    assert nothere.stderr.strip() == 'Error from server (NotFound): deployments.apps "nothere" not found'
    wrong_ns = kk("rollout", "status", "cloneset", "web", "-n", "default", "--timeout", "5s")
    assert wrong_ns.returncode == 1 and "NotFound" in wrong_ns.stderr
    other_context = kk("--context", "elsewhere", "rollout", "status", "cloneset/web")
    assert other_context.returncode == 1 and "NotFound" in other_context.stderr
    explicit = kk("--context=elsewhere", "rollout", "status", "cloneset/web", "-n", namespace)
    assert explicit.returncode == 0, "-n wins over the context's namespace"
    bad = kk("rollout", "status", "cloneset/web", "--timeout", "soon")
    assert bad.returncode == 2 and "invalid duration" in bad.stderr, "a usage error"


async def test_pause_resume_refuse_when_already_so_and_scale(
    kube: KubeClient, namespace: str, kk: Kubectl
) -> None:
    await h.create_web(kube, namespace, replicas=2)
    assert ok(kk("rollout", "pause", "cloneset/web")) == "cloneset.apps.kruise.io/web paused\n"
    again = kk("rollout", "pause", "cloneset/web")
    assert again.returncode == 1
    assert again.stderr.strip() == 'error: clonesets.apps.kruise.io "web" is already paused'
    assert ok(kk("rollout", "resume", "clone", "web")) == "cloneset.apps.kruise.io/web resumed\n"
    assert (
        'error: clonesets.apps.kruise.io "web" is not paused'
        in kk("rollout", "resume", "cloneset/web").stderr
    )

    refused = kk("scale", "cloneset/web", "--replicas=3", "--current-replicas=5")
    assert refused.returncode == 1 and "Expected replicas to be 5, was 2" in refused.stderr
    assert ok(kk("scale", "--replicas=3", "cloneset/web")) == "cloneset.apps.kruise.io/web scaled\n"
    await h.wait_settled(kube, namespace, 3)
    victim = sorted(p["metadata"]["name"] for p in (await kube.list(h.PODS, namespace))["items"])[0]
    out = ok(kk("scaledown", "cloneset/web", "--pods", victim))
    assert out.splitlines()[-1] == "cloneset.apps.kruise.io/web selective pod deletion"
    await h.wait_settled(kube, namespace, 2)
    assert victim not in {p["metadata"]["name"] for p in (await kube.list(h.PODS, namespace))["items"]}


async def test_deployment_env_resources_restart_undo(kube: KubeClient, namespace: str, kk: Kubectl) -> None:
    await kube.create(DEPLOYMENTS, deployment(namespace), namespace)
    ok(kk("rollout", "status", "deployment/api", "--timeout=90s"))
    assert (
        ok(kk("set", "env", "deployment/api", "MODE=canary", "-c", "api"))
        == "deployment.apps/api env updated\n"
    )
    listed = ok(kk("set", "env", "deployment/api", "--list"))
    assert listed == "# deployment api, container api\nMODE=canary\n"
    out = kk(
        "set", "resources", "deployment", "api", "--limits=cpu=200m,memory=256Mi", "--requests", "cpu=100m"
    )
    assert ok(out) == "deployment.apps/api resource requirements updated\n"
    dep = await kube.get(DEPLOYMENTS, "api", namespace)
    assert dep["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "200m", "memory": "256Mi"},
        "requests": {"cpu": "100m"},
    }
    assert (
        ok(kk("set", "serviceaccount", "deployment", "api", "default"))
        == "deployment.apps/api serviceaccount updated\n"
    )
    assert ok(kk("rollout", "restart", "deployment/api")) == "deployment.apps/api restarted\n"
    ok(kk("rollout", "status", "deployment/api", "--timeout=90s"))

    async def five_revisions() -> bool:
        return ok(kk("rollout", "history", "deployment/api")).count("<none>") == 5

    await eventually(
        five_revisions, timeout=30, what="5 ReplicaSet revisions"
    )  # env, resources, account, restart
    assert (
        ok(kk("rollout", "undo", "deployment/api", "--to-revision=1")) == "deployment.apps/api rolled back\n"
    )
    dep = await kube.get(DEPLOYMENTS, "api", namespace)
    container = dep["spec"]["template"]["spec"]["containers"][0]
    assert ("env" not in container and "resources" not in container) or container.get("resources") == {}
    assert "pod-template-hash" not in dep["spec"]["template"]["metadata"]["labels"]


async def test_expose_create_job_and_migrate(kube: KubeClient, namespace: str, kk: Kubectl) -> None:
    await kube.create(DEPLOYMENTS, deployment(namespace, replicas=3), namespace)
    ok(kk("rollout", "status", "deployment/api", "--timeout=90s"))
    assert ok(kk("expose", "deployment/api", "--port=80", "--target-port=8080")) == "service/api exposed\n"
    svc = await kube.get(SERVICES, "api", namespace)
    assert svc["spec"]["selector"] == {"app": "api"}
    assert svc["spec"]["ports"][0]["port"] == 80 and svc["spec"]["ports"][0]["targetPort"] == 8080

    cronjob = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly", "namespace": namespace},
        "spec": {
            "schedule": "0 0 * * *",
            "suspend": True,
            "jobTemplate": {
                "spec": {
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
                    }
                }
            },
        },
    }
    await kube.create(CRONJOBS, cronjob, namespace)
    assert ok(kk("create", "job", "manual-1", "--from=cronjob/nightly")) == "job.batch/manual-1 created\n"
    job = await kube.get(JOBS, "manual-1", namespace)
    assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert job["metadata"]["ownerReferences"][0]["name"] == "nightly"
    both = kk("create", "job", "x", "--image=busybox", "--from=cronjob/nightly")
    assert both.returncode == 1 and "either --image or --from must be specified" in both.stderr

    created = kk(
        "migrate", "CloneSet", "--from", "Deployment", "--src-name", "api", "--dst-name", "api-cs", "--create"
    )
    assert ok(created) == "Successfully created from Deployment/api to CloneSet/api-cs\n"
    moved = kk(
        "migrate",
        "CloneSet",
        "--from",
        "Deployment",
        "--src-name",
        "api",
        "--dst-name",
        "api-cs",
        "--max-surge=2",
        timeout=180,
    )
    assert (
        ok(moved).splitlines()[-1]
        == "Successfully migrated 3 replicas from Deployment/api to CloneSet/api-cs"
    )
    assert (await kube.get(DEPLOYMENTS, "api", namespace))["spec"]["replicas"] == 0
    assert (await kube.get(CLONESETS, "api-cs", namespace))["spec"]["replicas"] == 3
