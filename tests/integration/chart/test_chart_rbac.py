"""``kruise manager`` with exactly the chart's RBAC, on the control plane the chart was applied to.

A token of the chart's ``kruise-manager`` ServiceAccount (TokenRequest API) goes into a
kubeconfig; the manager runs with it (same Lease ``kruise-system/kruise-manager`` and
configuration namespace as in the chart; the chart's own manager pods are KWOK's and run
nothing) and carries whole scenarios: a CloneSet scaled, updated in place and released by a
canary Rollout over an HTTPRoute, and a Deployment released by a canary Rollout over an nginx
Ingress, in canary style (extra canary Deployment) and in partition style (the advanced Deployment
controller), and an Advanced DaemonSet placed on every node and updated in place. The manager
logs at DEBUG (failed event posts are reported only there); a single 403 in its log fails the
test that caused it.

The scenarios cannot walk every code path, so the rules are also checked against the code
itself (:mod:`tests.integration.chart.rbac_audit`): every request the source makes is granted,
and nothing is granted beyond those requests and a short, documented list of extras.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from kruise.core.kube import KubeClient, Resource
from kruise.core.kube.resources import (
    CLONESETS,
    DAEMONSETS,
    DEPLOYMENTS,
    INGRESSES,
    LEASES,
    NAMESPACES,
    NODES,
    PODS,
    SERVICES,
)
from kruise.rollouts.manager.process import ManagerProcess
from kruise.rollouts.resources import BATCH_RELEASES, ROLLOUTS
from tests.integration.chart.rbac_audit import allowed, code_requests, granted
from tests.integration.chart.support import JSON, NS, find, render, token_kubeconfig
from tests.support.cluster import TestCluster
from tests.support.wait import eventually

HTTPROUTES = Resource("gateway.networking.k8s.io", "v1", "httproutes", "HTTPRoute")
V1, V2, V3 = (f"registry.example.com/shop/web:{v}" for v in ("1.0", "2.0", "3.0"))
LOG_COPY = Path("/tmp/kruise-chart-rbac-manager.log")


# Granted although no call site shows it: (group, resource, verb) -> why.
EXTRAS: dict[tuple[str, str, str], str] = {
    ("apps.kruise.io", "clonesets/finalizers", "update"): "blockOwnerDeletion on owned pods",
    ("apps.kruise.io", "daemonsets/finalizers", "update"): "blockOwnerDeletion on owned pods",
    ("apps.kruise.io", "broadcastjobs/finalizers", "update"): "blockOwnerDeletion on owned pods",
    ("apps.kruise.io", "advancedcronjobs/finalizers", "update"): "blockOwnerDeletion on the jobs it makes",
    ("apps.kruise.io", "statefulsets/finalizers", "update"): "blockOwnerDeletion on owned pods",
    ("apps.kruise.io", "sidecarsets/finalizers", "update"): "blockOwnerDeletion on ControllerRevisions",
    ("apps.kruise.io", "uniteddeployments/finalizers", "update"): "blockOwnerDeletion on subset CloneSets",
    ("rollouts.kruise.io", "rollouts/finalizers", "update"): "blockOwnerDeletion on BatchReleases",
    ("rollouts.kruise.io", "batchreleases/finalizers", "update"): "blockOwnerDeletion on canary Deployments",
    (
        "apps",
        "deployments/finalizers",
        "update",
    ): "blockOwnerDeletion on the advanced Deployment's ReplicaSets",
    ("rollouts.kruise.io", "trafficroutings/finalizers", "update"): "blockOwnerDeletion on canary Ingresses",
    ("apps.kruise.io", "imagelistpulljobs/finalizers", "update"): "blockOwnerDeletion on ImagePullJobs",
    **{
        ("rollouts.kruise.io", kind, verb): "read-only until its controller lands"
        for kind in ("analysistemplates", "clusteranalysistemplates")
        for verb in ("get", "list", "watch")
    },
    **{
        ("networking.istio.io", kind, verb): "the custom router (customNetworkRefs) on Istio kinds"
        for kind in ("virtualservices", "destinationrules")
        for verb in ("get", "update")
    },
}


def manager_rules(helm: str) -> list[JSON]:
    docs = render(helm)
    return [
        *find(docs, "ClusterRole", "kruise-manager-role")["rules"],
        *find(docs, "Role", "kruise-leader-election-role")["rules"],
    ]


def test_the_charts_rbac_grants_every_request_in_the_code(helm: str) -> None:
    found, unresolved = code_requests()
    assert unresolved == [], "list these call sites in rbac_audit.DYNAMIC:\n" + "\n".join(unresolved)
    rules = manager_rules(helm)
    missing = [
        f"{group or 'core'} {resource} {verb}  ({where})"
        for (group, resource, verb), where in sorted(found.items())
        if not allowed(rules, group, resource, verb)
    ]
    assert missing == [], "the chart's RBAC lacks:\n" + "\n".join(missing)


def test_the_charts_rbac_grants_nothing_the_code_does_not_use(helm: str) -> None:
    """Least privilege: every grant is a request of the code, a read of a kind it watches, or an EXTRA."""
    found, _ = code_requests()
    watched = {(g, r) for g, r, v in found if v == "list"}
    surplus = sorted(
        (g, r, v)
        for g, r, v in granted(manager_rules(helm))
        if (g, r, v) not in found and (g, r, v) not in EXTRAS and not (v == "get" and (g, r) in watched)
    )
    assert surplus == [], f"granted but unused (drop them, or document them in EXTRAS): {surplus}"


def daemon_rules(helm: str) -> list[JSON]:
    return list(
        find(render(helm, "--set", "daemon.enabled=true"), "ClusterRole", "kruise-daemon-role")["rules"]
    )


def test_the_daemons_rbac_grants_every_request_of_kruise_daemon(helm: str) -> None:
    found, unresolved = code_requests("daemon")
    assert unresolved == [], "list these call sites in rbac_audit.DYNAMIC:\n" + "\n".join(unresolved)
    assert ("apps.kruise.io", "nodeimages", "watch") in found  # the audit sees the daemon's informers
    rules = daemon_rules(helm)
    missing = [
        f"{group or 'core'} {resource} {verb}  ({where})"
        for (group, resource, verb), where in sorted(found.items())
        if not allowed(rules, group, resource, verb)
    ]
    assert missing == [], "the chart's kruise-daemon-role lacks:\n" + "\n".join(missing)


def test_the_daemons_rbac_grants_nothing_kruise_daemon_does_not_use(helm: str) -> None:
    found, _ = code_requests("daemon")
    watched = {(g, r) for g, r, v in found if v == "list"}
    surplus = sorted(
        (g, r, v)
        for g, r, v in granted(daemon_rules(helm))
        if (g, r, v) not in found and not (v == "get" and (g, r) in watched)
    )
    assert surplus == [], f"kruise-daemon-role grants what the daemon never asks: {surplus}"


@pytest.fixture(scope="module")
def sa_manager(
    installed: JSON, chart_cluster: TestCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManagerProcess]:
    """``kruise manager`` authenticated as ``system:serviceaccount:kruise-system:kruise-manager``."""
    tmp = tmp_path_factory.mktemp("rbac")
    token = chart_cluster.kubectl(
        "-n", NS, "create", "token", "kruise-manager", "--duration=2h"
    ).stdout.strip()
    kubeconfig = token_kubeconfig(chart_cluster, token, tmp / "kruise-manager.kubeconfig")
    whoami = chart_cluster.kubectl(
        "--kubeconfig", str(kubeconfig), "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"
    )
    assert whoami.stdout == f"system:serviceaccount:{NS}:kruise-manager"
    proc = ManagerProcess(str(kubeconfig), tmp / "manager")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KRUISE_LOG_LEVEL", "DEBUG")
        proc.start(timeout=60)
    try:
        yield proc
    finally:
        proc.stop()
        # its webhook configurations point at a port nobody serves any more
        chart_cluster.kubectl(
            "delete",
            "mutatingwebhookconfiguration,validatingwebhookconfiguration",
            "-l",
            "app.kubernetes.io/managed-by=kruise-manager",
            "--ignore-not-found",
            check=False,
        )
        if proc.log_path.exists():
            shutil.copy(proc.log_path, LOG_COPY)


@pytest.fixture
async def admin(chart_cluster: TestCluster) -> AsyncIterator[KubeClient]:
    client = await KubeClient.from_kubeconfig(chart_cluster.kubeconfig, qps=200, burst=400)
    try:
        yield client
    finally:
        await client.close()


def denials(proc: ManagerProcess) -> list[str]:
    log = proc.log_path.read_text(errors="replace") if proc.log_path.exists() else ""
    # past the "date time,millis" prefix: a timestamp's milliseconds can read 403
    return [
        ln for ln in log.splitlines() if re.search(r"\b403\b|forbidden", ln.split(" ", 2)[-1], re.IGNORECASE)
    ]


def assert_not_denied(proc: ManagerProcess) -> None:
    denied = denials(proc)
    assert denied == [], "the chart's RBAC denied the manager:\n" + "\n".join(denied[:20])


async def new_namespace(kube: KubeClient, name: str) -> str:
    await kube.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


def pod_template(image: str) -> JSON:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"terminationGracePeriodSeconds": 0, "containers": [{"name": "web", "image": image}]},
    }


def service(namespace: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    }


def rollout(namespace: str, ref: JSON, canary: JSON) -> JSON:
    return {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web", "namespace": namespace},
        "spec": {"workloadRef": ref, "strategy": {"canary": canary}},
    }


async def images(kube: KubeClient, namespace: str) -> dict[str, tuple[str, int]]:
    """Live pods of ``web``: name -> (running image, restartCount)."""
    out: dict[str, tuple[str, int]] = {}
    for pod in (await kube.list(PODS, namespace, label_selector="app=web"))["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        status = (pod.get("status") or {}).get("containerStatuses") or [{}]
        out[pod["metadata"]["name"]] = (
            str(status[0].get("image", "")),
            int(status[0].get("restartCount", 0)),
        )
    return out


async def wait_rollout(kube: KubeClient, namespace: str, *, succeeded: bool, timeout: float = 60) -> JSON:
    """The Rollout Healthy (and, with ``succeeded``, its release completed)."""

    async def probe() -> JSON | None:
        ro = await kube.get(ROLLOUTS, "web", namespace)
        status = ro.get("status") or {}
        conds = {c["type"]: c for c in status.get("conditions") or []}
        done = conds.get("Succeeded", {}).get("status") == "True"
        return ro if status.get("phase") == "Healthy" and (done or not succeeded) else None

    what = "Rollout Succeeded" if succeeded else "Rollout Healthy"
    return await eventually(probe, timeout=timeout, interval=0.5, what=what)


async def test_lease_and_webhooks_with_the_charts_rbac(
    sa_manager: ManagerProcess, admin: KubeClient, chart_cluster: TestCluster
) -> None:
    """At start: the Lease, both webhook configurations and the CRDs' conversion webhook."""

    async def leads() -> bool:
        lease = await admin.get_or_none(LEASES, "kruise-manager", NS)
        return bool(lease and (lease.get("spec") or {}).get("holderIdentity"))

    await eventually(leads, timeout=30, what="the manager holding kruise-system/kruise-manager")
    for kind in ("mutating", "validating"):
        name = f"kruise-{kind}-webhook-configuration"
        assert chart_cluster.kubectl("get", f"{kind}webhookconfiguration", name).returncode == 0
    for crd in ("rollouts.rollouts.kruise.io", "batchreleases.rollouts.kruise.io"):
        strategy = chart_cluster.kubectl("get", "crd", crd, "-o", "jsonpath={.spec.conversion.strategy}")
        assert strategy.stdout == "Webhook"
    assert "leads; starting controllers" in sa_manager.log_path.read_text()
    assert_not_denied(sa_manager)


