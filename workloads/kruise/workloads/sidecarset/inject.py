"""Injection of SidecarSets into a pod being created (pure; upstream ``sidecarsetMutatingPod``).

:func:`inject` takes the pod and the SidecarSets chosen for it (matching, not injection-paused,
already resolved to the revision to inject, in order: those of the pod's namespace, then the
cluster-wide ones) and returns the pod to admit, or ``None`` when nothing changes. Per SidecarSet:

1. ``patchPodMetadata`` annotations: ``Retain`` sets missing keys, ``Overwrite`` sets all,
   ``MergePatchJson`` merges the JSON value into the pod's (RFC 7386);
2. every init container (sorted by name, after the pod's own unless ``BeforeAppContainer``) and
   every container (before the app containers unless ``AfterAppContainer``); a container the
   pod already has by that name is replaced where it stands. Each gets env ``IS_INJECTED=true``,
   its ``transferEnv`` (from the named app container, or the one a ``fieldRef`` to a pod label or
   annotation names) and, with ``shareVolumePolicy: enabled``, every app container's volume
   mounts (mount paths it already has win) plus the env vars their ``subPathExpr`` refers to;
   a hot-upgrade sidecar becomes its ``-1``/``-2`` pair (:mod:`.hotupgrade`);
3. the volumes the sidecars mount and the ``imagePullSecrets``, merged by name (the pod's win);
4. annotations ``kruise.io/sidecarset-hash``, ``-hash-without-image`` (name -> hash, time,
   sidecar list, ControllerRevision) and ``kruise.io/sidecarset-injected-list``.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.core.jsoncopy import json_copy
from kruise.workloads.objects import KubeObject, annotations_of, labels, mapping, metadata, sequence
from kruise.workloads.sidecarset.hashing import is_native_sidecar
from kruise.workloads.sidecarset.hotupgrade import hot_containers, is_hot_upgrade
from kruise.workloads.sidecarset.keys import (
    HASH_ANNOTATION,
    HASH_WITHOUT_IMAGE_ANNOTATION,
    INJECTED_ENV,
    INJECTED_LIST_ANNOTATION,
    SIDECAR_ONLY_FIELDS,
    WORKING_HOT_UPGRADE_ANNOTATION,
)
from kruise.workloads.sidecarset.podinfo import (
    UpgradeSpec,
    dump_json,
    dump_specs,
    injected_list_value,
    injected_names,
    specs_of,
    working_containers,
)

__all__ = [
    "apply_merge_patch",
    "inject",
    "is_injected_container",
    "merge_by_key",
    "patch_pod_annotations",
    "shared_mounts_and_envs",
    "transfer_envs",
]

JSON = dict[str, Any]
_SUBPATH_ENV = re.compile(r"\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)")
_SUBSCRIPT = re.compile(r"^(metadata\.(?:labels|annotations))\['(.*)'\]$")


def merge_by_key(original: Sequence[Any], additional: Sequence[Any], key: str) -> list[Any]:
    """``original`` plus the ``additional`` items whose ``key`` is new (``util.Merge*``)."""
    seen = {mapping(item).get(key) for item in original}
    out = list(original)
    for item in additional:
        value = mapping(item).get(key)
        if value not in seen:
            out.append(item)
            seen.add(value)
    return out


def is_injected_container(container: Mapping[str, Any]) -> bool:
    """The container carries env ``IS_INJECTED=true``."""
    return any(
        mapping(e).get("name") == INJECTED_ENV and mapping(e).get("value") == "true"
        for e in sequence(container.get("env"))
    )


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch of ``patch`` onto ``target`` (a copy is returned)."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = apply_merge_patch(out.get(key), value)
    return out


def patch_pod_annotations(annotations: dict[str, str], patches: Sequence[Any]) -> None:
    """Apply ``patchPodMetadata`` to ``annotations`` in place (``PatchPodMetadata``).

    Raises:
        ValueError: a ``MergePatchJson`` value or the pod's value is not JSON.
    """
    for patch in patches:
        body = mapping(patch)
        policy = body.get("patchPolicy") or "Retain"
        for key, value in mapping(body.get("annotations")).items():
            if policy == "Retain":
                annotations.setdefault(key, str(value))
            elif policy == "Overwrite":
                annotations[key] = str(value)
            elif policy == "MergePatchJson":
                origin = annotations.get(key)
                if origin:
                    merged = apply_merge_patch(json.loads(origin), json.loads(str(value)))
                    annotations[key] = json.dumps(merged, separators=(",", ":"), sort_keys=True)
                else:
                    annotations[key] = str(value)


def _source_container(transfer: Mapping[str, Any], pod: KubeObject) -> str | None:
    name = str(transfer.get("sourceContainerName") or "")
    ref = mapping(mapping(transfer.get("sourceContainerNameFrom")).get("fieldRef"))
    if not ref:
        return name
    found = _SUBSCRIPT.match(str(ref.get("fieldPath") or ""))
    if found is None:
        return None  # upstream: "unsupported fieldPath" / "does not support subscript", skipped
    values = labels(pod) if found.group(1) == "metadata.labels" else annotations_of(pod)
    return str(values.get(found.group(2)) or "")


def transfer_envs(sidecar: Mapping[str, Any], pod: KubeObject) -> list[JSON]:
    """The env vars ``sidecar.transferEnv`` copies from the pod's containers (``GetSidecarTransferEnvs``)."""
    in_pod: dict[tuple[str, str], JSON] = {}
    for container in sequence(mapping(pod.get("spec")).get("containers")):
        for env in sequence(mapping(container).get("env")):
            in_pod[(str(mapping(container).get("name")), str(mapping(env).get("name")))] = dict(env)
    out: list[JSON] = []
    for item in sequence(sidecar.get("transferEnv")):
        transfer = mapping(item)
        names = {str(n) for n in sequence(transfer.get("envNames"))}
        if transfer.get("envName"):
            names.add(str(transfer["envName"]))
        source = _source_container(transfer, pod)
        if source is None:
            continue
        out.extend(in_pod[(source, n)] for n in sorted(names) if (source, n) in in_pod)
    return out


