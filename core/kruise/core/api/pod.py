"""Schema-only models of the Kubernetes objects a workload embeds: pod and PVC templates.

Upstream's CRDs leave ``template`` and ``volumeClaimTemplates`` schemaless (CRD size), so a
wrong JSON type in them (``volumeClaimTemplates: "x"``, ``image: 5``, annotations as an object)
reaches the webhooks and is reported far from its field. Here they are typed with these models,
so the API server's own schema validation names the field first
(``spec.template.spec.containers[0].image: Invalid value: "integer": ... must be of type string``).

The models only describe the schema (:class:`~kruise.core.api.base.SchemaModel`); controllers
keep the templates as raw dicts, byte for byte. Rules that keep every manifest the API server
accepts for a Pod acceptable here:

- every object keeps fields it does not describe (``x-kubernetes-preserve-unknown-fields``), so
  nothing newer than these models is pruned. A ``null`` in a described field is pruned by the API
  server (Go decodes it to the zero value anyway); undescribed ones, like the defaulting
  webhook's ``metadata.creationTimestamp: null``, are kept;
- resource quantities have no type (a Pod takes ``cpu: 1``, ``cpu: 0.5`` and ``cpu: "500m"``),
  only a pattern for strings;
  ports of HTTP and TCP handlers are int-or-string; integers are ``int32``/``int64`` as in
  ``k8s.io/api/core/v1``.

What a value *means* (an image with spaces, a negative period, requests above limits) is judged
by the API server's pod validation, through the workload webhook's dry run.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from kruise.core.api.base import (
    PRESERVE_UNKNOWN_OBJECT_SCHEMA,
    SCHEMALESS_SCHEMA,
    Bool,
    Int32,
    Int64,
    IntOrString,
    KubeModel,
    SchemaOverride,
)

__all__ = ["QUANTITY_PATTERN", "PersistentVolumeClaimTemplate", "PodTemplateSpec", "Quantity"]

QUANTITY_PATTERN = (
    r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?$"
)
"""The syntax of a quantity written as a string (Kubernetes' OpenAPI publishes the same rule)."""

Quantity = Annotated[Any, SchemaOverride({**SCHEMALESS_SCHEMA, "pattern": QUANTITY_PATTERN})]
"""``resource.Quantity``: a JSON number (``1``, ``0.5``) or a string matching :data:`QUANTITY_PATTERN`
(``"500m"``, ``"1Gi"``). No type, as a Pod takes both; the pattern applies to strings only. A
malformed string would otherwise fail the decoding of the dry-run Pod as a whole, without a field."""

_Preserved = Annotated[dict[str, Any], SchemaOverride(PRESERVE_UNKNOWN_OBJECT_SCHEMA)]
_ObjectList = list[_Preserved]


class _Embedded(KubeModel):
    """Base of the schema-only models: unknown fields are kept by the API server."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-preserve-unknown-fields": True})


class TemplateMeta(_Embedded):
    """Metadata of a pod or claim template."""

    name: str | None = None
    namespace: str | None = None
    generate_name: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None


class ContainerPort(_Embedded):
    """A port a container exposes."""

    name: str | None = None
    container_port: Int32 | None = None
    host_port: Int32 | None = None
    host_ip: str | None = Field(default=None, alias="hostIP")
    protocol: str | None = None


class EnvVar(_Embedded):
    """An environment variable: a value or a reference."""

    name: str | None = None
    value: str | None = None
    value_from: _Preserved | None = None


class ResourceRequirements(_Embedded):
    """Compute resources: limits and requests by resource name."""

    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None
    claims: _ObjectList | None = None


class VolumeMount(_Embedded):
    """Where a volume is mounted in a container."""

    name: str | None = None
    mount_path: str | None = None
    sub_path: str | None = None
    sub_path_expr: str | None = None
    mount_propagation: str | None = None
    read_only: Bool | None = None
    recursive_read_only: str | None = None


class ExecAction(_Embedded):
    """Run a command in the container."""

    command: list[str] | None = None


class HTTPHeader(_Embedded):
    """An HTTP header of a probe request."""

    name: str | None = None
    value: str | None = None


class HTTPGetAction(_Embedded):
    """An HTTP GET against the container."""

    path: str | None = None
    port: IntOrString | None = None
    host: str | None = None
    scheme: str | None = None
    http_headers: list[HTTPHeader] | None = None


class TCPSocketAction(_Embedded):
    """A TCP connection to the container."""

    port: IntOrString | None = None
    host: str | None = None


class GRPCAction(_Embedded):
    """A gRPC health check."""

    port: Int32 | None = None
    service: str | None = None


class SleepAction(_Embedded):
    """Sleep before the container continues."""

    seconds: Int64 | None = None


class Probe(_Embedded):
    """A liveness, readiness or startup probe."""

    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    grpc: GRPCAction | None = None
    initial_delay_seconds: Int32 | None = None
    timeout_seconds: Int32 | None = None
    period_seconds: Int32 | None = None
    success_threshold: Int32 | None = None
    failure_threshold: Int32 | None = None
    termination_grace_period_seconds: Int64 | None = None


class LifecycleHandler(_Embedded):
    """A container lifecycle hook."""

    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    sleep: SleepAction | None = None


class ContainerLifecycle(_Embedded):
    """Hooks run after start and before stop."""

    post_start: LifecycleHandler | None = None
    pre_stop: LifecycleHandler | None = None
    stop_signal: str | None = None


class Container(_Embedded):
    """A container of the pod (also an init container)."""

    name: str | None = None
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    ports: list[ContainerPort] | None = None
    env_from: _ObjectList | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements | None = None
    resize_policy: _ObjectList | None = None
    restart_policy: str | None = None
    volume_mounts: list[VolumeMount] | None = None
    volume_devices: _ObjectList | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    lifecycle: ContainerLifecycle | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None
    security_context: _Preserved | None = None
    stdin: Bool | None = None
    stdin_once: Bool | None = None
    tty: Bool | None = None


class KeyToPath(_Embedded):
    """A key of a ConfigMap or Secret projected to a file."""

    key: str | None = None
    path: str | None = None
    mode: Int32 | None = None


class ConfigMapVolumeSource(_Embedded):
    """A ConfigMap as a volume."""

    name: str | None = None
    items: list[KeyToPath] | None = None
    default_mode: Int32 | None = None
    optional: Bool | None = None


class SecretVolumeSource(_Embedded):
    """A Secret as a volume."""

    secret_name: str | None = None
    items: list[KeyToPath] | None = None
    default_mode: Int32 | None = None
    optional: Bool | None = None


class EmptyDirVolumeSource(_Embedded):
    """A scratch directory living as long as the pod."""

    medium: str | None = None
    size_limit: Quantity | None = None


class PVCVolumeSource(_Embedded):
    """A PersistentVolumeClaim as a volume."""

    claim_name: str | None = None
    read_only: Bool | None = None


class HostPathVolumeSource(_Embedded):
    """A directory of the node."""

    path: str | None = None
    type: str | None = None


class Volume(_Embedded):
    """A volume of the pod; sources not described here are kept as written."""

    name: str | None = None
    empty_dir: EmptyDirVolumeSource | None = None
    config_map: ConfigMapVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    persistent_volume_claim: PVCVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None


class Toleration(_Embedded):
    """A taint the pod tolerates."""

    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: Int64 | None = None


class LocalObjectReference(_Embedded):
    """A reference to an object of the same namespace by name."""

    name: str | None = None


class PodReadinessGate(_Embedded):
    """A pod condition that must be True for the pod to be Ready."""

    condition_type: str | None = None


class HostAlias(_Embedded):
    """An /etc/hosts entry."""

    ip: str | None = None
    hostnames: list[str] | None = None


class PodSpec(_Embedded):
    """The pod's specification."""

    containers: list[Container] | None = None
    init_containers: list[Container] | None = None
    ephemeral_containers: _ObjectList | None = None
    volumes: list[Volume] | None = None
    restart_policy: str | None = None
    termination_grace_period_seconds: Int64 | None = None
    active_deadline_seconds: Int64 | None = None
    dns_policy: str | None = None
    dns_config: _Preserved | None = None
    node_selector: dict[str, str] | None = None
    node_name: str | None = None
    service_account_name: str | None = None
    service_account: str | None = None
    automount_service_account_token: Bool | None = None
    host_network: Bool | None = None
    host_pid: Bool | None = Field(default=None, alias="hostPID")
    host_ipc: Bool | None = Field(default=None, alias="hostIPC")
    host_users: Bool | None = None
    share_process_namespace: Bool | None = None
    security_context: _Preserved | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    hostname: str | None = None
    subdomain: str | None = None
    set_hostname_as_fqdn: Bool | None = Field(default=None, alias="setHostnameAsFQDN")
    affinity: _Preserved | None = None
    scheduler_name: str | None = None
    tolerations: list[Toleration] | None = None
    host_aliases: list[HostAlias] | None = None
    priority_class_name: str | None = None
    priority: Int32 | None = None
    readiness_gates: list[PodReadinessGate] | None = None
    runtime_class_name: str | None = None
    enable_service_links: Bool | None = None
    preemption_policy: str | None = None
    overhead: dict[str, Quantity] | None = None
    topology_spread_constraints: _ObjectList | None = None
    os: _Preserved | None = None
    scheduling_gates: _ObjectList | None = None
    resource_claims: _ObjectList | None = None
    resources: ResourceRequirements | None = None


class PodTemplateSpec(_Embedded):
    """Describes the pods that will be created."""

    metadata: TemplateMeta | None = None
    spec: PodSpec | None = None


class ClaimResources(_Embedded):
    """Storage requested by a claim."""

    limits: dict[str, Quantity] | None = None
    requests: dict[str, Quantity] | None = None


class ClaimSpec(_Embedded):
    """The claim's specification."""

    access_modes: list[str] | None = None
    selector: _Preserved | None = None
    resources: ClaimResources | None = None
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: _Preserved | None = None
    data_source_ref: _Preserved | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimTemplate(_Embedded):
    """A claim each pod gets its own copy of."""

    api_version: str | None = None
    kind: str | None = None
    metadata: TemplateMeta | None = None
    spec: ClaimSpec | None = None
    status: _Preserved | None = None
