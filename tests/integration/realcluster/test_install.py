"""``helm install charts/kruise`` onto the local cluster the way users install kruise: the image
built from the Dockerfile (``make image``'s script) and pushed to the cluster's registry, the
manager Deployment (2 replicas, leader election) and the daemon DaemonSet Ready on the real node,
the webhooks (admission and CRD conversion) served from the pods through the webhook Service's
ClusterIP, and the chart's daemon pulling an image through the node's CRI socket. Then, on that
installation and in this order: the pods' security context as the kernel applies it, the demo's
two releases run by the installed manager (``kruise demo --no-cluster``), ``helm upgrade`` with
webhooks served throughout, two failure drills (the leader pod deleted mid-release; every manager
pod evicted: only what kruise manages is refused), and ``helm uninstall`` leaving no webhook
configuration behind."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from kruise.core.localcluster import LocalCluster
from kruise.core.localcluster.binaries import source_root
from kruise.core.localcluster.install import (
    CONVERSION_CRDS,
    NAMESPACE,
    WEBHOOK_CONFIGURATIONS,
    Installed,
    ca_bundles,
)
from kruise.core.localcluster.realnode import busybox
from kruise.core.localcluster.realnode.plan import CONTROL_PLANE_IP, run_dir_for
from kruise.rollouts.cli.demo import V2
from tests.integration.realcluster.conftest import JSON, create_namespace, kubectl_json

CHART = (source_root() or Path.cwd()) / "charts" / "kruise"


def _webhook_requests(pod_ip: str) -> dict[str, float]:
    """``controller_runtime_webhook_requests_total{code="200"}`` per webhook path of one manager pod."""
    with urllib.request.urlopen(f"http://{pod_ip}:8080/metrics", timeout=5) as resp:
        text = resp.read().decode()
    pattern = r'^controller_runtime_webhook_requests_total\{code="200",webhook="([^"]+)"\} (\S+)$'
    return {m[1]: float(m[2]) for m in re.finditer(pattern, text, re.M)}


def _answers(url: str, *, within: float) -> bool:
    """True once ``url`` answers 200 (the daemon serves /healthz once its caches synced)."""
    deadline = time.monotonic() + within
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return resp.status == 200
        except OSError:
            if time.monotonic() > deadline:
                return False
            time.sleep(1)


def test_helm_install_runs_manager_and_daemon_on_the_real_node_and_serves_the_webhooks(
    services_cluster: LocalCluster, installed: Installed
) -> None:
    local = services_cluster

    # the manager: 2 replicas Ready on the real node, one of them holding the Lease
    deployment = kubectl_json(local, "-n", NAMESPACE, "get", "deployment", "kruise-controller-manager")
    assert deployment["status"]["readyReplicas"] == 2
    pods = kubectl_json(local, "-n", NAMESPACE, "get", "pods", "-l", "control-plane=controller-manager")[
        "items"
    ]
    assert {p["spec"]["nodeName"] for p in pods} == {"real-node-1"}
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {installed.image}
    lease = kubectl_json(local, "-n", NAMESPACE, "get", "lease", "kruise-manager")
    assert lease["spec"]["holderIdentity"].split("_")[0] in {p["metadata"]["name"] for p in pods}

    # the daemon: Ready there, the CRI socket directory mounted from the host, as uid 0
    daemonset = kubectl_json(local, "-n", NAMESPACE, "get", "daemonset", "kruise-daemon")
    assert daemonset["status"]["desiredNumberScheduled"] == daemonset["status"]["numberReady"] == 1
    (daemon,) = kubectl_json(local, "-n", NAMESPACE, "get", "pods", "-l", "control-plane=daemon")["items"]
    assert daemon["spec"]["nodeName"] == "real-node-1" and not daemon["spec"].get("hostNetwork")
    (volume,) = [v for v in daemon["spec"]["volumes"] if "hostPath" in v]
    assert volume["hostPath"]["path"] == str(run_dir_for(local.directory))
    assert daemon["spec"]["containers"][0]["securityContext"]["runAsUser"] == 0
    assert _answers(f"http://{daemon['status']['podIP']}:10221/healthz", within=60)  # on its pod IP

    # the certificate Secret filled by the first replica, its CA in every caBundle
    secret = kubectl_json(local, "-n", NAMESPACE, "get", "secret", "kruise-webhook-certs")
    ca = base64.b64decode(secret["data"]["ca-cert.pem"])
    assert ca.startswith(b"-----BEGIN CERTIFICATE-----")
    docs = [kubectl_json(local, "get", ref) for ref in WEBHOOK_CONFIGURATIONS]
    docs += [kubectl_json(local, "get", "crd", name) for name in CONVERSION_CRDS]
    assert all(base64.b64decode(b) == ca for d in docs for b in ca_bundles(d))
    services = {w["clientConfig"]["service"]["name"] for d in docs[:2] for w in d["webhooks"]}
    assert services == {"kruise-webhook-service"}  # by Service, never a URL

    # webhooks served from the pods: a CloneSet is defaulted and validated, a v1alpha1 Rollout
    # is converted (stored and read as v1beta1)
    ns = create_namespace(local, "installed")
    before = [_webhook_requests(p["status"]["podIP"]) for p in pods]
    cloneset = _cloneset("web")
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(cloneset))
    created = kubectl_json(local, "-n", ns, "get", "cloneset", "web")
    assert created["spec"]["updateStrategy"]["type"] == "ReCreate"  # the mutating webhook's default
    rollout = {
        "apiVersion": "rollouts.kruise.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {
            "objectRef": {
                "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
            },
            "strategy": {"canary": {"steps": [{"weight": 20}]}},
        },
    }
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(rollout))
    stored = kubectl_json(local, "-n", ns, "get", "rollouts.v1beta1.rollouts.kruise.io", "web")
    assert stored["spec"]["workloadRef"]["name"] == "web"
    assert stored["spec"]["strategy"]["canary"]["steps"][0]["traffic"] == "20%"
    after = [_webhook_requests(p["status"]["podIP"]) for p in pods]
    served = {
        path: sum(a.get(path, 0) - b.get(path, 0) for a, b in zip(after, before, strict=True))
        for path in after[0]
    }
    assert served["/mutate-apps-kruise-io-v1alpha1-cloneset"] >= 1
    assert served["/validate-apps-kruise-io-v1alpha1-cloneset"] >= 1
    assert served["/convert"] >= 1

    # the chart's daemon pulls through the node's containerd (the CRI socket as uid 0)
    job = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": "prepull"},
        "spec": {
            "image": busybox("v4"),
            "selector": {"names": ["real-node-1"]},
            "completionPolicy": {"type": "Always"},
        },
    }
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(job))
    deadline = time.monotonic() + 120
    status: dict[str, object] = {}
    while time.monotonic() < deadline:
        status = kubectl_json(local, "-n", ns, "get", "imagepulljob", "prepull").get("status") or {}
        if status.get("succeeded") == 1:
            break
        time.sleep(1)
    assert status.get("succeeded") == 1, status
    images = json.loads(local.crictl("real-node-1", "images", "-o", "json"))["images"]
    assert busybox("v4") in {tag for image in images for tag in image.get("repoTags") or []}


def _process_status(local: LocalCluster, pod: str) -> dict[str, str]:
    """``/proc/1/status`` of ``pod``'s container (its main process) as the kernel reports it, and
    whether ``/`` refused a write (``root_write``: the errno name) and ``/tmp`` took one."""
    script = (
        "import errno, tempfile\n"
        "print(open('/proc/1/status').read())\n"
        "try:\n"
        "    open('/kruise-probe', 'w')\n"
        "    print('root_write:\\tok')\n"
        "except OSError as e:\n"
        "    print('root_write:\\t' + errno.errorcode[e.errno])\n"
        "with tempfile.NamedTemporaryFile(dir='/tmp'):\n"
        "    print('tmp_write:\\tok')\n"
    )
    out = local.kubectl("exec", "-n", NAMESPACE, pod, "--", "python", "-c", script)
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines()) if v}


def test_the_pods_run_with_the_security_context_users_expect_on_the_real_kubelet(
    services_cluster: LocalCluster, installed: Installed
) -> None:
    """What the kernel applies, not what the spec says: the manager's process is uid 65534 with no
    capability, no_new_privs, seccomp filtering (RuntimeDefault) and a read-only root filesystem
    (its certificate directory and /tmp are emptyDirs), and still Ready and serving (the first
    test); the daemon's differs only by uid 0, the CRI socket's owner."""
    local = services_cluster
    pods = kubectl_json(local, "-n", NAMESPACE, "get", "pods", "-l", "control-plane=controller-manager")
    for pod in pods["items"]:
        assert {c["type"]: c["status"] for c in pod["status"]["conditions"]}["Ready"] == "True"
        status = _process_status(local, pod["metadata"]["name"])
        assert status["Uid"].split() == ["65534"] * 4 and status["Gid"].split() == ["65534"] * 4
        assert status["CapEff"] == status["CapPrm"] == status["CapBnd"] == "0" * 16
        assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"  # 2: a filter is loaded
        assert status["root_write"] == "EROFS" and status["tmp_write"] == "ok"
    (daemon,) = kubectl_json(local, "-n", NAMESPACE, "get", "pods", "-l", "control-plane=daemon")["items"]
    status = _process_status(local, daemon["metadata"]["name"])
    assert status["Uid"].split() == ["0"] * 4
    assert status["CapEff"] == status["CapPrm"] == status["CapBnd"] == "0" * 16
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
    assert status["root_write"] == "EROFS" and status["tmp_write"] == "ok"
    container = daemon["spec"]["containers"][0]
    mounts = {m["mountPath"]: m.get("readOnly", False) for m in container["volumeMounts"]}
    assert mounts["/hostvarrun"] is True  # the CRI socket's directory, read-only
    assert "add" not in container["securityContext"]["capabilities"]


def test_the_demo_releases_run_against_the_installed_manager(
    services_cluster: LocalCluster, installed: Installed
) -> None:
    """``kruise demo --no-cluster`` with the cluster's kubeconfig (``kruise cluster env``): no
    manager started by hand, the leader pod runs both releases, its analysis querying the demo's
    Prometheus on the control-plane address; they end as on the embedded manager (release 1
    complete on 1.5.0, release 2 aborted by its analysis and rolled back to 1.5.0)."""
    local = services_cluster
    assert local.state is not None
    t0 = time.monotonic()
    env = {**os.environ, "KUBECONFIG": local.state.kubeconfig, "COLUMNS": "120"}
    env.pop("KRUISE_DEMO_PROMETHEUS", None)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "kruise"), "demo", "--no-cluster"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    print(f"[kruise] demo --no-cluster: exit {proc.returncode} in {time.monotonic() - t0:.0f}s")
    print(proc.stdout[-4000:], proc.stderr[-3000:])
    assert proc.returncode == 0
    assert f"Prometheus at http://{CONTROL_PLANE_IP}:" in " ".join(proc.stdout.split())

    # the end state the demo checks, read back from the API
    rollout = kubectl_json(local, "-n", "shop", "get", "rollout", "web")
    conditions = {c["type"]: c for c in rollout["status"]["conditions"]}
    assert conditions["Succeeded"]["status"] == "False"
    assert conditions["Aborted"]["reason"] == "AnalysisFailed"
    pods = kubectl_json(local, "-n", "shop", "get", "pods", "-l", "app=web")["items"]
    assert len(pods) == 10 and {p["spec"]["containers"][0]["image"] for p in pods} == {V2}
    route = kubectl_json(local, "-n", "shop", "get", "httproute", "web")
    assert [r["name"] for rule in route["spec"]["rules"] for r in rule["backendRefs"]] == ["web"]
    runs = kubectl_json(local, "-n", "shop", "get", "analysisruns")["items"]
    phases = [r["status"]["phase"] for r in runs]
    assert "Successful" in phases and "Failed" in phases, phases
    # run by the manager pods, not a process on this host
    lease = kubectl_json(local, "-n", NAMESPACE, "get", "lease", "kruise-manager")
    managers = kubectl_json(local, "-n", NAMESPACE, "get", "pods", "-l", "control-plane=controller-manager")
    assert lease["spec"]["holderIdentity"].split("_")[0] in {p["metadata"]["name"] for p in managers["items"]}
    local.kubectl("delete", "namespace", "shop", "--wait=false")


def _helm(local: LocalCluster, *args: str) -> str:
    assert local.state is not None
    proc = subprocess.run(
        [str(Path(local.state.bin_dir) / "helm"), f"--kubeconfig={local.state.kubeconfig}", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_helm_upgrade_rolls_the_manager_without_an_admission_failure(
    services_cluster: LocalCluster, installed: Installed
) -> None:
    """``helm upgrade`` of the same chart with a changed value (the manager's client QPS) rolls
    both manager pods (surge, then the old ones drained by the preStop sleep) while CloneSets are
    created through the webhooks in a loop: every create is admitted, and each was defaulted by
    the mutating webhook."""
    local = services_cluster
    ns = create_namespace(local, "upgrade")
    results = _upgrade_while_creating(local, ns, "manager.kubeClient.qps=60")
    failures = [err for code, err in results if code != 0]
    assert failures == [], failures
    assert len(results) >= 20
    new = _manager_pods(local)
    assert len(new) == 2
    assert all("--kube-client-qps=60" in p["spec"]["containers"][0]["args"] for p in new)
    created = kubectl_json(local, "-n", ns, "get", "clonesets")["items"]
    assert len(created) == len(results)
    assert {c["spec"]["updateStrategy"]["type"] for c in created} == {"ReCreate"}
    local.kubectl("delete", "namespace", ns, "--wait=false")


def _upgrade_while_creating(local: LocalCluster, ns: str, value: str) -> list[tuple[int, str]]:
    """``helm upgrade --reuse-values --set <value>`` while a thread creates CloneSets in ``ns``
    every 0.1 s, until every old manager pod is gone and 3 s more; returns each create's (exit
    code, stderr). Fails when the roll did not replace every pod."""
    assert local.state is not None
    kubectl = [str(Path(local.state.bin_dir) / "kubectl"), f"--kubeconfig={local.state.kubeconfig}"]
    old = {p["metadata"]["name"] for p in _manager_pods(local)}
    stop = threading.Event()
    results: list[tuple[int, str]] = []

    def create_loop() -> None:
        while not stop.is_set():
            doc = {**_cloneset(""), "metadata": {"generateName": "u-"}}
            args = [*kubectl, "create", "-n", ns, "-f", "-"]
            proc = subprocess.run(args, input=json.dumps(doc), capture_output=True, text=True)
            results.append((proc.returncode, proc.stderr.strip()))
            time.sleep(0.1)

    creator = threading.Thread(target=create_loop)
    creator.start()
    t0 = time.monotonic()
    try:
        time.sleep(2)
        _helm(local, "upgrade", "kruise", str(CHART), "--reuse-values", "--set", value, "--wait")
        local.kubectl("-n", NAMESPACE, "rollout", "status", "deployment/kruise-controller-manager")
        # the old pods gone (their preStop sleep and shutdown included), then a few more creates
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and old & {p["metadata"]["name"] for p in _manager_pods(local)}:
            time.sleep(0.5)
        time.sleep(3)
    finally:
        stop.set()
        creator.join()
    print(f"[kruise] helm upgrade ({value}) rolled in {time.monotonic() - t0:.0f}s; {len(results)} creates")
    assert not old & {p["metadata"]["name"] for p in _manager_pods(local)}
    return results


def test_the_other_replica_finishes_a_release_when_the_leader_pod_dies(
    services_cluster: LocalCluster, installed: Installed
) -> None:
    """Failure drill: the leader's pod is deleted with a 1 s grace period (its preStop sleep cut
    short: the kubelet's minimum 2 s to stop) while a Rollout is in its second step; the standby
    takes the Lease (released on the way out, or expired) and the release completes."""
    local = services_cluster
    ns = create_namespace(local, "drill")
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(_cloneset("web", replicas=4)))
    ready = "--for=jsonpath={.status.readyReplicas}=4"
    local.kubectl("wait", "-n", ns, "cloneset/web", ready, "--timeout=60s")
    steps = [{"replicas": "25%", "pause": {"duration": 2}}, {"replicas": "50%", "pause": {"duration": 20}}]
    rollout = {
        "apiVersion": "rollouts.kruise.io/v1beta1",
        "kind": "Rollout",
        "metadata": {"name": "web"},
        "spec": {
            "workloadRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "strategy": {"canary": {"steps": [*steps, {"replicas": "100%"}]}},
        },
    }
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(rollout))
    time.sleep(2)
    patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": busybox("v2")}]
    local.kubectl("patch", "-n", ns, "cloneset", "web", "--type=json", "-p", json.dumps(patch))
    canary = _wait_rollout(local, ns, lambda st: (st.get("canaryStatus") or {}).get("currentStepIndex") == 2)
    assert canary["canaryStatus"]["currentStepState"] != "Completed"

    holder = kubectl_json(local, "-n", NAMESPACE, "get", "lease", "kruise-manager")["spec"]["holderIdentity"]
    leader = holder.split("_")[0]
    standby = {p["metadata"]["name"] for p in _manager_pods(local)} - {leader}
    t0 = time.monotonic()
    local.kubectl("-n", NAMESPACE, "delete", "pod", leader, "--grace-period=1", "--wait=false")
    lease: JSON = {}
    holders = [holder]
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        lease = kubectl_json(local, "-n", NAMESPACE, "get", "lease", "kruise-manager")
        now = lease["spec"].get("holderIdentity") or ""  # "" once released
        if now != holders[-1]:
            holders.append(now)
        if now not in ("", holder):
            break
        time.sleep(0.5)
    print(f"[kruise] the Lease went {holders} in {time.monotonic() - t0:.1f}s")
    assert holders[-1].split("_")[0] in standby
    assert lease["spec"]["leaseTransitions"] >= 1

    done = _wait_rollout(local, ns, _succeeded)
    print(f"[kruise] release completed {time.monotonic() - t0:.1f}s after the leader was killed")
    assert (done.get("canaryStatus") or {}).get("currentStepIndex") == 3
    pods = kubectl_json(local, "-n", ns, "get", "pods", "-l", "app=web")["items"]
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert len(live) == 4 and {p["spec"]["containers"][0]["image"] for p in live} == {busybox("v2")}
    cloneset = kubectl_json(local, "-n", ns, "get", "cloneset", "web")
    assert cloneset["spec"]["updateStrategy"].get("partition", 0) in (0, "0%")
    assert cloneset["status"]["updatedReadyReplicas"] == 4
    local.kubectl(
        "-n", NAMESPACE, "rollout", "status", "deployment/kruise-controller-manager", "--timeout=120s"
    )
    local.kubectl("delete", "namespace", ns, "--wait=false")


def _succeeded(status: JSON) -> bool:
    conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
    return status.get("phase") == "Healthy" and conditions.get("Succeeded") == "True"


def _wait_rollout(local: LocalCluster, ns: str, ok: Callable[[JSON], bool], within: float = 180) -> JSON:
    """The Rollout ``web``'s status once ``ok`` holds; fails after ``within`` seconds."""
    deadline = time.monotonic() + within
    status: JSON = {}
    while time.monotonic() < deadline:
        status = kubectl_json(local, "-n", ns, "get", "rollout", "web").get("status") or {}
        if ok(status):
            return status
        time.sleep(0.5)
    raise AssertionError(f"the Rollout did not get there within {within:.0f}s: {status}")