def shared_mounts_and_envs(sidecar: Mapping[str, Any], pod: KubeObject) -> tuple[list[JSON], list[JSON]]:
    """With ``shareVolumePolicy: enabled``: every app container's volume mounts and the env vars
    their ``subPathExpr`` names (``GetInjectedVolumeMountsAndEnvs``); else nothing."""
    if mapping(sidecar.get("shareVolumePolicy")).get("type") != "enabled":
        return [], []
    mounts: list[JSON] = []
    envs: list[JSON] = []
    for item in sequence(mapping(pod.get("spec")).get("containers")):
        container = mapping(item)
        if is_injected_container(container):
            continue
        by_name = {mapping(e).get("name"): dict(e) for e in sequence(container.get("env"))}
        for mount in sequence(container.get("volumeMounts")):
            mounts.append(dict(mount))
            for env in _SUBPATH_ENV.findall(str(mapping(mount).get("subPathExpr") or "")):
                if env in by_name:
                    envs.append(by_name[env])
    return mounts, envs


def _prepared(sidecar: Mapping[str, Any], pod: KubeObject) -> JSON:
    """The sidecar container as injected: shared mounts, ``IS_INJECTED`` and transferred env."""
    out = json_copy(dict(sidecar))
    mounts, sub_envs = shared_mounts_and_envs(sidecar, pod)
    envs = merge_by_key(transfer_envs(sidecar, pod), sub_envs, "name")
    out["volumeMounts"] = merge_by_key(list(sequence(out.get("volumeMounts"))), mounts, "mountPath")
    if not out["volumeMounts"]:
        del out["volumeMounts"]
    own_env = [*sequence(out.get("env")), {"name": INJECTED_ENV, "value": "true"}]
    out["env"] = merge_by_key(own_env, envs, "name")
    return out


@dataclass
class _Built:
    containers: list[JSON] = field(default_factory=list)
    init_containers: list[JSON] = field(default_factory=list)
    volumes: list[JSON] = field(default_factory=list)
    secrets: list[JSON] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)


def _inject_one(sidecarset: KubeObject, pod: KubeObject, built: _Built, working: dict[str, str]) -> list[str]:
    """Add one SidecarSet's containers, volumes and secrets to ``built``; returns its sidecar list
    (containers and native-sidecar init containers)."""
    body = mapping(sidecarset.get("spec"))
    volumes = {mapping(v).get("name"): dict(v) for v in sequence(body.get("volumes"))}
    listed: list[str] = []

    def add(raw: Any, into: list[JSON], sidecar_like: bool) -> None:
        sidecar = mapping(raw)
        if sidecar_like:
            listed.append(str(sidecar.get("name") or ""))
        mounts = (mapping(m).get("name") for m in sequence(sidecar.get("volumeMounts")))
        built.volumes.extend(volumes[m] for m in mounts if m in volumes)
        prepared = _prepared(sidecar, pod)
        if sidecar_like and is_hot_upgrade(prepared):
            pair, annotations = hot_containers(prepared, working)
            into.extend(pair)
            built.annotations.update(annotations)
        else:
            into.append(prepared)

    for raw in sequence(body.get("initContainers")):
        add(raw, built.init_containers, is_native_sidecar(mapping(raw)))
    for raw in sequence(body.get("containers")):
        add(raw, built.containers, True)
    built.secrets.extend(dict(s) for s in sequence(body.get("imagePullSecrets")))
    return sorted(set(listed))


