"""NodeImage (``apps.kruise.io/v1alpha1``, cluster-scoped): the images one node should hold.

Field names, types and descriptions follow OpenKruise's ``apis/apps/v1alpha1/nodeimage_types.go``
(v1.8). One NodeImage per Node, with the Node's name: the manager's ImagePullJob controller writes
tags into ``spec.images[<repo>].tags[]``, the node's kruise-daemon pulls them and reports each in
``status.imageStatuses[<repo>].tags[]`` (:mod:`kruise.daemon.imagepuller`). A tag's ``version``
is echoed in its status so a stale report is told apart from a current one.

The ``*Dict`` ``TypedDict``\\ s are the raw (orjson) shapes controllers read; the pydantic
models are the schema.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, NotRequired, TypedDict

from pydantic import Field

from kruise.core.api import Int32, Int64, KubeModel, KubeObject, ObjectReference, SchemaRequired, Time
from kruise.core.crdgen import CRDSpec, CRDVersion, PrinterColumn
from kruise.core.kube.resources import Resource

__all__ = [
    "AGE_COLUMN",
    "NODEIMAGES",
    "NODEIMAGE_CRD",
    "ImageSpecDict",
    "ImageStatusDict",
    "ImageTagSpecDict",
    "ImageTagStatusDict",
    "NodeImage",
    "NodeImageDict",
    "ReferenceObject",
    "SandboxConfig",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
NODEIMAGES = Resource(GROUP, VERSION, "nodeimages", "NodeImage", namespaced=False)
AGE_COLUMN = PrinterColumn(
    name="AGE",
    type="date",
    json_path=".metadata.creationTimestamp",
    description="CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate operations. "
    "Clients may not set this value. It is represented in RFC3339 form and is in UTC.",
)


class ReferenceObject(KubeModel):
    """ReferenceObject comprises a resource name, with a mandatory namespace, rendered as
    "<namespace>/<name>"."""

    namespace: str | None = None
    name: str | None = None


class SandboxConfig(KubeModel):
    """SandboxConfig support attach metadata in PullImage CRI interface during ImagePulljobs"""

    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class ImageTagPullPolicy(KubeModel):
    """ImageTagPullPolicy defines the policy of the pulling task"""

    timeout_seconds: Int32 | None = Field(
        default=None, description="Specifies the timeout of the pulling task. Defaults to 600"
    )
    backoff_limit: Int32 | None = Field(
        default=None,
        description="Specifies the number of retries before marking the pulling task failed. Defaults to 3",
    )
    ttl_seconds_after_finished: Int32 | None = Field(
        default=None,
        description="TTLSecondsAfterFinished limits the lifetime of a pulling task that has finished "
        "execution (either Complete or Failed).",
    )
    active_deadline_seconds: Int64 | None = Field(
        default=None,
        description="ActiveDeadlineSeconds specifies the duration in seconds relative to the startTime "
        "that the task may be active before the system tries to terminate it; value must be positive integer",
    )


class ImageTagSpec(KubeModel):
    """ImageTagSpec defines the pulling spec of an image tag"""

    tag: str = Field(description="Specifies the image tag")
    created_at: Time | None = Field(default=None, description="Specifies the create time of this tag")
    pull_policy: ImageTagPullPolicy | None = Field(
        default=None,
        description="PullPolicy is an optional field to set parameters of the pulling task. If not "
        "specified, the system will use the default values.",
    )
    owner_references: list[ObjectReference] | None = Field(
        default=None,
        description="List of objects depended by this object. If this image is managed by a controller, "
        "then an entry in this list will point to this controller.",
    )
    version: Int64 | None = Field(
        default=None,
        description="An opaque value that represents the internal version of this tag that can be used "
        "by clients to determine when objects have changed.",
    )
    image_pull_policy: str | None = Field(
        default=None, description="Image pull policy. One of Always, IfNotPresent. Defaults to IfNotPresent."
    )


class ImageSpec(KubeModel):
    """ImageSpec defines the pulling spec of an image"""

    pull_secrets: list[ReferenceObject] | None = Field(
        default=None,
        description="PullSecrets is an optional list of references to secrets in the same namespace to "
        "use for pulling the image.",
    )
    tags: list[ImageTagSpec] = Field(description="Tags is a list of versions of this image")
    sandbox_config: SandboxConfig | None = Field(
        default=None,
        description="SandboxConfig support attach metadata in PullImage CRI interface during ImagePulljobs",
    )


class NodeImageSpec(KubeModel):
    """NodeImageSpec defines the desired state of NodeImage"""

    images: dict[str, ImageSpec] | None = Field(
        default=None,
        description="Specifies images to be pulled on this node It can not be more than 256 for each "
        "NodeImage",
    )


class ImageTagStatus(KubeModel):
    """ImageTagStatus defines the pulling status of an image tag"""

    tag: str = Field(description="Represents the image tag.")
    phase: str = Field(description="Represents the image pulling task phase.")
    progress: Int32 | None = Field(
        default=None, description="Represents the pulling progress of this tag, which is beetween 0-100."
    )
    start_time: Time | None = Field(
        default=None,
        description="Represents time when the pulling task was acknowledged by the image puller.",
    )
    completion_time: Time | None = Field(
        default=None, description="Represents time when the pulling task was completed."
    )
    version: Int64 | None = Field(
        default=None, description="Represents the internal version of this tag that the daemon handled."
    )
    image_id: str | None = Field(
        default=None, alias="imageID", description="Represents the ID of this image."
    )
    message: str | None = Field(default=None, description="Represents the summary informations of this node")


class ImageStatus(KubeModel):
    """ImageStatus defines the pulling status of an image"""

    tags: list[ImageTagStatus] = Field(description="Represents statuses of pulling tasks on this node")


class SyncStatus(KubeModel):
    """SyncStatus is summary of the status of all images pulling tasks on the node."""

    sync_at: Time | None = None
    status: str | None = Field(default=None, description="SyncStatusPhase defines the node status")
    message: str | None = None


class NodeImageStatus(KubeModel):
    """NodeImageStatus defines the observed state of NodeImage"""

    desired: Annotated[Int32, SchemaRequired()] = Field(
        default=0,
        description="The desired number of pulling tasks, this is typically equal to the number of "
        "images in spec.",
    )
    succeeded: Int32 | None = Field(
        default=None, description="The number of pulling tasks which reached phase Succeeded."
    )
    failed: Int32 | None = Field(
        default=None, description="The number of pulling tasks which reached phase Failed."
    )
    pulling: Int32 | None = Field(
        default=None, description="The number of pulling tasks which are not finished."
    )
    waiting: Int32 | None = Field(default=None, description="The number of pulling tasks which are waiting.")
    image_statuses: dict[str, ImageStatus] | None = Field(
        default=None, description="all statuses of active image pulling tasks"
    )
    first_sync_status: SyncStatus | None = Field(
        default=None, description="The first of all job has finished on this node."
    )


class NodeImage(KubeObject):
    """NodeImage is the Schema for the nodeimages API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = "NodeImage"

    spec: NodeImageSpec | None = None
    status: NodeImageStatus | None = None


