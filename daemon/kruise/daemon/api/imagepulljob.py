"""ImagePullJob and ImageListPullJob (``apps.kruise.io/v1alpha1``): pull images on nodes ahead of time.

Field names, types and descriptions follow OpenKruise's ``imagepulljob_types.go`` and
``imagelistpulljob_types.go`` (v1.8). Both kinds share :class:`ImagePullJobTemplate` (upstream
inlines the same Go struct): an ImagePullJob pulls ``spec.image`` on the nodes its ``selector``
(node names, or labels) or ``podSelector`` (the nodes of matching pods) picks; an
ImageListPullJob makes one ImagePullJob per entry of ``spec.images``.

Upstream defaults (``SetDefaultsImagePullJob``, applied by the mutating webhook):
``completionPolicy.type: Always``, ``pullPolicy {timeoutSeconds: 600, backoffLimit: 3}``,
``imagePullPolicy: IfNotPresent``.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from kruise.core.api import (
    CompletionPolicy,
    Int32,
    IntOrString,
    KubeModel,
    KubeObject,
    LabelSelectorRequirement,
    SchemaRequired,
    Time,
)
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn
from kruise.core.kube.resources import IMAGELISTPULLJOBS, IMAGEPULLJOBS
from kruise.daemon.api.nodeimage import AGE_COLUMN, GROUP, VERSION, SandboxConfig

__all__ = [
    "IMAGELISTPULLJOBS",
    "IMAGELISTPULLJOB_CRD",
    "IMAGEPULLJOBS",
    "IMAGEPULLJOB_CRD",
    "ImageListPullJob",
    "ImagePullJob",
    "ImagePullJobTemplate",
]


class ImagePullJobNodeSelector(KubeModel):
    """ImagePullJobNodeSelector is a selector over nodes"""

    names: list[str] | None = Field(
        default=None, description="Names specify a set of nodes to execute the job."
    )
    match_labels: dict[str, str] | None = Field(
        default=None, description="matchLabels is a map of {key,value} pairs."
    )
    match_expressions: list[LabelSelectorRequirement] | None = Field(
        default=None, description="matchExpressions is a list of label selector requirements."
    )


class ImagePullJobPodSelector(KubeModel):
    """ImagePullJobPodSelector is a selector over pods"""

    match_labels: dict[str, str] | None = Field(
        default=None, description="matchLabels is a map of {key,value} pairs."
    )
    match_expressions: list[LabelSelectorRequirement] | None = Field(
        default=None, description="matchExpressions is a list of label selector requirements."
    )


class PullPolicy(KubeModel):
    """PullPolicy defines the policy of the pulling task"""

    timeout_seconds: Int32 | None = Field(
        default=None, description="Specifies the timeout of the pulling task. Defaults to 600"
    )
    backoff_limit: Int32 | None = Field(
        default=None,
        description="Specifies the number of retries before marking the pulling task failed. Defaults to 3",
    )


class ImagePullJobTemplate(KubeModel):
    """ImagePullJobTemplate defines the pull job template"""

    pull_secrets: list[str] | None = Field(
        default=None,
        description="ImagePullSecrets is an optional list of references to secrets in the same namespace "
        "to use for pulling the image.",
    )
    selector: ImagePullJobNodeSelector | None = Field(
        default=None,
        description="Selector is a query over nodes that should match the job. nil to match all nodes.",
    )
    pod_selector: ImagePullJobPodSelector | None = Field(
        default=None,
        description="PodSelector is a query over pods that should pull image on nodes of these pods. "
        "Mutually exclusive with Selector.",
    )
    parallelism: IntOrString | None = Field(
        default=None,
        description="Parallelism is the requested parallelism, it can be set to any non-negative value. "
        "If it is unspecified, it defaults to 1.",
    )
    pull_policy: PullPolicy | None = Field(
        default=None, description="PullPolicy is an optional field to set parameters of the pulling task."
    )
    completion_policy: CompletionPolicy = Field(
        description="CompletionPolicy indicates the completion policy of the job. Default is Always "
        "CompletionPolicyType."
    )
    sandbox_config: SandboxConfig | None = Field(
        default=None,
        description="SandboxConfig support attach metadata in PullImage CRI interface during ImagePulljobs",
    )
    image_pull_policy: str | None = Field(
        default=None,
        description="Image pull policy. One of Always, IfNotPresent. Defaults to IfNotPresent.",
    )


class ImagePullJobSpec(ImagePullJobTemplate):
    """ImagePullJobSpec defines the desired state of ImagePullJob"""

    image: str = Field(description="Image is the image to be pulled by the job")


class ImagePullJobStatus(KubeModel):
    """ImagePullJobStatus defines the observed state of ImagePullJob"""

    start_time: Time | None = Field(
        default=None, description="Represents time when the job was acknowledged by the job controller."
    )
    completion_time: Time | None = Field(
        default=None, description="Represents time when the job was completed."
    )
    desired: Annotated[Int32, SchemaRequired()] = Field(
        default=0,
        description="The desired number of pulling tasks, this is typically equal to the number of nodes "
        "satisfied.",
    )
    active: Int32 | None = Field(default=None, description="The number of actively running pulling tasks.")
    succeeded: Int32 | None = Field(
        default=None, description="The number of pulling tasks which reached phase Succeeded."
    )
    failed: Int32 | None = Field(
        default=None, description="The number of pulling tasks which reached phase Failed."
    )
    message: str | None = Field(default=None, description="The text prompt for job running status.")
    failed_nodes: list[str] | None = Field(
        default=None, description="The nodes that failed to pull the image."
    )


class ImagePullJob(KubeObject):
    """ImagePullJob is the Schema for the imagepulljobs API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "ImagePullJob"

    spec: ImagePullJobSpec | None = None
    status: ImagePullJobStatus | None = None


