"""Types shared by the Kruise workloads (upstream ``apis/apps/pub`` and friends).

CloneSet, Advanced StatefulSet and Advanced DaemonSet embed the same lifecycle hooks,
update-priority rules, scatter strategy and in-place update strategy. Semantics are enforced
by the workload webhooks and controllers, not by these models: like the upstream CRD, the
models accept any well-typed value (for example a weight of 500 or two priority lists), so
the webhook can reject it with upstream's exact message.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from kruise.core.api import Bool, Int32, IntOrString, KubeModel, LabelSelector

__all__ = [
    "LIFECYCLE_STATE_KEY",
    "LIFECYCLE_TIMESTAMP_KEY",
    "InPlaceUpdateStrategy",
    "Lifecycle",
    "LifecycleHook",
    "LifecycleStateType",
    "UpdatePriorityOrderTerm",
    "UpdatePriorityStrategy",
    "UpdatePriorityWeightTerm",
    "UpdateScatterTerm",
]

LIFECYCLE_STATE_KEY = "lifecycle.apps.kruise.io/state"
"""Pod label holding the lifecycle state (``apps/pub.LifecycleStateKey``)."""
LIFECYCLE_TIMESTAMP_KEY = "lifecycle.apps.kruise.io/timestamp"
"""Pod annotation holding the RFC 3339 time of the last state change."""


class LifecycleStateType(StrEnum):
    """Values of the ``lifecycle.apps.kruise.io/state`` pod label (``apps/pub.LifecycleStateType``)."""

    PREPARING_NORMAL = "PreparingNormal"
    NORMAL = "Normal"
    PREPARING_UPDATE = "PreparingUpdate"
    UPDATING = "Updating"
    UPDATED = "Updated"
    PREPARING_DELETE = "PreparingDelete"


class LifecycleHook(KubeModel):
    """LifecycleHook is a set of labels and finalizers that hold a pod in a lifecycle state.

    Mirrors ``apps/pub.LifecycleHook``: a pod is "hooked" while it carries any handler label
    (with the same value) or finalizer, and "all hooked" when it carries all of them.
    """

    labels_handler: dict[str, str] | None = None
    finalizers_handler: list[str] | None = None
    mark_pod_not_ready: Bool | None = Field(
        default=None,
        description="MarkPodNotReady = true means: - Pod will be set to 'NotReady' at "
        "preparingDelete/preparingUpdate state. - Pod will be restored to 'Ready' at Updated state if "
        "it was set to 'NotReady' at preparingUpdate state. Default to false.",
    )


class Lifecycle(KubeModel):
    """Lifecycle contains the hooks for Pod lifecycle.

    Mirrors ``apps/pub.Lifecycle`` (preDelete, inPlaceUpdate, preNormal).
    """

    pre_delete: LifecycleHook | None = Field(
        default=None, description="PreDelete is the hook before Pod to be deleted."
    )
    in_place_update: LifecycleHook | None = Field(
        default=None,
        description="InPlaceUpdate is the hook before Pod to update and after Pod has been updated.",
    )
    pre_normal: LifecycleHook | None = Field(
        default=None,
        description="PreNormal is the hook after Pod to be created and ready to be Normal.",
    )


class UpdatePriorityOrderTerm(KubeModel):
    """UpdatePriorityOrderTerm defines order priority.

    Mirrors ``apps/pub.UpdatePriorityOrderTerm``.
    """

    ordered_key: str = Field(
        description="Calculate priority by value of this key. Values of this key, will be sorted by "
        "GetInt(val). GetInt method will find the last int in value, such as getting 5 in value '5', "
        "getting 10 in value 'sts-10'."
    )


class UpdatePriorityWeightTerm(KubeModel):
    """UpdatePriorityWeightTerm defines weight priority.

    Mirrors ``apps/pub.UpdatePriorityWeightTerm``; the 1-100 range is a webhook check.
    """

    weight: Int32 = Field(
        description="Weight associated with matching the corresponding matchExpressions, in the range 1-100."
    )
    match_selector: LabelSelector = Field(description="MatchSelector is used to select by pod's labels.")


class UpdatePriorityStrategy(KubeModel):
    """UpdatePriorityStrategy is the strategy to define priority for pods update.

    Mirrors ``apps/pub.UpdatePriorityStrategy``; only one of the two lists may be set (checked by
    the webhook, ``FieldsValidation``).
    """

    order_priority: list[UpdatePriorityOrderTerm] | None = Field(
        default=None,
        description="Order priority terms, pods will be sorted by the value of orderedKey. For example: "
        "``` orderPriority: - orderedKey: key1 - orderedKey: key2 ``` First, all pods which have key1 in "
        "labels will be sorted by the value of key1. Then, the left pods which have no key1 but have key2 "
        "in labels will be sorted by the value of key2 and put behind those pods have key1.",
    )
    weight_priority: list[UpdatePriorityWeightTerm] | None = Field(
        default=None,
        description="Weight priority terms, pods will be sorted by the sum of all terms weight.",
    )


class UpdateScatterTerm(KubeModel):
    """UpdateScatterTerm spreads the pods labelled key=value across update batches.

    Mirrors ``apps/v1alpha1.UpdateScatterTerm``.
    """

    key: str
    value: str


class InPlaceUpdateStrategy(KubeModel):
    """InPlaceUpdateStrategy defines the strategies for in-place update.

    Mirrors ``apps/pub.InPlaceUpdateStrategy``. v1.8 has only ``gracePeriodSeconds``; the
    ``imagePreDownload*`` fields come from OpenKruise master's CRD (Appendix A of the reference)
    and replace the ``apps.kruise.io/image-predownload-*`` annotations there; they are accepted
    here so such manifests apply unchanged.
    """

    grace_period_seconds: Int32 | None = Field(
        default=None,
        description="GracePeriodSeconds is the timespan between set Pod status to not-ready and update "
        "images in Pod spec when in-place update a Pod.",
    )
    image_pre_download_parallelism: IntOrString | None = Field(
        default=None,
        description="ImagePreDownloadParallelism is the requested parallelism, it can be set to any "
        "non-negative value.",
    )
    image_pre_download_timeout_seconds: Int32 | None = Field(
        default=None,
        description="ImagePreDownloadTimeoutSeconds specifies the timeout of the pulling task.",
    )
    image_pre_download_min_updated_ready_pods: Int32 | None = Field(
        default=None,
        description="ImagePreDownloadMinUpdatedReadyPods is the minimum number of updated ready Pods "
        "required before starting image pre-download for the next batch.",
    )
