"""The I/O shell of image pre-download for in-place update (see :mod:`kruise.workloads.predownload`),
shared by the CloneSet and Advanced StatefulSet controllers.

Like upstream, its failures are logged and never fail the workload's reconcile. The ImagePullJobs
a workload controls come from the controller's cache (an owned watch, present only while the
gate is on), so converged workloads cost no API call.
"""

from __future__ import annotations

import logging

from kruise.core.errors import AlreadyExistsError, KruiseError
from kruise.core.events import NORMAL, EventRecorder
from kruise.core.expectations import ResourceVersionExpectations
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS, IMAGEPULLJOBS, Resource
from kruise.core.runtime import OWNER_UID, CacheReader, Watch, owned
from kruise.workloads.objects import KubeObject, metadata, name, namespace, uid
from kruise.workloads.predownload import controlled_jobs, plan_predownload

__all__ = ["PreDownloader"]

log = logging.getLogger(__name__)


class PreDownloader:
    """Creates and deletes a workload's pre-download ImagePullJobs; a no-op when ``enabled`` is
    false (gate ``PreDownloadImageForInPlaceUpdate`` off, or ``KruiseDaemon`` off)."""

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder,
        cache: CacheReader,
        rv_expectations: ResourceVersionExpectations,
        owner: Resource,
        *,
        enabled: bool,
        env_from_metadata: bool = True,
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.cache = cache
        self.rv_expectations = rv_expectations
        self.owner = owner
        self.enabled = enabled
        self.env_from_metadata = env_from_metadata

    def watches(self) -> tuple[Watch, ...]:
        """The owned ImagePullJob watch, only while enabled (nothing is read otherwise)."""
        return (owned(IMAGEPULLJOBS, self.owner),) if self.enabled else ()

    async def sync(
        self, workload: KubeObject, current_revision: KubeObject, update_revision: KubeObject
    ) -> None:
        if not self.enabled:
            return
        plan = plan_predownload(
            workload, current_revision, update_revision, env_from_metadata=self.env_from_metadata
        )
        try:
            if plan.delete_jobs:
                jobs = self.cache.by_index(IMAGEPULLJOBS, OWNER_UID, uid(workload))
                for job in controlled_jobs(jobs, uid(workload)):
                    log.info("deleting ImagePullJob %s/%s of %s", namespace(job), name(job), name(workload))
                    await self.kube.delete(IMAGEPULLJOBS, name(job), namespace(job), missing_ok=True)
            for body in plan.jobs:
                job_name = str(body["metadata"]["name"])
                image = str(body["spec"]["image"])
                try:
                    await self.kube.create(IMAGEPULLJOBS, body, namespace(workload))
                except AlreadyExistsError:
                    continue
                except KruiseError as err:
                    log.warning("%s: failed to create ImagePullJob %s: %s", name(workload), job_name, err)
                    self.recorder.event(
                        workload,
                        NORMAL,
                        "FailedCreateImagePullJob",
                        f"failed to create ImagePullJob {job_name}: {err}",
                    )
                    continue
                self.recorder.event(
                    workload,
                    NORMAL,
                    "CreatedImagePullJob",
                    f"created ImagePullJob {job_name} for image: {image}",
                )
            if plan.mark:
                if plan.reason:
                    log.debug("%s: image pre-download ignored: %s", name(workload), plan.reason)
                result = await self.kube.patch(
                    CONTROLLER_REVISIONS,
                    name(update_revision),
                    {"metadata": {"labels": {plan.mark: "true"}}},
                    namespace(update_revision),
                    patch_type="merge",
                )
                version = metadata(result).get("resourceVersion")
                if version and version != metadata(update_revision).get("resourceVersion"):
                    self.rv_expectations.expect(uid(update_revision), str(version))
        except KruiseError as err:
            log.warning("%s: image pre-download: %s", name(workload), err)
