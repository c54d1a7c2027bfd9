"""Copies of an ImagePullJob's pull secrets in ``kruise-daemon-config`` (the I/O shell).

OpenKruise v1.8 (``syncSecrets``) copies each Secret named in ``spec.pullSecrets`` (from the
job's namespace) into ``kruise-daemon-config``, where the daemon may read Secrets, and lets the
NodeImage reference the copy: ``generateName: <source>-``, the source's labels plus
``imagepulljobs.kruise.io/source-uid: <source uid>``, its annotations plus
``imagepulljobs.kruise.io/source-key: <ns>/<name>`` and ``imagepulljobs.kruise.io/references``
(a comma-joined set of ``<ns>/<job>`` keys of the jobs using the copy). A copy follows its
source's data; a job stops referencing it when the secret leaves ``pullSecrets`` or the job
completes or is deleted, and the last reference gone deletes the copy. Divergence: a job without
``pullSecrets`` skips this (upstream also requires the namespace to exist then).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kruise.core.errors import NotFoundError
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SECRETS

__all__ = ["DAEMON_CONFIG_NAMESPACE", "REFERENCES", "SOURCE_KEY", "SOURCE_UID", "sync_secrets"]

log = logging.getLogger("kruise.imagepulljob")
DAEMON_CONFIG_NAMESPACE = "kruise-daemon-config"
SOURCE_KEY = "imagepulljobs.kruise.io/source-key"
SOURCE_UID = "imagepulljobs.kruise.io/source-uid"
REFERENCES = "imagepulljobs.kruise.io/references"


def _refs(secret: Mapping[str, Any]) -> set[str]:
    text = (secret["metadata"].get("annotations") or {}).get(REFERENCES, "")
    return {r for r in text.split(",") if r}


async def sync_secrets(
    kube: KubeClient, job: Mapping[str, Any], *, release: bool = False
) -> list[tuple[str, str]]:
    """Bring the copies in line with ``job`` and return their ``(namespace, name)`` references;
    ``release`` (job completed or deleted) drops every reference the job holds and returns []."""
    meta = job["metadata"]
    namespace = meta["namespace"]
    sources = list((job.get("spec") or {}).get("pullSecrets") or [])
    if namespace == DAEMON_CONFIG_NAMESPACE:
        return [(namespace, s) for s in sources]
    if not sources and not release:
        return []
    job_key = f"{namespace}/{meta['name']}"
    try:
        listed = (await kube.list(SECRETS, DAEMON_CONFIG_NAMESPACE))["items"]
    except NotFoundError:
        listed = []
    mine: dict[str, dict[str, Any]] = {}
    for target in listed:
        if target["metadata"].get("deletionTimestamp") or job_key not in _refs(target):
            continue
        source_key = (target["metadata"].get("annotations") or {}).get(SOURCE_KEY, "")
        keep = not release and source_key in {f"{namespace}/{s}" for s in sources}
        if keep:
            mine[(target["metadata"].get("labels") or {}).get(SOURCE_UID, "")] = target
            continue
        refs = _refs(target) - {job_key}
        if refs:
            target["metadata"]["annotations"][REFERENCES] = ",".join(sorted(refs))
            await kube.replace(SECRETS, target)
        else:
            await kube.delete(SECRETS, target["metadata"]["name"], DAEMON_CONFIG_NAMESPACE, missing_ok=True)
    if release:
        return []
    out: list[tuple[str, str]] = []
    for name in sources:
        try:
            source = await kube.get(SECRETS, name, namespace)
        except NotFoundError:
            continue
        target = mine.get(source["metadata"]["uid"])
        if target is None:
            body = {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": source.get("type", "Opaque"),
                "data": source.get("data") or {},
                "metadata": {
                    "generateName": f"{name}-",
                    "namespace": DAEMON_CONFIG_NAMESPACE,
                    "labels": {
                        **(source["metadata"].get("labels") or {}),
                        SOURCE_UID: source["metadata"]["uid"],
                    },
                    "annotations": {
                        **(source["metadata"].get("annotations") or {}),
                        SOURCE_KEY: f"{namespace}/{name}",
                        REFERENCES: job_key,
                    },
                },
            }
            target = await kube.create(SECRETS, body, DAEMON_CONFIG_NAMESPACE)
            log.info("secret %s/%s copied to %s for %s", namespace, name, target["metadata"]["name"], job_key)
        elif job_key not in _refs(target) or (target.get("data") or {}) != (source.get("data") or {}):
            target["data"] = source.get("data") or {}
            target["metadata"]["annotations"][REFERENCES] = ",".join(sorted(_refs(target) | {job_key}))
            target = await kube.replace(SECRETS, target)
        out.append((DAEMON_CONFIG_NAMESPACE, target["metadata"]["name"]))
    return out