class ImageListPullJobSpec(ImagePullJobTemplate):
    """ImageListPullJobSpec defines the desired state of ImageListPullJob"""

    images: list[str] = Field(description="Images is the image list to be pulled by the job")


class FailedImageStatus(KubeModel):
    """FailedImageStatus the state of ImagePullJob which has the failed nodes(status.Failed>0)"""

    image_pull_job: str | None = Field(
        default=None, description="The name of ImagePullJob which has the failed nodes(status.Failed>0)"
    )
    name: str | None = Field(default=None, description="Name of the image")
    message: str | None = Field(default=None, description="The text prompt for job running status.")


class ImageListPullJobStatus(KubeModel):
    """ImageListPullJobStatus defines the observed state of ImageListPullJob"""

    start_time: Time | None = Field(
        default=None, description="Represents time when the job was acknowledged by the job controller."
    )
    completion_time: Time | None = Field(
        default=None, description="Represents time when the all the image pull job was completed."
    )
    desired: Annotated[Int32, SchemaRequired()] = Field(
        default=0,
        description="The desired number of ImagePullJobs, this is typically equal to the number of "
        "len(spec.Images).",
    )
    active: Int32 | None = Field(
        default=None,
        description="The number of running ImagePullJobs which are acknowledged by the imagepulljob "
        "controller.",
    )
    completed: Int32 | None = Field(
        default=None, description="The number of ImagePullJobs which are finished"
    )
    succeeded: Int32 | None = Field(
        default=None,
        description="The number of image pull job which are finished and status.Succeeded==status.Desired.",
    )
    failed_image_statuses: list[FailedImageStatus] | None = Field(
        default=None, description="The status of ImagePullJob which has the failed nodes(status.Failed>0) ."
    )


class ImageListPullJob(KubeObject):
    """ImageListPullJob is the Schema for the imagelistpulljobs API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "ImageListPullJob"

    spec: ImageListPullJobSpec | None = None
    status: ImageListPullJobStatus | None = None


IMAGEPULLJOB_CRD = CRDSpec(
    group=GROUP,
    kind="ImagePullJob",
    plural="imagepulljobs",
    singular="imagepulljob",
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=ImagePullJob,
            served=True,
            storage=True,
            status_subresource=True,
            printer_columns=(
                PrinterColumn.integer("TOTAL", ".status.desired", "Number of all nodes matched by this job"),
                PrinterColumn.integer("ACTIVE", ".status.active", "Number of image pull task active"),
                PrinterColumn.integer("SUCCEED", ".status.succeeded", "Number of image pull task succeeded"),
                PrinterColumn.integer("FAILED", ".status.failed", "Number of image pull tasks failed"),
                AGE_COLUMN,
                PrinterColumn(
                    name="MESSAGE",
                    type="string",
                    json_path=".status.message",
                    description="Summary of status when job is failed",
                ),
            ),
        ),
    ),
)

IMAGELISTPULLJOB_CRD = CRDSpec(
    group=GROUP,
    kind="ImageListPullJob",
    plural="imagelistpulljobs",
    singular="imagelistpulljob",
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=ImageListPullJob,
            served=True,
            storage=True,
            status_subresource=True,
            printer_columns=(
                PrinterColumn.integer("TOTAL", ".status.desired", "Number of image pull job"),
                PrinterColumn.integer("SUCCEEDED", ".status.succeeded", "Number of image pull job succeeded"),
                PrinterColumn.integer(
                    "COMPLETED", ".status.completed", "Number of ImagePullJobs which are finished"
                ),
                AGE_COLUMN,
            ),
        ),
    ),
)
