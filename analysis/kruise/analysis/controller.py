"""The AnalysisRun controller shell: observe, measure what is due, decide, write status once.

Per reconcile of ``namespace/name``:

1. read the run (from a :class:`RunSource`); a completed run is left alone;
2. :func:`~kruise.analysis.decide.prepare` it (arguments resolved, spec validated) -- a run that
   cannot be measured becomes Error;
3. take the measurements :func:`~kruise.analysis.schedule.due_tasks` says are due, concurrently,
   through the :class:`~kruise.analysis.providers.ProviderRegistry`, with argument values read
   from Secrets (``valueFrom.secretKeyRef``) and the run itself (``valueFrom.fieldRef``);
   secret values are redacted from measurement messages;
4. :func:`~kruise.analysis.decide.decide` the status, write it with a merge patch on the status
   subresource under a ``resourceVersion`` precondition (a conflict re-reads and decides again),
   record the events, and requeue at the next due measurement.

State lives in status: a restarted controller reads ``measurements[].finishedAt`` and the counters
and takes the next measurement when it is due, never twice.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from pydantic import ValidationError

from kruise.analysis.api import AnalysisRun, Measurement, Metric
from kruise.analysis.args import ArgumentError, field_path_value, redact
from kruise.analysis.decide import Decision, SpecError, Taken, decide, errored, prepare
from kruise.analysis.providers import Clock, ProviderRegistry, default_registry, error_measurement, utc_now
from kruise.analysis.resources import ANALYSIS_RUNS
from kruise.analysis.schedule import Task, due_tasks
from kruise.core.errors import ConflictError, NotFoundError
from kruise.core.events import EventRecorder
from kruise.core.kube import KubeClient
from kruise.core.kube.resources import SECRETS
from kruise.core.patches import merge_patch
from kruise.core.runtime import CacheReader, ControllerSpec, primary
from kruise.core.workqueue import Result

__all__ = ["AnalysisRunController", "ApiRunSource", "CachedRunSource", "RunSource", "argument_values"]

log = logging.getLogger(__name__)
JSON = dict[str, Any]
CONFLICT_RETRY_SECONDS = 0.1


class RunSource(Protocol):
    """Where the controller reads a run from: ``await get("namespace/name")`` -> object or None."""

    async def get(self, key: str) -> JSON | None: ...


class CachedRunSource:
    """Reads runs from the shared informer cache (what the manager uses)."""

    def __init__(self, cache: CacheReader) -> None:
        self.cache = cache

    async def get(self, key: str) -> JSON | None:
        """The cached run ``namespace/name`` (shared: do not mutate), or None."""
        return self.cache.get(ANALYSIS_RUNS, key)


class ApiRunSource:
    """Reads runs straight from the API server (always fresh; one GET per reconcile)."""

    def __init__(self, kube: KubeClient) -> None:
        self.kube = kube

    async def get(self, key: str) -> JSON | None:
        """The run ``namespace/name``, or None when it does not exist."""
        namespace, name = key.split("/", 1)
        return await self.kube.get_or_none(ANALYSIS_RUNS, name, namespace)


async def argument_values(
    kube: KubeClient, run: AnalysisRun, obj: Mapping[str, Any]
) -> tuple[dict[str, str], list[str]]:
    """The run's argument values (name -> value) and the secret values among them.

    ``value`` is used as is; ``valueFrom.secretKeyRef`` reads the Secret in the run's namespace
    (Argo: a run only reads Secrets of its own namespace); ``valueFrom.fieldRef`` reads the run
    object ``obj`` (a Rollout creating a run resolves fieldRefs against itself first). Raises
    :class:`~kruise.analysis.args.ArgumentError`: ``secrets "s" not found``, ``key 'k' does not
    exist in secret 's'``, ``argument "x" was not supplied``.
    """
    values: dict[str, str] = {}
    secrets: list[str] = []
    namespace = run.metadata.namespace
    for arg in run.spec.args or []:
        source = arg.value_from
        if arg.value is not None:
            values[arg.name] = arg.value
        elif source is not None and source.secret_key_ref is not None:
            ref = source.secret_key_ref
            secret = await kube.get_or_none(SECRETS, ref.name, namespace)
            if secret is None:
                raise ArgumentError(f'secrets "{ref.name}" not found')
            data = secret.get("data") or {}
            if ref.key not in data:
                raise ArgumentError(f"key '{ref.key}' does not exist in secret '{ref.name}'")
            values[arg.name] = base64.b64decode(data[ref.key]).decode("utf-8", "replace")
            secrets.append(values[arg.name])
        elif source is not None and source.field_ref is not None:
            values[arg.name] = field_path_value(obj, source.field_ref.field_path)
        else:
            raise ArgumentError(f'argument "{arg.name}" was not supplied')
    return values, secrets


class AnalysisRunController:
    """Reconciles AnalysisRuns with a bounded worker pool over a :class:`WorkQueue`."""

    name = "analysisrun-controller"

    def __init__(
        self,
        kube: KubeClient,
        recorder: EventRecorder,
        source: RunSource,
        providers: ProviderRegistry | None = None,
        *,
        workers: int = 2,
        clock: Clock = utc_now,
    ) -> None:
        self.kube = kube
        self.recorder = recorder
        self.source = source
        self.providers = providers or default_registry(clock=clock)
        self.workers = workers
        self.clock = clock

    def spec(self) -> ControllerSpec:
        """Woken by its AnalysisRuns; timed measurements requeue themselves."""
        return ControllerSpec(name=self.name, watches=(primary(ANALYSIS_RUNS),), workers=self.workers)

    async def reconcile(self, key: str) -> Result:
        """One round for the run ``key``; the result says when to come back."""
        obj = await self.source.get(key)
        if obj is None:
            return Result()
        if ((obj.get("status") or {}).get("phase")) in ("Successful", "Failed", "Error", "Inconclusive"):
            return Result()
        now = self.clock()
        try:
            run = AnalysisRun.from_dict(obj)
        except ValidationError as err:
            return await self._write_invalid(obj, f"Analysis spec invalid: {_first_error(err)}")
        try:
            prepared = prepare(run)
        except SpecError as err:
            return await self._write(obj, run, errored(run, str(err), now))
        tasks = due_tasks(run, prepared.metrics, now)
        taken: list[Taken] = []
        if tasks:
            try:
                values, secrets = await argument_values(self.kube, run, obj)
            except ArgumentError as err:
                return await self._write(
                    obj, run, errored(run, f"Unable to resolve metric arguments: {err}", now)
                )
            metrics = {m.name: m for m in run.spec.metrics}
            log.debug("%s: taking %d measurement(s)", key, len(tasks))
            measured = await asyncio.gather(*(self._measure(metrics[t.name], t, values, now) for t in tasks))
            for task, measurement in zip(tasks, measured, strict=True):
                measurement.message = redact(measurement.message, secrets)
                taken.append(Taken(task.name, measurement, task.resume))
        return await self._write(obj, run, decide(run, prepared, taken, now))

    async def _measure(
        self, metric: Metric, task: Task, values: Mapping[str, str], now: datetime
    ) -> Measurement:
        provider = self.providers.for_metric(metric)
        try:
            return await provider.measure(metric, values, now)
        except Exception as err:  # a provider bug must not crash the run nor pass it
            log.exception("metric %s: provider failed", task.name)
            return error_measurement(now, f"provider failed: {err}", self.clock())

    async def _write(self, obj: JSON, run: AnalysisRun, decision: Decision) -> Result:
        meta = obj["metadata"]
        old = obj.get("status") or {}
        for event in decision.events:  # before the status write that records the transition
            if not await self.recorder.transition(obj, event.type, event.reason, event.message, leaving=old):
                return Result(requeue_after=CONFLICT_RETRY_SECONDS)
        patch = merge_patch(old, decision.status.to_dict())
        if patch:
            body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": patch}
            try:
                await self.kube.patch(
                    ANALYSIS_RUNS,
                    meta["name"],
                    body,
                    meta["namespace"],
                    patch_type="merge",
                    subresource="status",
                )
            except ConflictError:
                return Result(requeue_after=CONFLICT_RETRY_SECONDS)
            except NotFoundError:
                return Result()
        return Result(requeue_after=decision.requeue_after)

    async def _write_invalid(self, obj: JSON, message: str) -> Result:
        meta = obj["metadata"]
        reason, text = "AnalysisRunError", "Analysis Completed. Result: Error"
        if not await self.recorder.transition(obj, "Warning", reason, text, leaving=obj.get("status") or {}):
            return Result(requeue_after=CONFLICT_RETRY_SECONDS)
        body = {
            "metadata": {"resourceVersion": meta["resourceVersion"]},
            "status": {"phase": "Error", "message": message},
        }
        try:
            await self.kube.patch(ANALYSIS_RUNS, meta["name"], body, meta["namespace"], subresource="status")
        except ConflictError:
            return Result(requeue_after=CONFLICT_RETRY_SECONDS)
        except NotFoundError:
            return Result()
        return Result()


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    return f"{where}: {first.get('msg')}"
