"""The Helm chart ``charts/kruise``: lint, render, and install on a real control plane.

- ``helm lint`` with the defaults and with every switch on;
- ``helm template``: the manager's flags come from the values, every flag exists on
  ``kruise manager``, the webhook certificate fits the Service and the manager serves it as it
  is, bad values fail at render time;
- the rendered chart (CRDs from ``crds/`` included, as ``helm install`` applies them) is accepted
  by the API server (``kubectl apply --dry-run=server``, then for real; KWOK plays the pods,
  whose image is not pullable here), and the pre-delete hook cleans up with its own RBAC.

The manager running with the chart's RBAC: ``test_chart_rbac.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
import yaml

from kruise.rollouts.cli.main import app
from kruise.rollouts.manager.options import FEATURE_GATES
from tests.integration.chart.support import (
    CHART,
    JSON,
    NS,
    find,
    flag_map,
    helm_run,
    kinds,
    manager_args,
    render,
    reported,
    token_kubeconfig,
    values_file,
)
from tests.support.cluster import TestCluster

# Every switch of values.yaml turned away from its default, for lint and render.
EVERYTHING_ON: JSON = {
    "featureGates": "CloneSetShortHash=true,TemplateNoDefaults=false",
    "imagePullSecrets": [{"name": "registry"}],
    "serviceAccount": {"annotations": {"example.com/role": "kruise"}},
    "manager": {
        "replicas": 3,
        "image": {"repository": "registry.example.com/kruise", "tag": "v9.9.9", "pullPolicy": "Always"},
        "log": {"level": "4"},
        "webhook": {"port": 9443},
        "metrics": {"port": 18080},
        "healthProbe": {"port": 18000},
        "kubeClient": {"qps": 75, "burst": 150},
        "workers": {"cloneset": 7, "rollout": 10},
        "expectationTimeoutSeconds": 120,
        "partitionPercentLimit": 80,
        "hostNetwork": True,
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"operator": "Exists"}],
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}
                ]
            }
        },
        "extraRules": [{"apiGroups": ["example.io"], "resources": ["routes"], "verbs": ["get", "update"]}],
    },
    "webhookConfiguration": {"failurePolicy": "Ignore", "timeoutSeconds": 5},
    "daemon": {
        "enabled": True,
        "hostNetwork": True,
        "extraEnvs": [{"name": "HTTP_PROXY", "value": "http://proxy:3128"}],
    },
    "serviceMonitor": {"enabled": True, "labels": {"release": "prometheus"}},
}


# ---------------------------------------------------------------------------- lint and render


def test_helm_lint_defaults_and_every_switch(helm: str, tmp_path: Path) -> None:
    plain = helm_run(helm, "lint", "--strict", str(CHART))
    assert plain.returncode == 0, plain.stdout + plain.stderr
    switched = helm_run(helm, "lint", "--strict", str(CHART), "-f", str(values_file(tmp_path, EVERYTHING_ON)))
    assert switched.returncode == 0, switched.stdout + switched.stderr


def test_default_render(helm: str) -> None:
    docs = render(helm)
    crds = {
        ("CustomResourceDefinition", d["metadata"]["name"])
        for d in docs
        if d["kind"] == "CustomResourceDefinition"
    }
    assert len(crds) == len(list((CHART / "files" / "crds").glob("*.yaml"))), "crds.managed renders them all"
    assert kinds(docs) - crds == {
        ("Namespace", NS),
        ("ServiceAccount", "kruise-manager"),
        ("ClusterRole", "kruise-manager-role"),
        ("ClusterRoleBinding", "kruise-manager-rolebinding"),
        ("Role", "kruise-leader-election-role"),
        ("RoleBinding", "kruise-leader-election-rolebinding"),
        ("Secret", "kruise-webhook-certs"),
        ("Service", "kruise-webhook-service"),
        ("Deployment", "kruise-controller-manager"),
        # the daemon, on by default as upstream's chart always installs it
        ("ServiceAccount", "kruise-daemon"),
        ("ClusterRole", "kruise-daemon-role"),
        ("ClusterRoleBinding", "kruise-daemon-rolebinding"),
        ("DaemonSet", "kruise-daemon"),
        # the pre-delete hook (helm template renders hooks too)
        ("ServiceAccount", "kruise-helm-hook"),
        ("ClusterRole", "kruise-helm-hook-role"),
        ("ClusterRoleBinding", "kruise-helm-hook-rolebinding"),
        ("Job", "kruise-helm-hook-cleanup"),
    }, "no ServiceMonitor, no webhook configurations (the manager's)"
    deploy = find(docs, "Deployment", "kruise-controller-manager")
    assert deploy["metadata"]["namespace"] == NS
    assert deploy["spec"]["replicas"] == 2
    pod = deploy["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "kruise-manager"
    (container,) = pod["containers"]
    assert container["image"] == "kruise:0.1.0"
    assert container["args"][0] == "manager"
    flags = flag_map(container["args"])
    assert flags == {
        "--webhook-port": "9876",
        "--webhook-cert-dir": "/etc/kruise/webhook-certs",
        "--webhook-cert-writer": "secret",
        "--webhook-failure-policy": "Fail",
        "--webhook-timeout-seconds": "30",
        "--metrics-addr": ":8080",
        "--health-probe-addr": ":8000",
        "--enable-leader-election": "",
        "--leader-election-namespace": NS,
        "--rollout-configuration-namespace": NS,
        "--kube-client-qps": "50",
        "--kube-client-burst": "100",
        "--cloneset-workers": "3",
        "--sidecarset-workers": "3",
        "--rollout-workers": "3",
        "--batchrelease-workers": "3",
        "--expectation-timeout": "300",
        "--partition-percent-limit": "50",
        "--feature-gates": "",
    }
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"webhook-server": 9876, "metrics": 8080, "health": 8000}
    assert container["resources"] == {
        "limits": {"cpu": "200m", "memory": "512Mi"},
        "requests": {"cpu": "100m", "memory": "256Mi"},
    }
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "runAsUser": 65534,
        "runAsGroup": 65534,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    # keeps serving while its endpoints go (helm upgrade without admission failures)
    assert container["lifecycle"] == {"preStop": {"sleep": {"seconds": 5}}}
    assert pod["terminationGracePeriodSeconds"] > 5
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts["webhook-certs"] == "/etc/kruise/webhook-certs"
    # the daemon: beyond that, only uid 0 (the CRI socket's owner) and the socket's directory
    dpod = find(docs, "DaemonSet", "kruise-daemon")["spec"]["template"]["spec"]
    (dcontainer,) = dpod["containers"]
    assert dcontainer["securityContext"] == {
        "runAsUser": 0,
        "runAsGroup": 0,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert {m["mountPath"]: m.get("readOnly", False) for m in dcontainer["volumeMounts"]} == {
        "/hostvarrun": True,
        "/tmp": False,
    }
    assert [v["hostPath"]["path"] for v in dpod["volumes"] if "hostPath" in v] == ["/var/run"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["webhook-certs"] == {"name": "webhook-certs", "emptyDir": {}}, "the manager writes it"
    assert {
        "name": "POD_NAMESPACE",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
    } in container["env"]

    svc = find(docs, "Service", "kruise-webhook-service")
    assert svc["metadata"]["namespace"] == NS
    assert svc["spec"]["ports"] == [
        {"name": "webhook", "port": 443, "protocol": "TCP", "targetPort": "webhook-server"}
    ]
    assert svc["spec"]["selector"] == deploy["spec"]["selector"]["matchLabels"]
    assert deploy["spec"]["template"]["metadata"]["labels"]["control-plane"] == "controller-manager"


def test_values_reach_the_manager(helm: str, tmp_path: Path) -> None:
    docs = render(helm, values=values_file(tmp_path, EVERYTHING_ON))
    deploy = find(docs, "Deployment", "kruise-controller-manager")
    pod = deploy["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert deploy["spec"]["replicas"] == 3
    assert container["image"] == "registry.example.com/kruise:v9.9.9"
    assert container["imagePullPolicy"] == "Always"
    flags = flag_map(container["args"])
    assert flags["--webhook-port"] == "9443"
    assert flags["--webhook-failure-policy"] == "Ignore"
    assert flags["--webhook-timeout-seconds"] == "5"
    assert flags["--metrics-addr"] == ":18080"
    assert flags["--health-probe-addr"] == ":18000"
    assert (flags["--kube-client-qps"], flags["--kube-client-burst"]) == ("75", "150")
    assert flags["--cloneset-workers"] == "7"
    assert (flags["--rollout-workers"], flags["--batchrelease-workers"]) == ("10", "3")
    assert flags["--expectation-timeout"] == "120"
    assert flags["--partition-percent-limit"] == "80"
    assert flags["--feature-gates"] == "CloneSetShortHash=true,TemplateNoDefaults=false"
    assert {e["name"]: e.get("value") for e in container["env"]} == {
        "KRUISE_LOG_LEVEL": "INFO",  # klog "4"
        "POD_NAMESPACE": None,  # from the pod's metadata
    }
    assert pod["hostNetwork"] is True
    assert pod["imagePullSecrets"] == [{"name": "registry"}]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert "nodeAffinity" in pod["affinity"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"webhook-server": 9443, "metrics": 18080, "health": 18000}
    role = find(docs, "ClusterRole", "kruise-manager-role")
    assert role["rules"][-1] == EVERYTHING_ON["manager"]["extraRules"][0]
    sa = find(docs, "ServiceAccount", "kruise-manager")
    assert sa["metadata"]["annotations"] == {"example.com/role": "kruise"}
    monitor = find(docs, "ServiceMonitor", "kruise-manager")
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    metrics = find(docs, "Service", "kruise-manager-metrics")
    assert metrics["spec"]["ports"][0]["targetPort"] == "metrics"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= metrics["metadata"]["labels"].items()
    daemon = find(docs, "DaemonSet", "kruise-daemon")
    dpod = daemon["spec"]["template"]["spec"]
    assert dpod["hostNetwork"] is True and dpod["serviceAccountName"] == "kruise-daemon"
    assert dpod["containers"][0]["image"] == "registry.example.com/kruise:v9.9.9"
    assert dpod["containers"][0]["args"][0] == "daemon"
    assert {"name": "HTTP_PROXY", "value": "http://proxy:3128"} in dpod["containers"][0]["env"]
    assert ("ClusterRole", "kruise-daemon-role") in kinds(docs)


def test_upstream_style_values_are_accepted(helm: str, tmp_path: Path) -> None:
    """openkruise/charts values: failurePolicy as a map, klog levels, KruiseDaemon=false."""
    upstream = {
        "featureGates": "KruiseDaemon=false,CloneSetShortHash=true",
        "webhookConfiguration": {"failurePolicy": {"pods": "Ignore"}},
        "manager": {"log": {"level": "5"}},
        "daemon": {"enabled": True},
    }
    docs = render(helm, values=values_file(tmp_path, upstream))
    args = flag_map(manager_args(docs))
    # upstream's manager knows KruiseDaemon too (its CRR webhooks and controller follow it)
    assert args["--feature-gates"] == "KruiseDaemon=false,CloneSetShortHash=true"
    assert args["--webhook-failure-policy"] == "Fail", "`default` absent: Fail for all but mpod.kb.io"
    assert args["--pod-webhook-failure-policy"] == "Ignore"
    container = find(docs, "Deployment", "kruise-controller-manager")["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["env"][0] == {"name": "KRUISE_LOG_LEVEL", "value": "DEBUG"}
    assert not [d for d in docs if d["kind"] == "DaemonSet"], "KruiseDaemon=false wins over daemon.enabled"


def test_every_rendered_flag_exists_on_kruise_manager(helm: str, tmp_path: Path) -> None:
    command = typer.main.get_command(app).commands["manager"]  # type: ignore[attr-defined]
    known = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    for values in (
        {},
        EVERYTHING_ON,
        {"manager": {"replicas": 1, "leaderElection": {"enabled": False}}},
        {"webhookConfiguration": {"failurePolicy": {"pods": "Ignore"}}},
    ):
        args = manager_args(render(helm, values=values_file(tmp_path, values)))
        unknown = sorted(set(flag_map(args)) - known)
        assert unknown == [], f"kruise manager has no flag {unknown}"


def test_chart_knows_the_managers_feature_gates() -> None:
    helpers = (CHART / "templates" / "_helpers.tpl").read_text()
    block = re.search(r'define "kruise.knownFeatureGates" -}}\s*(\S+)\s*\{\{', helpers)
    assert block is not None
    assert set(block.group(1).split(",")) == set(FEATURE_GATES)


def test_the_certificate_secret_is_rendered_empty_for_the_manager_to_fill(helm: str) -> None:
    """No generated certificate in the chart: every render is the same (see test_chart_values)."""
    secret = find(render(helm), "Secret", "kruise-webhook-certs")
    assert secret["type"] == "Opaque"
    assert "data" not in secret and "stringData" not in secret


def test_manager_generated_certificates_need_one_replica(helm: str, tmp_path: Path) -> None:
    one = {"manager": {"replicas": 1, "webhook": {"certSource": "manager"}}}
    docs = render(helm, values=values_file(tmp_path, one))
    assert ("Secret", "kruise-webhook-certs") not in kinds(docs)
    assert flag_map(manager_args(docs))["--webhook-cert-writer"] == "fs"
    pod = find(docs, "Deployment", "kruise-controller-manager")["spec"]["template"]["spec"]
    assert {v["name"]: v for v in pod["volumes"]}["webhook-certs"] == {
        "name": "webhook-certs",
        "emptyDir": {},
    }


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"featureGates": "NoSuchGate=true"}, 'unknown gate "NoSuchGate"'),
        ({"featureGates": "CloneSetShortHash"}, "is not Name=true|false"),
        ({"manager": {"webhook": {"certSource": "manager"}}}, "use replicas: 1"),
        ({"manager": {"webhook": {"certSource": "helm"}}}, "at '/manager/webhook/certSource'"),
        ({"manager": {"leaderElection": {"enabled": False}}}, "run the controllers twice"),
        ({"webhookConfiguration": {"failurePolicy": "Sometimes"}}, "must be Fail or Ignore"),
        (
            {"webhookConfiguration": {"failurePolicy": {"pods": "Never"}}},
            'failurePolicy.pods must be Fail or Ignore, not "Never"',
        ),
        ({"manager": {"log": {"level": "chatty"}}}, "want DEBUG, INFO"),
        ({"manager": {"replica": 3}}, "at '/manager': additional properties 'replica' not allowed"),
        ({"crd": {"managed": False}}, "at '': additional properties 'crd' not allowed"),
        ({"daemon": {"credentialProvider": {"enable": True}}}, "credential provider is not supported"),
        ({"daemon": {"bindHostIP": True}}, "daemon.bindHostIP=true needs daemon.hostNetwork=true"),
    ],
    ids=[
        "an upstream gate this manager does not serve",
        "a gate without a value",
        "per-replica certificates with two replicas",
        "helm's generated certificates are gone",
        "two replicas without leader election",
        "an unknown failure policy",
        "an unknown pod webhook failure policy",
        "an unknown log level",
        "a misspelt key (the schema)",
        "a misspelt top-level key (the schema)",
        "an upstream feature not supported yet",
        "the node's IP without the host network",
    ],
)
def test_bad_values_fail_at_render_time(helm: str, tmp_path: Path, values: JSON, message: str) -> None:
    out = helm_run(helm, "template", "kruise", str(CHART), "-f", str(values_file(tmp_path, values)))
    assert out.returncode != 0
    assert message in out.stderr, out.stderr


# ---------------------------------------------------------------------------- on a control plane


def test_chart_is_accepted_by_the_api_server(installed: JSON, chart_cluster: TestCluster) -> None:
    objects = installed["install"]
    crds = [d["metadata"]["name"] for d in objects if d["kind"] == "CustomResourceDefinition"]
    assert sorted(crds) == sorted(
        yaml.safe_load(p.read_text())["metadata"]["name"] for p in (CHART / "files" / "crds").glob("*.yaml")
    )
    expected = {(o["kind"].lower(), o["metadata"]["name"]) for o in objects}
    hooks = {(o["kind"].lower(), o["metadata"]["name"]) for o in installed["hooks"]}
    assert reported(installed["dry"], "serverside-applied (server dry run)") == expected | hooks
    assert reported(installed["applied"], "serverside-applied") == expected
    # KWOK plays the two manager pods (the image is not pullable here, nothing really runs)
    chart_cluster.kubectl(
        "-n", NS, "wait", "--for=condition=Available", "deployment/kruise-controller-manager", "--timeout=90s"
    )
    pods = chart_cluster.kubectl(
        "-n",
        NS,
        "get",
        "pods",
        "-l",
        "control-plane=controller-manager",
        "-o",
        "jsonpath={.items[*].spec.nodeName}",
    ).stdout.split()
    assert len(pods) == 2
    assert chart_cluster.kubectl("-n", NS, "get", "daemonset", "kruise-daemon").returncode == 0


def test_pre_delete_hook_removes_the_webhook_configurations(
    installed: JSON, chart_cluster: TestCluster, tmp_path: Path
) -> None:
    """The hook's script, run with a token of its own ServiceAccount, deletes both configurations."""
    hooks = installed["hooks"]
    rbac = [d for d in hooks if d["kind"] != "Job"]
    (tmp_path / "hook-rbac.yaml").write_text(yaml.safe_dump_all(rbac))
    chart_cluster.kubectl("apply", "--server-side", "-f", str(tmp_path / "hook-rbac.yaml"))
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        name = f"kruise-{kind.removesuffix('WebhookConfiguration').lower()}-webhook-configuration"
        body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name}}
        chart_cluster.kubectl("apply", "--server-side", "-f", "-", input=yaml.safe_dump(body))
    token = chart_cluster.kubectl("-n", NS, "create", "token", "kruise-helm-hook").stdout.strip()
    kubeconfig = token_kubeconfig(chart_cluster, token, tmp_path / "hook.kubeconfig")
    container = find(hooks, "Job", "kruise-helm-hook-cleanup")["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:2] == ["python", "-c"]
    ran = subprocess.run(
        [sys.executable, "-c", container["command"][2]],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KUBECONFIG": str(kubeconfig)},
    )
    assert ran.returncode == 0, ran.stderr
    left = chart_cluster.kubectl(
        "get", "mutatingwebhookconfigurations,validatingwebhookconfigurations", "-o", "name"
    ).stdout
    assert "kruise-" not in left
