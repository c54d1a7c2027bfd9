"""The I/O of pre-pulling the next batch (ours; the decision is :mod:`.prepull`).

Only Rollouts with the annotation, or still showing the ``PrePullNextBatch`` condition (jobs to
clean up), cost anything: the workload's pods and the Rollout's ImagePullJobs are listed from the
API server (the Rollout controller's cache holds neither).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from kruise.core.errors import AlreadyExistsError, KruiseError, NotFoundError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import IMAGEPULLJOBS, PODS
from kruise.rollouts.rollout.prepull import (
    CONDITION_TYPE,
    PREPULL_LABEL,
    condition,
    enabled,
    plan_prepull,
    pull_job,
)

JSON = dict[str, Any]
log = logging.getLogger(__name__)


def _selector(workload: Mapping[str, Any]) -> str:
    labels = ((workload.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


class PrePuller:
    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube

    async def sync(self, rollout: JSON, workload: JSON | None, new_status: JSON, now: str) -> None:
        """Create, update or delete the Rollout's pre-pull jobs; set the condition in ``new_status``."""
        had = any(
            c.get("type") == CONDITION_TYPE for c in (rollout.get("status") or {}).get("conditions") or []
        )
        if not enabled(rollout) and not had:
            return
        meta = rollout["metadata"]
        ns = meta["namespace"]
        try:
            plan = None
            if workload is not None and enabled(rollout):
                wuid = (workload.get("metadata") or {}).get("uid")
                selector = _selector(workload)
                listed = (
                    (await self.kube.list(PODS, ns, label_selector=selector))["items"] if selector else []
                )
                pods = [
                    p
                    for p in listed
                    if any(
                        r.get("uid") == wuid for r in (p.get("metadata") or {}).get("ownerReferences") or []
                    )
                ]
                plan = plan_prepull({**rollout, "status": new_status}, workload, pods)
            existing = {
                j["metadata"]["name"]: j
                for j in (
                    await self.kube.list(IMAGEPULLJOBS, ns, label_selector=f"{PREPULL_LABEL}={meta['name']}")
                )["items"]
            }
            wanted = {}
            if plan is not None:
                for container, image in plan.images.items():
                    body = pull_job(rollout, container, image, plan.nodes)
                    wanted[body["metadata"]["name"]] = body
            for job_name in existing.keys() - wanted.keys():
                await self.kube.delete(IMAGEPULLJOBS, job_name, ns, missing_ok=True)
            for job_name, body in wanted.items():
                old = existing.get(job_name)
                if old is None:
                    with contextlib.suppress(AlreadyExistsError):
                        await self.kube.create(IMAGEPULLJOBS, body, ns)
                elif (old.get("spec") or {}).get("selector") != body["spec"]["selector"] or (
                    old.get("spec") or {}
                ).get("image") != body["spec"]["image"]:
                    patch = {"spec": {k: body["spec"][k] for k in ("image", "selector", "parallelism")}}
                    with contextlib.suppress(NotFoundError):
                        await self.kube.patch(IMAGEPULLJOBS, job_name, patch, ns, patch_type="merge")
            new_status["conditions"] = condition(new_status, plan, now)
        except KruiseError as err:
            log.warning("%s/%s: pre-pull of the next batch: %s", ns, meta["name"], err)