def _build(pod: KubeObject, sidecarsets: Sequence[KubeObject], now: datetime) -> _Built:
    built = _Built()
    hashes = specs_of(pod)
    hashes_without = specs_of(pod, HASH_WITHOUT_IMAGE_ANNOTATION)
    working = working_containers(pod)
    names = set(injected_names(pod))
    for sidecarset in sidecarsets:
        name = str(metadata(sidecarset).get("name") or "")
        names.add(name)
        sidecars = tuple(_inject_one(sidecarset, pod, built, working))
        annotations = annotations_of(sidecarset)
        hashes[name] = UpgradeSpec(
            hash=str(annotations.get(HASH_ANNOTATION) or ""),
            sidecarset=name,
            update_timestamp=now,
            sidecar_list=sidecars,
            controller_revision=str(mapping(sidecarset.get("status")).get("latestRevision") or ""),
        )
        hashes_without[name] = UpgradeSpec(
            hash=str(annotations.get(HASH_WITHOUT_IMAGE_ANNOTATION) or ""),
            sidecarset=name,
            update_timestamp=now,
            sidecar_list=sidecars,
        )
    built.annotations[HASH_ANNOTATION] = dump_specs(hashes)
    built.annotations[HASH_WITHOUT_IMAGE_ANNOTATION] = dump_specs(hashes_without)
    built.annotations[INJECTED_LIST_ANNOTATION] = injected_list_value(names)
    if working:
        built.annotations[WORKING_HOT_UPGRADE_ANNOTATION] = dump_json(dict(sorted(working.items())))
    return built


def _merge_containers(origin: Sequence[Any], injected: Sequence[JSON]) -> list[Any]:
    """``mergeSidecarContainers``: same name replaced in place, the others before the app's with
    ``BeforeAppContainer``, else after them (the webhook defaults the policy per list)."""
    out = list(origin)
    index = {mapping(c).get("name"): i for i, c in enumerate(out)}
    before: list[JSON] = []
    after: list[JSON] = []
    for sidecar in injected:
        container = {k: v for k, v in sidecar.items() if k not in SIDECAR_ONLY_FIELDS}
        if sidecar.get("name") in index:
            out[index[sidecar.get("name")]] = container
            continue
        (before if sidecar.get("podInjectPolicy") == "BeforeAppContainer" else after).append(container)
    return [*before, *out, *after]


def inject(pod: KubeObject, sidecarsets: Sequence[KubeObject], now: datetime) -> JSON | None:
    """The pod with ``sidecarsets`` injected, or ``None`` when nothing changes (see module doc).

    Raises:
        ValueError: a ``MergePatchJson`` annotation is not JSON (the pod is refused, as upstream).
    """
    if not sidecarsets:
        return None
    out = json_copy(dict(pod))
    meta = out.setdefault("metadata", {})
    annotations = dict(mapping(meta.get("annotations")))
    for sidecarset in sidecarsets:
        patch_pod_annotations(annotations, sequence(mapping(sidecarset.get("spec")).get("patchPodMetadata")))
    built = _build(pod, sidecarsets, now)
    if built.containers or built.init_containers:
        body = out.setdefault("spec", {})
        inits = sorted(built.init_containers, key=lambda c: str(c.get("name") or ""))
        if inits:
            body["initContainers"] = _merge_containers(sequence(body.get("initContainers")), inits)
        body["containers"] = _merge_containers(sequence(body.get("containers")), built.containers)
        volumes = merge_by_key(sequence(body.get("volumes")), built.volumes, "name")
        if volumes:
            body["volumes"] = volumes
        secrets = merge_by_key(sequence(body.get("imagePullSecrets")), built.secrets, "name")
        if secrets:
            body["imagePullSecrets"] = secrets
        annotations.update(built.annotations)
    if annotations == dict(mapping(metadata(pod).get("annotations"))) and not (
        built.containers or built.init_containers
    ):
        return None
    meta["annotations"] = annotations
    return out