async def test_cloneset_scale_in_place_update_and_canary_rollout_with_the_charts_rbac(
    sa_manager: ManagerProcess, admin: KubeClient, chart_cluster: TestCluster
) -> None:
    kube = admin
    ns = await new_namespace(kube, "chart-rbac-cloneset")
    cloneset = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": pod_template(V1),
            "updateStrategy": {"type": "InPlaceIfPossible", "maxUnavailable": "50%"},
        },
    }
    await kube.create(CLONESETS, cloneset, ns)

    async def status(**want: int) -> JSON | None:
        cs = await kube.get(CLONESETS, "web", ns)
        st = cs.get("status") or {}
        settled = st.get("observedGeneration") == cs["metadata"]["generation"]
        return st if settled and all(st.get(k) == v for k, v in want.items()) else None

    await eventually(lambda: status(replicas=2, readyReplicas=2), timeout=60, what="2 ready pods")

    # scale out
    await kube.patch(CLONESETS, "web", {"spec": {"replicas": 3}}, ns, patch_type="merge")
    await eventually(lambda: status(replicas=3, readyReplicas=3), timeout=60, what="3 ready pods")
    before = await images(kube, ns)
    assert {img for img, _ in before.values()} == {V1}

    # in-place update: the same pods, the new image, one container restart each
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": V2}]}}}}
    await kube.patch(CLONESETS, "web", patch, ns, patch_type="merge")
    await eventually(
        lambda: status(replicas=3, updatedReplicas=3, updatedReadyReplicas=3, readyReplicas=3),
        timeout=90,
        what="3 pods updated in place",
    )

    async def restarted() -> dict[str, tuple[str, int]] | None:
        now = await images(kube, ns)
        return now if all(img == V2 and n >= 1 for img, n in now.values()) else None

    after = await eventually(restarted, timeout=30, what="containers restarted on the new image")
    assert set(after) == set(before), "in-place update keeps the pods"

    # a canary Rollout over an HTTPRoute: canary Service, stable pin, route weights, BatchRelease
    await kube.create(SERVICES, service(ns), ns)
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "parentRefs": [{"name": "shop-gateway"}],
            "rules": [{"backendRefs": [{"name": "web", "port": 80}]}],
        },
    }
    await kube.create(HTTPROUTES, route, ns)
    canary = {
        "steps": [{"replicas": "50%", "traffic": "50%", "pause": {"duration": 1}}, {"replicas": "100%"}],
        "trafficRoutings": [{"service": "web", "gracePeriodSeconds": 1, "gateway": {"httpRouteName": "web"}}],
    }
    ref = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
    await kube.create(ROLLOUTS, rollout(ns, ref, canary), ns)
    await wait_rollout(kube, ns, succeeded=False)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": V3}]}}}}
    await kube.patch(CLONESETS, "web", patch, ns, patch_type="merge")
    await wait_rollout(kube, ns, succeeded=True, timeout=180)

    assert {img for img, _ in (await images(kube, ns)).values()} == {V3}
    live_route = await kube.get(HTTPROUTES, "web", ns)
    assert [r["name"] for r in live_route["spec"]["rules"][0]["backendRefs"]] == ["web"]
    assert await kube.get_or_none(SERVICES, "web-canary", ns) is None
    assert await kube.get_or_none(BATCH_RELEASES, "web", ns) is None
    reasons = set(
        chart_cluster.kubectl("-n", ns, "get", "events", "-o", "jsonpath={.items[*].reason}").stdout.split()
    )
    assert {"SuccessfulCreate", "SuccessfulUpdatePodInPlace", "Succeeded"} <= reasons
    assert_not_denied(sa_manager)


