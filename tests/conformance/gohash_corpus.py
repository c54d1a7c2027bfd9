"""Pod templates the ComputeHash port is checked on against Go (``test_gohash_oracle``).

``tests/data/gohash/*.json`` are the Deployment templates of upstream's e2e test data
(``test/e2e/test_data`` of openkruise/rollouts); :func:`templates` adds ours and hand-made ones
covering what a template can hold: quantities in every form ``ParseQuantity`` takes (both of its
representations, the cached string kept or dropped, rounding, the binary-SI cap), probes,
``env`` ``valueFrom``, volumes, security contexts, affinity, tolerations, init containers,
topology spread constraints, label and annotation maps, ``null``/``[]``/``{}``, unknown keys,
keys in another case, and fields only newer ``k8s.io/api`` versions know.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.integration.rollouts.workload_support import deployment

JSON = dict[str, Any]
DATA = Path(__file__).resolve().parents[1] / "data" / "gohash"

QUANTITIES = [
    "100m", "1Gi", "0.5", "1e3", "2", "1.5Gi", "0.1Ki", "500Mi", "1k", "1M", "1G", "1T", "1P", "1E",
    "1Ki", "2Ei", "8Ei", "16Ei", "1.5", "0.000000001", "0.0000000001", "1234567890123456789",
    "12345678901234567890Gi", "+1", "-1", "-0.5Gi", "1e-3", "1E3", "0.0", "000", "1.", "1.Gi",
    "10000000000000000000000", "1e+3", "100000m", "3000", " 2 ", "0.0Gi", "0.5Ki", "1n", "1u",
    "123Mi", "1024Ki", "0.25", "250m", "1000", "1e9", "1e-9", "1e-10", "7Ki", "9Gi", "0.3Mi",
    "-100m", "00100m", "1.000", "512", "64Mi", "2.5e3", "1.5k", "0.001",
]  # fmt: skip


def _container(name: str, image: str, **extra: Any) -> JSON:
    return {"name": name, "image": image, **extra}


def _defaulted(template: JSON) -> JSON:
    """``template`` with the defaults a 1.37 API server fills in (as a GET returns it)."""
    out = copy.deepcopy(template)
    out.setdefault("metadata", {})["creationTimestamp"] = None
    spec = out["spec"]
    for c in spec["containers"]:
        c.setdefault("imagePullPolicy", "IfNotPresent")
        c.setdefault("resources", {})
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        for p in c.get("ports", []):
            p.setdefault("protocol", "TCP")
    spec.update(
        dnsPolicy="ClusterFirst",
        restartPolicy="Always",
        schedulerName="default-scheduler",
        securityContext={},
        terminationGracePeriodSeconds=30,
    )
    return out


def _rich() -> JSON:
    probe = {
        "httpGet": {
            "path": "/healthz",
            "port": "http",
            "scheme": "HTTP",
            "httpHeaders": [{"name": "X", "value": "1"}],
        },
        "initialDelaySeconds": 5,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    main = _container(
        "main",
        "registry.example.com/shop/web:1.4.0",
        command=["/bin/web"],
        args=["--port", "8080", ""],
        workingDir="/srv",
        ports=[
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"containerPort": 9090, "hostIP": "0.0.0.0"},
        ],
        env=[
            {"name": "A", "value": "1"},
            {"name": "NODE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
            {
                "name": "MEM",
                "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
            },
            {"name": "CM", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k", "optional": True}}},
            {"name": "S", "valueFrom": {"secretKeyRef": {"name": "sec", "key": "p", "optional": False}}},
        ],
        envFrom=[
            {"prefix": "P_", "configMapRef": {"name": "cfg"}},
            {"secretRef": {"name": "sec", "optional": True}},
        ],
        resources={
            "requests": {"cpu": "100m", "memory": "64Mi", "ephemeral-storage": "1Gi"},
            "limits": {"cpu": "0.5", "memory": "1.5Gi", "nvidia.com/gpu": "1", "example.com/x": "1e3"},
        },
        readinessProbe=probe,
        livenessProbe={"tcpSocket": {"port": 8080}, "periodSeconds": 3},
        startupProbe={"exec": {"command": ["cat", "/tmp/ok"]}, "failureThreshold": 30},
        lifecycle={"preStop": {"exec": {"command": ["sleep", "5"]}}, "postStart": {"httpGet": {"port": 80}}},
        volumeMounts=[
            {"name": "cfg", "mountPath": "/etc/cfg", "readOnly": True},
            {"name": "cache", "mountPath": "/cache", "subPath": "x"},
        ],
        securityContext={
            "runAsUser": 1000,
            "runAsNonRoot": True,
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        imagePullPolicy="Always",
        stdin=False,
        tty=True,
    )
    return {
        "metadata": {
            "labels": {
                "app": "web",
                "B": "1",
                "a.b/c": "2",
                "Z": "",
                "_": "x",
                "app.kubernetes.io/name": "web",
            },
            "annotations": {"prometheus.io/scrape": "true", "checksum/config": "abc", "note": "ü émoji"},
            "creationTimestamp": None,
        },
        "spec": {
            "initContainers": [
                _container("init", "busybox:1.36", command=["sh", "-c", "true"], resources={})
            ],
            "containers": [main, _container("sidecar", "envoy:1.30", resources={"limits": {"cpu": "2"}})],
            "volumes": [
                {
                    "name": "cfg",
                    "configMap": {"name": "cfg", "defaultMode": 420, "items": [{"key": "a", "path": "a"}]},
                },
                {"name": "sec", "secret": {"secretName": "sec", "defaultMode": 256, "optional": True}},
                {"name": "cache", "emptyDir": {"sizeLimit": "500Mi", "medium": "Memory"}},
                {"name": "tmp", "emptyDir": {}},
                {"name": "host", "hostPath": {"path": "/var/log", "type": "Directory"}},
                {
                    "name": "dapi",
                    "downwardAPI": {
                        "items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]
                    },
                },
                {
                    "name": "proj",
                    "projected": {
                        "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}]
                    },
                },
            ],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/arch",
                                        "operator": "In",
                                        "values": ["amd64", "arm64"],
                                    }
                                ]
                            }
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
                        }
                    ],
                },
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": "web"}, "matchExpressions": []},
                                "topologyKey": "kubernetes.io/hostname",
                            },
                        }
                    ]
                },
            },
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
            ],
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "minDomains": 2,
                    "matchLabelKeys": ["pod-template-hash"],
                }
            ],
            "securityContext": {
                "fsGroup": 2000,
                "runAsGroup": 3000,
                "sysctls": [{"name": "net.core.somaxconn", "value": "1024"}],
            },
            "nodeSelector": {"disk": "ssd", "a": "b"},
            "imagePullSecrets": [{"name": "regcred"}],
            "hostAliases": [{"ip": "127.0.0.1", "hostnames": ["foo.local"]}],
            "dnsConfig": {
                "nameservers": ["1.1.1.1"],
                "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}],
            },
            "serviceAccountName": "web",
            "automountServiceAccountToken": False,
            "priorityClassName": "high",
            "terminationGracePeriodSeconds": 60,
            "activeDeadlineSeconds": None,
            "enableServiceLinks": False,
            "readinessGates": [{"conditionType": "example.com/ready"}],
        },
    }


def _quantities() -> JSON:
    requests = {f"example.com/q{i:02d}": q for i, q in enumerate(QUANTITIES)}
    return {
        "metadata": {"labels": {"app": "q"}},
        "spec": {
            "containers": [
                _container("c", "img", resources={"requests": requests, "limits": {"cpu": 1, "memory": 2048}})
            ],
            "volumes": [{"name": f"e{i}", "emptyDir": {"sizeLimit": q}} for i, q in enumerate(QUANTITIES)],
        },
    }


def _json_edges() -> JSON:
    """``null``, ``[]``, ``{}``, unknown keys, keys in another case, newer fields."""
    return {
        "metadata": {"labels": {}, "annotations": None, "finalizers": [], "unknownField": 1},
        "spec": {
            "containers": [
                {
                    "NAME": "c",
                    "Image": "img",
                    "args": [],
                    "env": None,
                    "ports": [],
                    "resources": {"requests": {}, "limits": None, "claims": [{"name": "gpu"}]},
                    "readinessProbe": {"httpGet": {"port": "8080"}, "grpc": {"port": 9000, "service": None}},
                    "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}],
                    "restartPolicy": "Always",
                    "unknown": {"deep": [1, 2]},
                }
            ],
            "nodeSelector": {},
            "volumes": None,
            "schedulingGates": [{"name": "gate"}],
            "resources": {"limits": {"cpu": "4"}},
            "hostnameOverride": "h",
            "hostUsers": False,
            "os": {"name": "linux"},
            "overhead": {"cpu": "250m"},
        },
    }


def templates() -> dict[str, JSON]:
    """Name -> pod template (JSON as the API server would return it, or raw)."""
    out: dict[str, JSON] = {p.stem: json.loads(p.read_text()) for p in sorted(DATA.glob("*.json"))}
    ours = deployment("ns")["spec"]["template"]
    out["ours-workload-support"] = ours
    out["ours-workload-support-defaulted"] = _defaulted(ours)
    for name in list(out):
        if name.startswith("upstream-"):
            out[f"{name}-defaulted"] = _defaulted(out[name])
    out["rich"] = _rich()
    out["rich-defaulted"] = _defaulted(_rich())
    out["quantities"] = _quantities()
    out["quantities-sizelimits"] = {  # what an API server accepts: non-negative, not in resources
        "metadata": {"labels": {"app": "q"}},
        "spec": {
            "containers": [_container("c", "img")],
            "volumes": [
                {"name": f"e{i}", "emptyDir": {"sizeLimit": q}}
                for i, q in enumerate(QUANTITIES)
                if "-" not in q
            ],
        },
    }
    for i, q in enumerate(QUANTITIES):
        out[f"quantity-{i:02d}"] = {
            "spec": {"containers": [_container("c", "i", resources={"limits": {"cpu": q}})]}
        }
    out["json-edges"] = _json_edges()
    out["empty"] = {}
    return out
