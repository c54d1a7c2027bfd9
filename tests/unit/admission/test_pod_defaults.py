"""Pod templates get Kubernetes' defaults the way OpenKruise's webhook injects them."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.workloads.admission.pod_defaults import add_marshal_artifacts, default_pod_template, image_tag


def template(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1"}], **spec},
    }


def test_a_minimal_template_gets_the_pod_spec_and_container_defaults() -> None:
    assert default_pod_template(template()) == {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1",
                    "imagePullPolicy": "Always",
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "securityContext": {},
            "terminationGracePeriodSeconds": 30,
            "schedulerName": "default-scheduler",
        },
    }


def test_the_input_is_never_mutated() -> None:
    given = template(volumes=[{"name": "v"}])
    snapshot = copy.deepcopy(given)
    default_pod_template(given)
    assert given == snapshot


def test_set_values_are_kept() -> None:
    spec = default_pod_template(
        template(
            dnsPolicy="Default", restartPolicy="Never", terminationGracePeriodSeconds=0, schedulerName="s"
        )
    )["spec"]
    assert (spec["dnsPolicy"], spec["restartPolicy"]) == ("Default", "Never")
    assert (spec["terminationGracePeriodSeconds"], spec["schedulerName"]) == (0, "s")


@pytest.mark.parametrize(
    ("image", "init_policy"),
    [
        pytest.param("nginx", "Always", id="untagged means latest"),
        pytest.param("nginx:latest", "Always", id="explicit latest"),
        pytest.param("nginx:1.25", "IfNotPresent", id="a tag"),
        pytest.param("registry:5000/team/app", "Always", id="a registry port is not a tag"),
        pytest.param("nginx@sha256:" + "a" * 64, "IfNotPresent", id="a digest has no tag"),
    ],
)
def test_image_pull_policy_follows_the_tag_for_init_containers_only(image: str, init_policy: str) -> None:
    spec = default_pod_template(
        template(
            initContainers=[{"name": "init", "image": image}], containers=[{"name": "c", "image": image}]
        )
    )["spec"]
    assert spec["initContainers"][0]["imagePullPolicy"] == init_policy
    assert spec["containers"][0]["imagePullPolicy"] == "Always"  # OpenKruise: always, for in-place update


def test_image_tag() -> None:
    assert image_tag("a/b:c") == "c"
    assert image_tag("a:5000/b") == "latest"
    assert image_tag("b:t@sha256:x") == "t"


def test_ports_env_probes_lifecycle_and_resources() -> None:
    container = {
        "name": "web",
        "image": "nginx:1",
        "ports": [{"containerPort": 80}],
        "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "livenessProbe": {"httpGet": {"port": 80}},
        "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 5},
        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop"}}},
        "resources": {"limits": {"cpu": "0.5", "memory": "1024Mi"}, "requests": {"cpu": 1}},
    }
    out = default_pod_template(template(containers=[container]))["spec"]["containers"][0]
    assert out["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert out["env"][0]["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name", "apiVersion": "v1"}
    assert out["livenessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert out["readinessProbe"]["periodSeconds"] == 5
    assert out["lifecycle"]["preStop"]["httpGet"] == {"port": 80, "path": "/stop", "scheme": "HTTP"}
    assert out["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "1"}}


def test_volumes() -> None:
    volumes = [
        {"name": "scratch"},
        {"name": "host", "hostPath": {"path": "/var/log"}},
        {"name": "secret", "secret": {"secretName": "s"}},
        {"name": "cm", "configMap": {"name": "c", "defaultMode": 256}},
        {
            "name": "down",
            "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]},
        },
        {"name": "proj", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
        {"name": "claim", "persistentVolumeClaim": {"claimName": "c"}},
    ]
    out = default_pod_template(template(volumes=volumes))["spec"]["volumes"]
    assert out[0] == {"name": "scratch", "emptyDir": {}}
    assert out[1]["hostPath"] == {"path": "/var/log", "type": ""}
    assert out[2]["secret"] == {"secretName": "s", "defaultMode": 420}
    assert out[3]["configMap"]["defaultMode"] == 256
    assert out[4]["downwardAPI"] == {
        "items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}],
        "defaultMode": 420,
    }
    assert out[5]["projected"] == {
        "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}],
        "defaultMode": 420,
    }
    assert out[6] == volumes[6]


def test_ephemeral_containers_only_get_port_env_and_resource_defaults() -> None:
    spec = default_pod_template(
        template(ephemeralContainers=[{"name": "dbg", "image": "busybox", "ports": [{"containerPort": 1}]}])
    )["spec"]
    assert spec["ephemeralContainers"] == [
        {"name": "dbg", "image": "busybox", "ports": [{"containerPort": 1, "protocol": "TCP"}]}
    ]


def test_a_template_without_spec_is_defaulted_from_empty() -> None:
    assert default_pod_template({})["spec"]["restartPolicy"] == "Always"


def test_marshal_artifacts() -> None:
    out = add_marshal_artifacts(template(initContainers=[{"name": "i", "image": "x", "resources": None}]))
    assert out["metadata"] == {"labels": {"app": "web"}, "creationTimestamp": None}
    assert out["spec"]["containers"][0]["resources"] == {}
    assert out["spec"]["initContainers"][0]["resources"] == {}
    assert add_marshal_artifacts({})["metadata"] == {"creationTimestamp": None}
