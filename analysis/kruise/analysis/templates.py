"""Building an AnalysisRun from templates, and reading its outcome: what a Rollout gate needs.

Mirrors Argo Rollouts' ``NewAnalysisRunFromTemplates`` (``utils/analysis/helpers.go``):
templates are flattened (metrics concatenated, a metric name used twice is an error; template
args merged, the same arg with two different values is an error), the caller's args override the
templates' defaults (``MergeArgs``), every arg must end up with a value or a ``valueFrom``, and
dry-run / retention rules are concatenated. Template references inside templates
(``spec.templates``) are the caller's to fetch: :func:`referenced_templates` lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.analysis.api import (
    AnalysisPhase,
    AnalysisRun,
    AnalysisRunSpec,
    AnalysisTemplateSpec,
    Argument,
    DryRun,
    MeasurementRetention,
    Metric,
)
from kruise.analysis.args import ArgumentError
from kruise.core.api import ObjectMeta, OwnerReference

__all__ = ["TERMINATE_PATCH", "build_run", "flatten_templates", "referenced_templates", "run_phase"]

TERMINATE_PATCH: Mapping[str, Any] = {"spec": {"terminate": True}}
"""Merge patch that stops a run early (Argo ``TerminateRun``): no new measurements; the run then
completes with the worst phase so far, Successful when nothing failed."""


def referenced_templates(spec: AnalysisTemplateSpec) -> list[tuple[str, bool]]:
    """``(templateName, clusterScope)`` of the templates ``spec.templates`` composes."""
    return [(ref.template_name or "", bool(ref.cluster_scope)) for ref in spec.templates or []]


def _merge_arg(combined: list[Argument], new: Argument) -> None:
    for index, previous in enumerate(combined):
        if previous.name != new.name:
            continue
        if previous.value is not None and new.value is not None and previous.value != new.value:
            raise ArgumentError(
                f"Argument `{new.name}` specified multiple times with different values: "
                f"'{previous.value}', '{new.value}'"
            )
        if previous.value is None:
            combined[index] = new
        return
    combined.append(new)


def flatten_templates(templates: Sequence[AnalysisTemplateSpec]) -> AnalysisTemplateSpec:
    """One template spec combining ``templates`` (namespaced ones first, then cluster ones, as
    Argo orders them). Raises ``ValueError`` (``two metrics have the same name 'x'``) or
    :class:`ArgumentError` for conflicting argument values."""
    metrics: list[Metric] = []
    args: list[Argument] = []
    dry_run: list[DryRun] = []
    retention: list[MeasurementRetention] = []
    for spec in templates:
        metrics.extend(m.model_copy(deep=True) for m in spec.metrics or [])
        for arg in spec.args or []:
            _merge_arg(args, arg.model_copy(deep=True))
        dry_run.extend(spec.dry_run or [])
        retention.extend(spec.measurement_retention or [])
    seen: set[str] = set()
    for metric in metrics:
        if metric.name in seen:
            raise ValueError(f"two metrics have the same name '{metric.name}'")
        seen.add(metric.name)
    return AnalysisTemplateSpec(
        metrics=metrics, args=args or None, dry_run=dry_run or None, measurement_retention=retention or None
    )


def build_run(
    *,
    name: str,
    namespace: str,
    templates: Sequence[AnalysisTemplateSpec],
    args: Sequence[Argument] = (),
    dry_run: Sequence[DryRun] = (),
    measurement_retention: Sequence[MeasurementRetention] = (),
    labels: Mapping[str, str] | None = None,
    owner: OwnerReference | None = None,
) -> AnalysisRun:
    """The AnalysisRun to create for ``templates`` with the caller's ``args``.

    Caller args override template defaults by name (a value, else a ``valueFrom``); args the
    templates do not declare are ignored, as in Argo. Raises :class:`ArgumentError`
    (``args.x was not resolved``) when an argument is left with neither value nor valueFrom, and
    ``ValueError`` for clashing metric names.
    """
    flat = flatten_templates(templates)
    merged = [arg.model_copy(deep=True) for arg in flat.args or []]
    for incoming in args:
        for arg in merged:
            if arg.name != incoming.name:
                continue
            if incoming.value is not None:
                arg.value, arg.value_from = incoming.value, None
            elif incoming.value_from is not None:
                arg.value_from = incoming.value_from.model_copy(deep=True)
    for arg in merged:
        if arg.value is None and arg.value_from is None:
            raise ArgumentError(f"args.{arg.name} was not resolved")
    spec = AnalysisRunSpec(
        metrics=list(flat.metrics or []),
        args=merged or None,
        dry_run=[*dry_run, *(flat.dry_run or [])] or None,
        measurement_retention=[*measurement_retention, *(flat.measurement_retention or [])] or None,
    )
    meta = ObjectMeta(
        name=name,
        namespace=namespace,
        labels=dict(labels) if labels else None,
        owner_references=[owner] if owner is not None else None,
    )
    return AnalysisRun(metadata=meta, spec=spec)


def run_phase(run: Mapping[str, Any]) -> AnalysisPhase:
    """The phase of a run object (``status.phase``); Pending before the controller saw it.

    A gate proceeds on Successful, aborts on Failed or Error, pauses on Inconclusive (Argo's
    Rollout behaviour) and waits otherwise.
    """
    phase = (run.get("status") or {}).get("phase") or ""
    try:
        return AnalysisPhase(phase)
    except ValueError:
        return AnalysisPhase.PENDING
