"""UnitedDeployment admission webhooks: the AdmissionReview adapters around the pure rules.

Paths and names are OpenKruise's: ``/mutate-apps-kruise-io-v1alpha1-uniteddeployment``
(``muniteddeployment.kb.io``) answers with a JSON patch of the defaults
(:func:`~kruise.workloads.admission.uniteddeployment_defaults.default_uniteddeployment`);
``/validate-apps-kruise-io-v1alpha1-uniteddeployment`` (``vuniteddeployment.kb.io``) denies
CREATE and UPDATE with HTTP 422 and the aggregated field errors
(:mod:`kruise.workloads.admission.uniteddeployment`), and with gate
``ResourcesDeletionProtection`` a protected DELETE with HTTP 403. An UPDATE reaches it only when
``spec`` changed. What Kubernetes' own validators judge upstream (the StatefulSet/Deployment pod
template, each subset's nodeSelectorTerm and tolerations) is asked of the API server with dry-run
Pods, and only for what changed.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from typing import Any

import jsonpatch
from pydantic import ValidationError

from kruise.core.errors import ApiError, KruiseError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS
from kruise.core.webhook import AdmissionRequest, AdmissionResponse
from kruise.workloads.admission.dryrun import spec_template_verdict
from kruise.workloads.admission.fielderrors import FieldError, aggregate
from kruise.workloads.admission.uniteddeployment import (
    pod_template_base,
    validate_uniteddeployment_create,
    validate_uniteddeployment_delete,
    validate_uniteddeployment_update,
)
from kruise.workloads.admission.uniteddeployment_defaults import default_uniteddeployment
from kruise.workloads.admission.uniteddeployment_topology import (
    subset_scheduling_errors,
    subset_scheduling_pod,
)
from kruise.workloads.admission.workload_webhooks import workload_webhook_specs
from kruise.workloads.api.uniteddeployment import UnitedDeployment
from kruise.workloads.deletionprotection.webhooks import protection_denied

__all__ = ["MUTATE_PATH", "VALIDATE_PATH", "UnitedDeploymentWebhooks", "uniteddeployment_webhook_specs"]

log = logging.getLogger(__name__)
MUTATE_PATH = "/mutate-apps-kruise-io-v1alpha1-uniteddeployment"
VALIDATE_PATH = "/validate-apps-kruise-io-v1alpha1-uniteddeployment"


uniteddeployment_webhook_specs = functools.partial(
    workload_webhook_specs, "uniteddeployment", MUTATE_PATH, VALIDATE_PATH
)
"""``muniteddeployment.kb.io`` (CREATE, UPDATE) and ``vuniteddeployment.kb.io`` (CREATE,
UPDATE, DELETE with protection); an UPDATE only when ``spec`` changed."""


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _subsets(obj: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    topology = _spec(obj).get("topology")
    subsets = topology.get("subsets") if isinstance(topology, Mapping) else None
    return [s for s in subsets if isinstance(s, Mapping)] if isinstance(subsets, list) else []


class UnitedDeploymentWebhooks:
    """The handlers, bound to a client for the dry runs and to two feature gates."""

    def __init__(
        self, kube: KubeClient, *, deletion_protection: bool = False, template_no_defaults: bool = False
    ) -> None:
        self.kube = kube
        self.deletion_protection = deletion_protection
        self.template_no_defaults = template_no_defaults

    async def mutate(self, req: AdmissionRequest) -> AdmissionResponse:
        """Answer with the defaults as a JSON patch (none when nothing is missing)."""
        if req.object is None:
            return AdmissionResponse.allow()
        try:
            UnitedDeployment.from_dict(req.object)
        except ValidationError:
            return AdmissionResponse.allow()  # a wrong JSON type: the schema refuses it, naming the field
        defaulted = default_uniteddeployment(
            req.object, old=req.old_object, template_no_defaults=self.template_no_defaults
        )
        patch: list[dict[str, Any]] = jsonpatch.make_patch(req.object, defaulted).patch
        return AdmissionResponse.allow(patch)

    async def validate(self, req: AdmissionRequest) -> AdmissionResponse:
        """Answer one AdmissionReview request for a UnitedDeployment."""
        if req.operation == "DELETE":
            message = validate_uniteddeployment_delete(
                req.old_object or {}, gate_enabled=self.deletion_protection
            )
            if message:
                return protection_denied(req.kind, req.old_object or {}, req.user, message)
            return AdmissionResponse.allow()
        if req.object is None:
            return AdmissionResponse.allow()
        namespace = req.namespace or ""
        template, topology = await asyncio.gather(
            self._template_verdict(req.object, req.old_object, namespace),
            self._topology_verdict(req.object, req.old_object, namespace),
        )
        if req.operation == "CREATE" or req.old_object is None:
            errors = validate_uniteddeployment_create(
                req.object, template_errors=template, topology_errors=topology
            )
        else:
            errors = validate_uniteddeployment_update(
                req.object, req.old_object, template_errors=template, topology_errors=topology
            )
        return AdmissionResponse.deny(aggregate(errors)) if errors else AdmissionResponse.allow()

    async def _template_verdict(
        self, obj: Mapping[str, Any], old: Mapping[str, Any] | None, namespace: str
    ) -> list[FieldError]:
        found = pod_template_base(obj)
        if found is None:
            return []
        base, spec = found
        previous = pod_template_base(old) if old is not None else None
        old_spec = previous[1] if previous is not None and previous[0] == base else None
        return await spec_template_verdict(self.kube, spec, old_spec, namespace, base=base)

    async def _topology_verdict(
        self, obj: Mapping[str, Any], old: Mapping[str, Any] | None, namespace: str
    ) -> list[FieldError]:
        before = {str(s.get("name")): s for s in _subsets(old)}
        checks = []
        for index, subset in enumerate(_subsets(obj)):
            previous = before.get(str(subset.get("name")))
            same = previous is not None and all(
                previous.get(k) == subset.get(k) for k in ("nodeSelectorTerm", "tolerations")
            )
            pod = None if same else subset_scheduling_pod(subset, namespace)
            if pod is not None:
                checks.append(self._scheduling_verdict(pod, index, namespace))
        verdicts = await asyncio.gather(*checks)
        return [err for verdict in verdicts for err in verdict]

    async def _scheduling_verdict(self, pod: dict[str, Any], index: int, namespace: str) -> list[FieldError]:
        try:
            await self.kube.create(PODS, pod, namespace, dry_run=True)
        except ApiError as err:
            return subset_scheduling_errors(err.status, err.body, index)
        except KruiseError as err:
            log.info("no verdict on subset %d's scheduling terms in %s: %s", index, namespace, err)
        return []