def test_with_every_manager_pod_evicted_only_what_kruise_manages_is_refused(
    services_cluster: LocalCluster, installed: Installed
) -> None:
    """Failure drill: the node is cordoned and both manager pods evicted (``pods/eviction``, as
    ``kubectl drain`` does); their replacements stay Pending, so no manager runs until the node is
    uncordoned (a window the test ends, not a race with the scheduler and the image start).
    Meanwhile the webhooks' scoping lets through everything kruise does not manage: a plain
    Deployment and a ConfigMap are created, updated and deleted, and pods no SidecarSet selects, or
    in a ``control-plane: openkruise`` namespace, are created. What it manages follows the
    chart's ``failurePolicy: Fail``: a CloneSet, and a pod a SidecarSet selects (the pod webhook's
    CEL match condition), are refused with the API server's "failed calling webhook". Uncordoned,
    the manager is Ready again and both are admitted through the webhooks (defaulted, injected)."""
    local = services_cluster
    ns = create_namespace(local, "outage")
    unwatched = create_namespace(local, "outage-unwatched")
    local.kubectl("label", "namespace", unwatched, "control-plane=openkruise")
    sidecarset = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": "outage"},
        "spec": {
            "selector": {"matchLabels": {"drill": "sidecar"}},
            "containers": [{"name": "sidecar", "image": busybox("v1")}],
        },
    }
    local.kubectl("apply", "-f", "-", input=json.dumps(sidecarset))
    # in the pod webhook's scope once its status is current (the scope is written first)
    observed = "--for=jsonpath={.status.observedGeneration}=1"
    local.kubectl("wait", "sidecarset/outage", observed, "--timeout=60s")

    t0 = time.monotonic()
    evicted = [p["metadata"]["name"] for p in _manager_pods(local)]
    assert len(evicted) == 2
    local.kubectl("cordon", "real-node-1")
    try:
        for name in evicted:
            eviction = {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": name, "namespace": NAMESPACE},
            }
            path = f"/api/v1/namespaces/{NAMESPACE}/pods/{name}/eviction"
            local.kubectl("create", "--raw", path, "-f", "-", input=json.dumps(eviction))
        pods = [f"pod/{name}" for name in evicted]
        local.kubectl("-n", NAMESPACE, "wait", "--for=delete", *pods, "--timeout=60s")
        replacements = _manager_pods(local)
        assert replacements and {p["status"]["phase"] for p in replacements} == {"Pending"}
        print(f"[kruise] both manager pods evicted and gone in {time.monotonic() - t0:.1f}s")
        t1 = time.monotonic()

        # 1. unmanaged objects stay writable
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "plain"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "plain"}},
                "template": {
                    "metadata": {"labels": {"app": "plain"}},
                    "spec": {"containers": [{"name": "plain", "image": busybox("v1")}]},
                },
            },
        }
        local.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(deployment))
        local.kubectl("set", "image", "-n", ns, "deployment/plain", f"plain={busybox('v2')}")
        local.kubectl("delete", "-n", ns, "deployment", "plain")
        local.kubectl("create", "configmap", "-n", ns, "plain", "--from-literal=k=v1")
        local.kubectl("patch", "-n", ns, "configmap", "plain", "-p", '{"data":{"k":"v2"}}')
        local.kubectl("delete", "-n", ns, "configmap", "plain")
        local.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(_pod("unselected", {})))
        sidecar_pod = _pod("selected", {"drill": "sidecar"})
        local.kubectl("create", "-n", unwatched, "-f", "-", input=json.dumps(sidecar_pod))

        # 2. what kruise manages is refused (failurePolicy Fail), nothing of it stored
        refused = [
            _kubectl_result(local, "create", "-n", ns, "-f", "-", input=json.dumps(doc))
            for doc in (_cloneset("down"), sidecar_pod)
        ]
        print(f"[kruise] with no manager: {refused}; {time.monotonic() - t1:.1f}s")
        for code, err in refused:
            assert code != 0 and "failed calling webhook" in err, err
        assert re.search(r'failed calling webhook "[^"]*cloneset[^"]*"', refused[0][1]), refused[0][1]
        assert "mpod.kb.io" in refused[1][1], refused[1][1]
        assert kubectl_json(local, "-n", ns, "get", "clonesets")["items"] == []
        names = {p["metadata"]["name"] for p in kubectl_json(local, "-n", ns, "get", "pods")["items"]}
        assert names == {"unselected"}
    finally:
        local.kubectl("uncordon", "real-node-1")

    # 3. the manager back: Ready, and both are admitted through the webhooks again
    local.kubectl(
        "-n", NAMESPACE, "rollout", "status", "deployment/kruise-controller-manager", "--timeout=120s"
    )
    deadline = time.monotonic() + 60
    result = _kubectl_result(local, "create", "-n", ns, "-f", "-", input=json.dumps(_cloneset("down")))
    while result[0] != 0 and time.monotonic() < deadline:
        time.sleep(1)
        result = _kubectl_result(local, "create", "-n", ns, "-f", "-", input=json.dumps(_cloneset("down")))
    print(f"[kruise] manager back and serving {time.monotonic() - t0:.1f}s after the eviction")
    assert result[0] == 0, result
    created = kubectl_json(local, "-n", ns, "get", "cloneset", "down")
    assert created["spec"]["updateStrategy"]["type"] == "ReCreate"  # the mutating webhook's default
    local.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(sidecar_pod))
    injected = kubectl_json(local, "-n", ns, "get", "pod", "selected")
    assert [c["name"] for c in injected["spec"]["containers"]] == ["sidecar", "main"]
    assert len(_manager_pods(local)) == 2
    local.kubectl("delete", "sidecarset", "outage")
    local.kubectl("delete", "namespace", ns, unwatched, "--wait=false")