@pytest.mark.parametrize("extra", [True, False], ids=["canary style", "partition style"])
async def test_deployment_canary_rollout_over_ingress_with_the_charts_rbac(
    sa_manager: ManagerProcess, admin: KubeClient, extra: bool
) -> None:
    kube = admin
    ns = await new_namespace(kube, "chart-rbac-deployment" if extra else "chart-rbac-partition-deployment")
    deployment: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": pod_template(V1),
        },
    }
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    ingress = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "web", "namespace": ns, "annotations": {"kubernetes.io/ingress.class": "nginx"}},
        "spec": {
            "rules": [
                {
                    "host": "web.example.com",
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": backend}]},
                }
            ]
        },
    }
    await kube.create(SERVICES, service(ns), ns)
    await kube.create(INGRESSES, ingress, ns)
    await kube.create(DEPLOYMENTS, deployment, ns)

    async def settled() -> bool:
        obj = await kube.get(DEPLOYMENTS, "web", ns)
        st = obj.get("status") or {}
        return st.get("observedGeneration") == obj["metadata"]["generation"] and st.get("readyReplicas") == 2

    await eventually(settled, timeout=60, what="2 ready Deployment pods")
    canary = {
        "steps": [
            {"replicas": "50%", "traffic": "50%", "pause": {"duration": 1}},
            # partition style: the chart's --partition-percent-limit (50) bars traffic above 50%
            {"replicas": "100%", **({"traffic": "100%"} if extra else {}), "pause": {"duration": 0}},
        ],
        "trafficRoutings": [
            {"service": "web", "gracePeriodSeconds": 1, "ingress": {"classType": "nginx", "name": "web"}}
        ],
        "enableExtraWorkloadForCanary": extra,
    }
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
    await kube.create(ROLLOUTS, rollout(ns, ref, canary), ns)
    await wait_rollout(kube, ns, succeeded=False)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": V2}]}}}}
    await kube.patch(DEPLOYMENTS, "web", patch, ns, patch_type="merge")
    await wait_rollout(kube, ns, succeeded=True, timeout=180)

    async def only_v2() -> bool:
        return {img for img, _ in (await images(kube, ns)).values()} == {V2}

    await eventually(only_v2, timeout=90, what="every pod on the new image")
    assert await kube.get_or_none(INGRESSES, "web-canary", ns) is None
    assert await kube.get_or_none(SERVICES, "web-canary", ns) is None
    stable = await kube.get(DEPLOYMENTS, "web", ns)
    assert not stable["spec"].get("paused")
    assert_not_denied(sa_manager)


