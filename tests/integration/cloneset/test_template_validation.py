"""CloneSet pod templates judged as Kubernetes judges a Pod, through the real API server.

Upstream's webhook runs Kubernetes' ``ValidatePodTemplateSpec`` on the template (claim templates
mocked in as PVC volumes); ours dry-runs a Pod made from it and reports the causes at
``spec.template...`` paths with the API server's own messages. Wrong JSON types inside the
template are refused by the typed CRD schema, int32 overflows by its bounds, before any webhook.
Each refusal changes nothing; each message names the field.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

import pytest

from kruise.core.errors import ApiError
from kruise.core.eventcorrelator import AGGREGATE_MAX_EVENTS
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import CLONESETS, EVENTS, Resource
from kruise.rollouts.manager.process import ManagerProcess
from tests.integration.cloneset.test_cloneset_inplace import pods_of, web_cloneset
from tests.support.wait import eventually

pytestmark = pytest.mark.usefixtures("manager")

JSON = dict[str, Any]
LIMIT_RANGES = Resource("", "v1", "limitranges", "LimitRange")
Mutation = Callable[[JSON], None]


def container(obj: JSON) -> JSON:
    result: JSON = obj["spec"]["template"]["spec"]["containers"][0]
    return result


def pod_spec(obj: JSON) -> JSON:
    result: JSON = obj["spec"]["template"]["spec"]
    return result


REFUSED = [
    pytest.param(
        lambda o: container(o).update(image=" registry.example.com/web:1"),
        ["spec.template.spec.containers[0].image: Invalid value", "leading or trailing whitespace"],
        id="an image with a leading space",
    ),
    pytest.param(
        lambda o: container(o).update(resources={"limits": {"cpu": "abc"}}),
        ["spec.template.spec.containers[0].resources.limits.cpu", "should match"],
        id="a cpu quantity that is no quantity (schema)",
    ),
    pytest.param(
        lambda o: container(o).update(resources={"limits": {"memory": "-1Gi"}}),
        ["spec.template.spec.containers[0].resources.limits[memory]", "must be greater than or equal to 0"],
        id="a negative memory limit",
    ),
    pytest.param(
        lambda o: container(o).update(resources={"limits": {"cpu": "1"}, "requests": {"cpu": "2"}}),
        ["spec.template.spec.containers[0].resources.requests", "must be less than or equal to cpu limit"],
        id="requests above limits",
    ),
    pytest.param(
        lambda o: container(o).update(
            env=[{"name": "A", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
        ),
        [
            "spec.template.spec.containers[0].env[0].valueFrom",
            "may not be specified when `value` is not empty",
        ],
        id="an env var with value and valueFrom",
    ),
    pytest.param(
        lambda o: container(o).update(readinessProbe={"periodSeconds": 5}),
        ["spec.template.spec.containers[0].readinessProbe: Required value", "must specify a handler type"],
        id="a probe without handler",
    ),
    pytest.param(
        lambda o: container(o).update(livenessProbe={"tcpSocket": {"port": 80}, "periodSeconds": -1}),
        ["spec.template.spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1"],
        id="a negative probe period",
    ),
    pytest.param(
        lambda o: pod_spec(o).update(containers=[]),
        ["spec.template.spec.containers: Required value"],
        id="at least one container",
    ),
    pytest.param(
        lambda o: pod_spec(o)["containers"].append(copy.deepcopy(container(o))),
        ['spec.template.spec.containers[1].name: Duplicate value: "web"'],
        id="container names are unique",
    ),
    pytest.param(
        lambda o: container(o).pop("image"),
        ["spec.template.spec.containers[0].image: Required value"],
        id="an image is required",
    ),
    pytest.param(
        lambda o: container(o).update(name="Web"),
        ['spec.template.spec.containers[0].name: Invalid value: "Web"', "RFC 1123 label"],
        id="container names are DNS labels",
    ),
    pytest.param(
        lambda o: container(o).update(volumeMounts=[{"name": "data", "mountPath": "/data"}]),
        ['spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"'],
        id="mounts must name a volume",
    ),
    pytest.param(
        lambda o: container(o).update(ports=[{"containerPort": 70000}]),
        ["spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000"],
        id="a port beyond 65535",
    ),
    pytest.param(
        lambda o: container(o).update(imagePullPolicy="Sometimes"),
        ['spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes"'],
        id="the pull policy is an enum",
    ),
    pytest.param(
        lambda o: o["spec"]["template"]["metadata"]["labels"].update({"bad key!": "x"}),
        ['spec.template.labels: Invalid value: "bad key!"'],
        id="template labels are reported at spec.template.labels",
    ),
    pytest.param(
        lambda o: pod_spec(o).update(restartPolicy="Never"),
        ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
        id="restartPolicy must be Always (upstream's own rule)",
    ),
    pytest.param(
        lambda o: o["spec"]["template"]["metadata"].update(annotations={"a": {"b": "c"}}),
        ["spec.template.metadata.annotations.a", "must be of type string"],
        id="annotations given as an object (schema)",
    ),
    pytest.param(
        lambda o: container(o).update(image=5),
        ["spec.template.spec.containers[0].image", "must be of type string"],
        id="an image given as a number (schema)",
    ),
    pytest.param(
        lambda o: o["spec"].update(volumeClaimTemplates="x"),
        ["spec.volumeClaimTemplates", "must be of type array"],
        id="volumeClaimTemplates given as a string (schema)",
    ),
    pytest.param(
        lambda o: o["spec"]["updateStrategy"].update(partition=10**12),
        ["spec.updateStrategy.partition: Invalid value: 1000000000000", "less than or equal to 2147483647"],
        id="a partition beyond int32 (schema)",
    ),
    pytest.param(
        lambda o: o["spec"]["updateStrategy"].update(maxSurge=10**12),
        ["spec.updateStrategy.maxSurge: Invalid value: 1000000000000", "less than or equal to 2147483647"],
        id="a maxSurge beyond int32 (schema)",
    ),
    pytest.param(
        lambda o: o["spec"]["updateStrategy"].update(maxUnavailable="5%%"),
        ['spec.updateStrategy.maxUnavailable: Invalid value: "5%%"', 'strconv.Atoi: parsing "5%"'],
        id="a doubled percent sign",
    ),
]


@pytest.mark.parametrize(("mutate", "fragments"), REFUSED)
async def test_a_bad_template_is_refused_with_the_field_named(
    kube: KubeClient, namespace: str, mutate: Mutation, fragments: list[str]
) -> None:
    body = web_cloneset(namespace, replicas=2, partition=0)
    mutate(body)
    with pytest.raises(ApiError) as err:
        await kube.create(CLONESETS, body, namespace)
    for fragment in fragments:
        assert fragment in err.value.message, err.value.message
    assert await kube.get_or_none(CLONESETS, "web", namespace) is None


async def test_an_update_to_a_bad_template_changes_nothing(kube: KubeClient, namespace: str) -> None:
    created = await kube.create(CLONESETS, web_cloneset(namespace, replicas=0), namespace)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": " bad"}]}}}}
    with pytest.raises(ApiError) as err:
        await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")
    assert "spec.template.spec.containers[0].image" in err.value.message
    after = await kube.get(CLONESETS, "web", namespace)
    assert after["metadata"]["generation"] == created["metadata"]["generation"]


async def test_volume_claim_templates_count_as_volumes(kube: KubeClient, namespace: str) -> None:
    body = web_cloneset(namespace, replicas=0)
    body["spec"]["volumeClaimTemplates"] = [
        {
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        }
    ]
    container(body)["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    clashing = copy.deepcopy(body)
    pod_spec(clashing)["volumes"] = [{"name": "data", "emptyDir": {}}]
    with pytest.raises(ApiError) as err:
        await kube.create(CLONESETS, clashing, namespace)
    assert 'spec.template.spec.volumes[1].name: Duplicate value: "data"' in err.value.message
    await kube.create(CLONESETS, body, namespace)


ACCEPTED = [
    pytest.param(lambda o: container(o).update(image="registry.example.com/web 1"), id="an inner space"),
    pytest.param(lambda o: container(o).update(resources={"limits": {"cpu": 0.5}}), id="a numeric quantity"),
    pytest.param(
        lambda o: container(o).update(livenessProbe={"httpGet": {"port": "http"}}), id="a named probe port"
    ),
    pytest.param(
        lambda o: o["spec"]["updateStrategy"].update(partition="33.5%"), id="a fractional partition"
    ),
]


@pytest.mark.parametrize("mutate", ACCEPTED)
async def test_what_kubernetes_accepts_is_accepted(
    kube: KubeClient, namespace: str, mutate: Mutation
) -> None:
    """Kubernetes checks only leading and trailing whitespace of an image; a Pod takes a number
    as a quantity; upstream parses a partition percentage as a float (kruise PR #1124)."""
    body = web_cloneset(namespace, replicas=0)
    mutate(body)
    await kube.create(CLONESETS, body, namespace)


async def test_a_fractional_partition_keeps_the_ceiling_of_its_share_old(
    kube: KubeClient, namespace: str
) -> None:
    """``partition: "33.5%"`` of 10 replicas keeps ceil(3.35) = 4 pods on the old revision."""
    await kube.create(CLONESETS, web_cloneset(namespace, replicas=10, partition="33.5%"), namespace)
    await eventually(lambda: _count_images(kube, namespace, 10), timeout=60, what="10 pods")
    patch = {
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "web", "image": "registry.example.com/shop/web:2"}]}
            }
        }
    }
    await kube.patch(CLONESETS, "web", patch, namespace, patch_type="merge")

    async def settled() -> dict[str, int] | None:
        images = await _images(kube, namespace)
        cs = await kube.get(CLONESETS, "web", namespace)
        done = (cs.get("status") or {}).get("updatedReadyReplicas") == 6
        return images if done and sum(images.values()) == 10 else None

    images = await eventually(settled, timeout=90, what="6 pods updated")
    assert images == {"registry.example.com/shop/web:1.4.0": 4, "registry.example.com/shop/web:2": 6}