NODEIMAGE_CRD = CRDSpec(
    group=GROUP,
    kind="NodeImage",
    plural="nodeimages",
    singular="nodeimage",
    scope="Cluster",
    versions=(
        CRDVersion(
            name=VERSION,
            model=NodeImage,
            served=True,
            storage=True,
            status_subresource=True,
            printer_columns=(
                PrinterColumn.integer("DESIRED", ".status.desired", "Number of all images on this node"),
                PrinterColumn.integer("PULLING", ".status.pulling", "Number of image pull task active"),
                PrinterColumn.integer("SUCCEED", ".status.succeeded", "Number of image pull task succeeded"),
                PrinterColumn.integer("FAILED", ".status.failed", "Number of image pull tasks failed"),
                AGE_COLUMN,
            ),
        ),
    ),
)


# --- raw shapes ----------------------------------------------------------------------------


class ReferenceObjectDict(TypedDict, total=False):
    namespace: str
    name: str


class PullPolicyDict(TypedDict, total=False):
    timeoutSeconds: int
    backoffLimit: int
    ttlSecondsAfterFinished: int
    activeDeadlineSeconds: int


class ObjectReferenceDict(TypedDict, total=False):
    apiVersion: str
    kind: str
    name: str
    namespace: str
    uid: str


class ImageTagSpecDict(TypedDict):
    tag: str
    createdAt: NotRequired[str]
    pullPolicy: NotRequired[PullPolicyDict]
    ownerReferences: NotRequired[list[ObjectReferenceDict]]
    version: NotRequired[int]
    imagePullPolicy: NotRequired[str]


class SandboxConfigDict(TypedDict, total=False):
    labels: dict[str, str]
    annotations: dict[str, str]


class ImageSpecDict(TypedDict):
    tags: list[ImageTagSpecDict]
    pullSecrets: NotRequired[list[ReferenceObjectDict]]
    sandboxConfig: NotRequired[SandboxConfigDict]


class ImageTagStatusDict(TypedDict):
    tag: str
    phase: str
    progress: NotRequired[int]
    startTime: NotRequired[str]
    completionTime: NotRequired[str]
    version: NotRequired[int]
    imageID: NotRequired[str]
    message: NotRequired[str]


class ImageStatusDict(TypedDict):
    tags: list[ImageTagStatusDict]


class NodeImageSpecDict(TypedDict, total=False):
    images: dict[str, ImageSpecDict]


class NodeImageStatusDict(TypedDict, total=False):
    desired: int
    succeeded: int
    failed: int
    pulling: int
    waiting: int
    imageStatuses: dict[str, ImageStatusDict]
    firstSyncStatus: dict[str, str]


class NodeImageDict(TypedDict, total=False):
    apiVersion: str
    kind: str
    metadata: dict[str, object]
    spec: NodeImageSpecDict
    status: NodeImageStatusDict