async def test_daemonset_placement_and_in_place_update_with_the_charts_rbac(
    sa_manager: ManagerProcess, admin: KubeClient, chart_cluster: TestCluster
) -> None:
    """An Advanced DaemonSet: the Node informer, one pod per node (kube-scheduler binds through
    the metadata.name affinity), revisions, status, an in-place image update."""
    kube = admin
    ns = await new_namespace(kube, "chart-rbac-daemonset")
    nodes = [n["metadata"]["name"] for n in (await kube.list(NODES))["items"]]
    daemonset = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "web", "namespace": ns},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": pod_template(V1),
            "updateStrategy": {"rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible"}},
        },
    }
    await kube.create(DAEMONSETS, daemonset, ns)

    async def status(**want: int) -> JSON | None:
        ds = await kube.get(DAEMONSETS, "web", ns)
        st = ds.get("status") or {}
        settled = st.get("observedGeneration") == ds["metadata"]["generation"]
        return st if settled and all(st.get(k) == v for k, v in want.items()) else None

    count = len(nodes)
    await eventually(
        lambda: status(desiredNumberScheduled=count, numberReady=count), timeout=60, what="a pod per node"
    )
    before = await images(kube, ns)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": V2}]}}}}
    await kube.patch(DAEMONSETS, "web", patch, ns, patch_type="merge")
    await eventually(
        lambda: status(updatedNumberScheduled=count, numberReady=count, numberAvailable=count),
        timeout=90,
        what="every daemon pod updated",
    )

    async def restarted() -> dict[str, tuple[str, int]] | None:
        now = await images(kube, ns)
        return now if all(img == V2 and n >= 1 for img, n in now.values()) else None

    after = await eventually(restarted, timeout=30, what="containers restarted on the new image")
    assert set(after) == set(before), "in-place update keeps the pods"
    assert_not_denied(sa_manager)