async def _images(kube: KubeClient, namespace: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pod in await pods_of(kube, namespace):
        if pod["metadata"].get("deletionTimestamp"):
            continue
        image = pod["spec"]["containers"][0]["image"]
        counts[image] = counts.get(image, 0) + 1
    return counts


async def _count_images(kube: KubeClient, namespace: str, total: int) -> bool:
    return sum((await _images(kube, namespace)).values()) == total


async def test_a_pod_the_cluster_refuses_is_one_failed_create_event_per_attempt_and_no_traceback(
    kube: KubeClient, namespace: str, manager: ManagerProcess
) -> None:
    """A LimitRange the template exceeds: the template is valid, so the CloneSet is admitted (the
    dry run's 403 is policy, no verdict), and every pod creation is refused (403).

    Each attempt records one ``FailedCreate`` Warning event (an Event, or a count on the Event it
    repeats or aggregates into, as client-go's correlator) and one log line (the event's), the
    attempts back off exponentially (the work queue's 5 ms doubling, as kruise-manager's), and
    the manager logs no traceback and no second line per attempt.
    """
    limits = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "small"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "100m"}}]},
    }
    await kube.create(LIMIT_RANGES, limits, namespace)
    log_start = manager.log_path.stat().st_size
    body = web_cloneset(namespace, replicas=2, partition=0)
    container(body)["resources"] = {"limits": {"cpu": "200m"}}
    await kube.create(CLONESETS, body, namespace)
    await asyncio.sleep(12)
    events = [e for e in (await kube.list(EVENTS, namespace))["items"] if e.get("reason") == "FailedCreate"]
    # client-go's correlation: repeats PATCH one Event's count; the 10th distinct message and later
    # ones share one "(combined from similar events)" Event
    attempts = sum(e.get("count", 1) for e in events)
    assert 5 <= attempts <= 14, f"{attempts} attempts in 12 s: backoff 5 ms doubling allows about 11"
    assert len(events) <= AGGREGATE_MAX_EVENTS, [e["message"] for e in events]
    assert all(e["type"] == "Warning" and "forbidden" in e["message"] for e in events), events[0]
    assert await pods_of(kube, namespace) == []
    log = manager.log_path.read_bytes()[log_start:].decode(errors="replace")
    assert "Traceback" not in log
    # the admission dry run's note about the refused template is not the controller's
    controller = [line for line in log.splitlines() if "no verdict on the pod template" not in line]
    mine = [line for line in controller if f"{namespace}/web" in line]
    assert all("FailedCreate" in line for line in mine), [m for m in mine if "FailedCreate" not in m][:3]
    assert abs(len(mine) - attempts) <= 1, (len(mine), attempts)
