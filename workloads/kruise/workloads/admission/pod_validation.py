"""The subset of Kubernetes ``ValidatePodTemplateSpec`` the CloneSet webhook can reproduce faithfully.

Upstream (``pkg/apis/core/validation``, Kubernetes 1.28-1.30) validates a pod template with
hundreds of rules. This module mirrors, with the same paths, order and messages:

- template ``labels``/``annotations`` (reported at ``<path>.labels``, not ``metadata.labels``);
- ``terminationGracePeriodSeconds`` required; ``volumes`` names (required, DNS-1123 label,
  unique), with extra claim-backed volumes appended as upstream mocks ``volumeClaimTemplates``;
- ``containers`` (at least one) and ``initContainers``: name (required, DNS-1123 label, unique
  across both lists), ``image`` required, ``terminationMessagePolicy``, ``ports`` (name,
  ``containerPort``, ``hostPort``, ``protocol``), ``env[].name`` required, ``volumeMounts``
  (name required and found, ``mountPath`` required and unique), ``imagePullPolicy``;
- ``restartPolicy``, ``dnsPolicy``, ``nodeSelector``, ``serviceAccountName``,
  ``activeDeadlineSeconds`` range, ``hostname``/``subdomain``; ephemeral containers forbidden.

Everything else (probes, resources, security contexts, affinity, topology spread, volume
sources...) is accepted unchecked. Callers validate a *defaulted* template, as upstream does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kruise.workloads.admission.fielderrors import (
    FieldError,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)
from kruise.workloads.admission.metavalidation import (
    is_dns1123_label,
    name_is_dns_subdomain,
    validate_annotations,
    validate_labels,
)

__all__ = ["validate_pod_template"]

_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_MESSAGE_POLICIES = ["File", "FallbackToLogsOnError"]
_RESTART_POLICIES = ["Always", "OnFailure", "Never"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_MAX_INT32 = 2**31 - 1


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [v if isinstance(v, Mapping) else {} for v in value] if isinstance(value, list) else []


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _dns_label(value: str, path: str) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in is_dns1123_label(value)]


def _enum(value: str, path: str, valid: list[str]) -> list[FieldError]:
    if not value:
        return [required(path)]
    return [] if value in valid else [not_supported(path, value, valid)]


def _is_valid_port_name(name: str) -> list[str]:
    errs = []
    if len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not all(c.isascii() and (c.islower() or c.isdigit() or c == "-") for c in name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not any("a" <= c <= "z" for c in name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name and (name[0] == "-" or name[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _port_num(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, int) and 1 <= value <= 65535:
        return []
    return [invalid(path, value, "must be between 1 and 65535, inclusive")]


def _ports(ports: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(_dicts(ports)):
        ppath = f"{path}[{i}]"
        name = _text(port.get("name"))
        if name:
            msgs = _is_valid_port_name(name)
            errs.extend(invalid(f"{ppath}.name", name, m) for m in msgs)
            if not msgs and name in names:
                errs.append(duplicate(f"{ppath}.name", name))
            elif not msgs:
                names.add(name)
        if not port.get("containerPort"):
            errs.append(required(f"{ppath}.containerPort"))
        else:
            errs.extend(_port_num(port.get("containerPort"), f"{ppath}.containerPort"))
        if port.get("hostPort"):
            errs.extend(_port_num(port.get("hostPort"), f"{ppath}.hostPort"))
        protocol = _text(port.get("protocol"))
        if not protocol:
            errs.append(required(f"{ppath}.protocol"))
        elif protocol not in _PROTOCOLS:
            errs.append(not_supported(f"{ppath}.protocol", protocol, _PROTOCOLS))
    return errs


def _volume_mounts(mounts: Any, volumes: set[str], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    mount_points: set[str] = set()
    for i, mount in enumerate(_dicts(mounts)):
        mpath = f"{path}[{i}]"
        name, mount_path = _text(mount.get("name")), _text(mount.get("mountPath"))
        if not name:
            errs.append(required(f"{mpath}.name"))
        if name not in volumes:
            errs.append(not_found(f"{mpath}.name", name))
        if not mount_path:
            errs.append(required(f"{mpath}.mountPath"))
        if mount_path in mount_points:
            errs.append(invalid(f"{mpath}.mountPath", mount_path, "must be unique"))
        mount_points.add(mount_path)
    return errs


def _container_common(container: Mapping[str, Any], volumes: set[str], path: str) -> list[FieldError]:
    """``validateContainerCommon`` (the checks listed in the module docstring)."""
    errs: list[FieldError] = []
    name = _text(container.get("name"))
    errs.extend([required(f"{path}.name")] if not name else _dns_label(name, f"{path}.name"))
    if not _text(container.get("image")):
        errs.append(required(f"{path}.image"))
    errs.extend(
        _enum(
            _text(container.get("terminationMessagePolicy")),
            f"{path}.terminationMessagePolicy",
            _MESSAGE_POLICIES,
        )
    )
    errs.extend(_ports(container.get("ports"), f"{path}.ports"))
    for i, env in enumerate(_dicts(container.get("env"))):
        if not _text(env.get("name")):
            errs.append(required(f"{path}.env[{i}].name"))
    errs.extend(_volume_mounts(container.get("volumeMounts"), volumes, f"{path}.volumeMounts"))
    errs.extend(_enum(_text(container.get("imagePullPolicy")), f"{path}.imagePullPolicy", _PULL_POLICIES))
    return errs


def _volumes(volumes: Iterable[Mapping[str, Any]], path: str) -> tuple[set[str], list[FieldError]]:
    """``ValidateVolumes`` (names only): returns the names of the valid volumes and the errors."""
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, volume in enumerate(volumes):
        npath = f"{path}[{i}].name"
        name = _text(volume.get("name"))
        volume_errs = [required(npath)] if not name else _dns_label(name, npath)
        if name in names:
            volume_errs.append(duplicate(npath, name))
        if volume_errs:
            errs.extend(volume_errs)
        else:
            names.add(name)
    return names, errs


def _pod_spec(spec: Mapping[str, Any], path: str, extra_volumes: list[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.get("terminationGracePeriodSeconds") is None:
        errs.append(required(f"{path}.terminationGracePeriodSeconds"))
    volumes = [*_dicts(spec.get("volumes")), *({"name": v} for v in extra_volumes)]
    volume_names, volume_errs = _volumes(volumes, f"{path}.volumes")
    errs.extend(volume_errs)
    containers = _dicts(spec.get("containers"))
    if not containers:
        errs.append(required(f"{path}.containers"))
    names: set[str] = set()
    for i, container in enumerate(containers):
        cpath = f"{path}.containers[{i}]"
        errs.extend(_container_common(container, volume_names, cpath))
        name = _text(container.get("name"))
        if name in names:
            errs.append(duplicate(f"{cpath}.name", name))
        names.add(name)
    for i, container in enumerate(_dicts(spec.get("initContainers"))):
        cpath = f"{path}.initContainers[{i}]"
        errs.extend(_container_common(container, volume_names, cpath))
        name = _text(container.get("name"))
        if name in names:
            errs.append(duplicate(f"{cpath}.name", name))
        elif name:
            names.add(name)
    errs.extend(_enum(_text(spec.get("restartPolicy")), f"{path}.restartPolicy", _RESTART_POLICIES))
    errs.extend(_enum(_text(spec.get("dnsPolicy")), f"{path}.dnsPolicy", _DNS_POLICIES))
    errs.extend(validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector"))
    account = _text(spec.get("serviceAccountName"))
    if account:
        errs.extend(
            invalid(f"{path}.serviceAccountName", account, m) for m in name_is_dns_subdomain(account, False)
        )
    deadline = spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= _MAX_INT32:
        errs.append(
            invalid(
                f"{path}.activeDeadlineSeconds", deadline, f"must be between 1 and {_MAX_INT32}, inclusive"
            )
        )
    for key in ("hostname", "subdomain"):
        if _text(spec.get(key)):
            errs.extend(_dns_label(_text(spec.get(key)), f"{path}.{key}"))
    return errs


def validate_pod_template(template: Any, path: str, *, extra_volumes: Iterable[str] = ()) -> list[FieldError]:
    """``ValidatePodTemplateSpec`` subset (see the module docstring) for ``template`` at ``path``.

    ``extra_volumes`` are claim names appended to ``spec.volumes`` first, as the CloneSet
    webhook does with its ``volumeClaimTemplates``.
    """
    template = template if isinstance(template, Mapping) else {}
    metadata = template.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    spec = template.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    errs = validate_labels(metadata.get("labels"), f"{path}.labels")
    errs.extend(validate_annotations(metadata.get("annotations"), f"{path}.annotations"))
    errs.extend(_pod_spec(spec, f"{path}.spec", list(extra_volumes)))
    if _dicts(spec.get("ephemeralContainers")):
        errs.append(
            forbidden(f"{path}.spec.ephemeralContainers", "ephemeral containers not allowed in pod template")
        )
    return errs