def _kubectl_result(local: LocalCluster, *args: str, input: str) -> tuple[int, str]:
    """``kubectl args`` with ``input`` on stdin: its exit code and stderr (not raised)."""
    assert local.state is not None
    kubectl = [str(Path(local.state.bin_dir) / "kubectl"), f"--kubeconfig={local.state.kubeconfig}"]
    proc = subprocess.run([*kubectl, *args], input=input, capture_output=True, text=True, timeout=120)
    return proc.returncode, proc.stderr.strip()


def _pod(name: str, labels: dict[str, str]) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": busybox("v1")}]},
    }


def test_helm_uninstall_leaves_no_webhook_configuration(
    services_cluster: LocalCluster, installed: Installed
) -> None:
    """The manager writes both webhook configurations itself (they are not Helm resources); the
    chart's pre-delete hook deletes them, so ``helm uninstall`` leaves nothing that would refuse
    requests once the manager is gone: a CloneSet is then created without any webhook."""
    local = services_cluster
    t0 = time.monotonic()
    _helm(local, "uninstall", "kruise", "--wait", "--timeout=5m")
    print(f"[kruise] helm uninstall in {time.monotonic() - t0:.0f}s")
    for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        names = [d["metadata"]["name"] for d in kubectl_json(local, "get", kind)["items"]]
        assert not [n for n in names if n.startswith("kruise")], names
    assert kubectl_json(local, "get", "pods", "-n", NAMESPACE, "-l", "control-plane")["items"] == []
    ns = create_namespace(local, "after-uninstall")
    local.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(_cloneset("web")))
    created = kubectl_json(local, "-n", ns, "get", "cloneset", "web")
    assert "updateStrategy" not in created["spec"]  # no mutating webhook defaulted it


def _manager_pods(local: LocalCluster) -> list[JSON]:
    pods = kubectl_json(local, "-n", NAMESPACE, "get", "pods", "-l", "control-plane=controller-manager")
    return [p for p in pods["items"] if not p["metadata"].get("deletionTimestamp")]


def _cloneset(name: str, replicas: int = 0) -> JSON:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": busybox("v1")}]},
            },
        },
    }
