"""kruise's additive metric-analysis fields on the Rollout (not in Kruise Rollouts).

Shaped like Argo Rollouts' ``RolloutAnalysis`` so an Argo step's ``analysis`` block ports as is:
``templates[{templateName, clusterScope}]`` and ``args[{name, value, valueFrom{fieldRef}}]``.
A step's ``analysis`` gates that step (``StepMetricsAnalysis``); ``canary.analysis`` runs in the
background from ``startingStep`` (1-based) until the release ends.

``valueFrom.releaseValue`` (kruise's, additive) scopes a query to one batch of the release: the
pods a step upgrades carry ``rollouts.kruise.io/rollout-id`` and ``rollouts.kruise.io/rollout-batch-id``,
so ``{rollout_id="{{args.rollout-id}}", batch_id="{{args.batch-id}}"}`` (after relabelling) selects
exactly that step's pods.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from kruise.core.api import Bool, Int32, KubeModel


class AnalysisTemplateRef(KubeModel):
    """One template to run; ``clusterScope`` picks a ClusterAnalysisTemplate."""

    template_name: str = Field(description="Name of the AnalysisTemplate (or ClusterAnalysisTemplate).")
    cluster_scope: Bool | None = Field(default=None, description="Use a ClusterAnalysisTemplate.")


class FieldRefSource(KubeModel):
    field_path: str = Field(description="JSONPath-like field of the Rollout, e.g. metadata.name.")


class ReleaseValue(StrEnum):
    """What ``valueFrom.releaseValue`` reads from the release when the AnalysisRun is created."""

    ROLLOUT_ID = "RolloutID"
    """The release's rollout-id (the pods' ``rollouts.kruise.io/rollout-id``): the workload's label
    or annotation, else the canary revision (``status.canaryStatus.observedRolloutID``)."""
    BATCH_ID = "BatchID"
    """The current step, 1-based (the pods' ``rollouts.kruise.io/rollout-batch-id``)."""
    CANARY_REVISION = "CanaryRevision"
    """``status.canaryStatus.canaryRevision``."""
    STABLE_REVISION = "StableRevision"
    """``status.canaryStatus.stableRevision``."""


class AnalysisArgValueFrom(KubeModel):
    field_ref: FieldRefSource | None = Field(default=None, description="A field of the Rollout.")
    pod_template_hash_value: str | None = Field(
        default=None, description="Stable or Latest: the stable or canary revision's pod-template-hash."
    )
    release_value: ReleaseValue | None = Field(
        default=None,
        description="A value of the current release, read when the step's AnalysisRun is created: "
        "RolloutID (the pods' rollouts.kruise.io/rollout-id label), BatchID (the current step, the "
        "pods' rollouts.kruise.io/rollout-batch-id label), CanaryRevision or StableRevision "
        "(kruise extension).",
    )


class AnalysisRunArgument(KubeModel):
    name: str = Field(description="Argument name, used as {{args.<name>}} in queries.")
    value: str | None = Field(default=None, description="Literal value.")
    value_from: AnalysisArgValueFrom | None = Field(default=None, description="Value taken from the Rollout.")


class RolloutAnalysis(KubeModel):
    """Templates and arguments of one analysis gate."""

    templates: list[AnalysisTemplateRef] | None = Field(default=None, description="Templates to run.")
    args: list[AnalysisRunArgument] | None = Field(default=None, description="Arguments for the templates.")


class RolloutBackgroundAnalysis(RolloutAnalysis):
    """Background analysis: runs from ``startingStep`` until the release ends."""

    starting_step: Int32 | None = Field(default=None, description="1-based step to start at (default 1).")
