"""AnalysisRuns for a Rollout's gates, and reverting an aborted workload (I/O shell).

- ``ensure_run``: create the AnalysisRun named by the gate from its (Cluster)AnalysisTemplates
  with the resolved args, owned by the Rollout (so it is garbage-collected with it) and
  labelled ``rollouts.kruise.io/rollout``; unchanged when it exists. A gate that cannot start
  (a template that does not exist, an argument left unresolved, a run the API server rejects)
  raises :class:`AnalysisGateError`, whose message the Rollout shows (Argo Rollouts reports
  the same mistakes as ``InvalidSpec``; here the step keeps waiting, so applying the missing
  template later, as a GitOps sync may, lets the release go on).
- ``terminate_runs``: at the end of a release, terminate the Rollout's runs still going.
- ``phases``: run name -> phase for the Rollout's runs (from the informer cache).
- ``revert_workload``: put the stable revision's template back into the workload.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from kruise.analysis.api import AnalysisTemplateSpec, Argument
from kruise.analysis.resources import ANALYSIS_RUNS, ANALYSIS_TEMPLATES, CLUSTER_ANALYSIS_TEMPLATES
from kruise.analysis.templates import TERMINATE_PATCH, build_run, run_phase
from kruise.core.api import OwnerReference
from kruise.core.errors import AlreadyExistsError, InvalidError, NotFoundError, PermanentError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import CONTROLLER_REVISIONS
from kruise.rollouts.release.constants import ROLLOUT_LABEL
from kruise.rollouts.workloads.registry import Found, resources
from kruise.workloads.revisions import template_of_revision

log = logging.getLogger(__name__)
JSON = dict[str, Any]
WORKLOAD_RESOURCES = resources()
"""What an aborted release may revert (every registered kind's resource)."""
DONE = ("Successful", "Failed", "Error", "Inconclusive")


class AnalysisGateError(PermanentError):
    """An analysis gate that cannot start its AnalysisRun; the message names the gate
    (``step2``/``background``) and the cause, e.g.
    ``step2 analysis: AnalysisTemplate 'success-rate' not found``."""


async def ensure_run(kube: KubeClient, rollout: Mapping[str, Any], request: Mapping[str, Any]) -> bool:
    meta = rollout["metadata"]
    ns = meta["namespace"]
    if await kube.get_or_none(ANALYSIS_RUNS, request["name"], ns) is not None:
        return False
    gate = f"{request.get('which') or 'step'} analysis"
    specs = []
    for ref in request["templates"]:
        cluster = bool(ref.get("clusterScope"))
        res = CLUSTER_ANALYSIS_TEMPLATES if cluster else ANALYSIS_TEMPLATES
        try:
            tmpl = await kube.get(res, ref["templateName"], None if cluster else ns)
        except NotFoundError:
            kind = "ClusterAnalysisTemplate" if cluster else "AnalysisTemplate"
            raise AnalysisGateError(f"{gate}: {kind} '{ref['templateName']}' not found") from None
        specs.append(AnalysisTemplateSpec.from_dict(tmpl.get("spec") or {}))
    owner = OwnerReference.from_dict(
        {
            "apiVersion": rollout.get("apiVersion", "rollouts.kruise.io/v1beta1"),
            "kind": "Rollout",
            "name": meta["name"],
            "uid": meta["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    )
    args = [Argument.from_dict(a) for a in request["args"] if a.get("value") is not None]
    try:
        run = build_run(
            name=request["name"],
            namespace=ns,
            templates=specs,
            args=args,
            labels=request["labels"],
            owner=owner,
        )
    except ValueError as err:  # ArgumentError (``args.x was not resolved``), clashing metrics
        raise AnalysisGateError(f"{gate}: {err}") from None
    try:
        await kube.create(ANALYSIS_RUNS, run.to_dict(), ns)
    except AlreadyExistsError:
        return False
    except InvalidError as err:
        raise AnalysisGateError(f"{gate}: AnalysisRun rejected: {err.message}") from None
    log.info("Rollout %s/%s started AnalysisRun %s", ns, meta["name"], request["name"])
    return True


def phases(runs: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Run name -> phase (``Pending`` until the controller wrote one) of a Rollout's runs."""
    return {str(r["metadata"]["name"]): str(run_phase(r)) for r in runs}


async def terminate_runs(kube: KubeClient, rollout: Mapping[str, Any]) -> bool:
    meta = rollout["metadata"]
    runs = await kube.list(ANALYSIS_RUNS, meta["namespace"], label_selector=f"{ROLLOUT_LABEL}={meta['name']}")
    changed = False
    for run in runs["items"]:
        if str(run_phase(run)) in DONE or (run.get("spec") or {}).get("terminate"):
            continue
        await kube.patch(ANALYSIS_RUNS, run["metadata"]["name"], dict(TERMINATE_PATCH), meta["namespace"])
        changed = True
    return changed


async def revert_workload(kube: KubeClient, found: Found | None, stable_revision: str) -> bool:
    """Patch the workload's template back to the revision ``stable_revision`` (the ControllerRevision
    it owns named ``stable_revision`` or ``<workload>-<stable_revision>``); kinds without
    ControllerRevisions (a Deployment) are left as they are."""
    if found is None or not found.kind.revisions or not stable_revision:
        return False
    workload = found.workload
    meta = workload["metadata"]
    items = (await kube.list(CONTROLLER_REVISIONS, meta["namespace"]))["items"]
    owned = [
        r
        for r in items
        if any(o.get("uid") == meta.get("uid") for o in r["metadata"].get("ownerReferences") or [])
        and r["metadata"]["name"] in (stable_revision, f"{meta['name']}-{stable_revision}")
    ]
    if not owned:
        log.warning("no ControllerRevision %s for %s/%s", stable_revision, meta["namespace"], meta["name"])
        return False
    template = template_of_revision(owned[0])
    if (workload.get("spec") or {}).get("template") == template:
        return False
    # a JSON patch keeps the revision's nulls (e.g. metadata.creationTimestamp: null), so the
    # controller hashes the template back to the very same stable revision
    patch = [{"op": "replace", "path": "/spec/template", "value": template}]
    resource = found.kind.resource
    await kube.patch(resource, meta["name"], patch, meta["namespace"], patch_type="json")
    return True


async def gc_runs(kube: KubeClient, rollout: Mapping[str, Any], *, keep: int = 5) -> int:
    """Delete finished AnalysisRuns beyond ``keep`` successful and ``keep`` unsuccessful ones, oldest
    first (Argo Rollouts' ``successfulRunHistoryLimit``/``unsuccessfulRunHistoryLimit``, default 5)."""
    meta = rollout["metadata"]
    runs = (
        await kube.list(ANALYSIS_RUNS, meta["namespace"], label_selector=f"{ROLLOUT_LABEL}={meta['name']}")
    )["items"]
    deleted = 0
    for wanted in (("Successful",), ("Failed", "Error", "Inconclusive")):
        done = [r for r in runs if str(run_phase(r)) in wanted]
        done.sort(key=lambda r: str(r["metadata"].get("creationTimestamp") or ""))
        for run in done[: max(0, len(done) - keep)]:
            await kube.delete(ANALYSIS_RUNS, run["metadata"]["name"], meta["namespace"], missing_ok=True)
            deleted += 1
    return deleted
