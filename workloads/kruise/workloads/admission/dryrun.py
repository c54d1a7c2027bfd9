"""The API server's verdict on a workload's pod template: a server-side dry-run Pod (I/O).

The pure halves are :func:`~.podtemplate.dry_run_pod` (the Pod to send) and
:func:`~.podtemplate.template_errors` (the refusal as field errors at ``spec.template``); this
module sends it, for every workload webhook that judges a pod template (CloneSet, Advanced
StatefulSet).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from kruise.core.errors import ApiError, KruiseError
from kruise.core.kube.client import KubeClient
from kruise.core.kube.resources import PODS
from kruise.workloads.admission.fielderrors import FieldError
from kruise.workloads.admission.podtemplate import dry_run_pod, template_errors

__all__ = ["TEMPLATE_FIELDS", "spec_template_verdict", "template_verdict"]

log = logging.getLogger(__name__)
TEMPLATE_FIELDS = ("template", "volumeClaimTemplates")


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, Mapping) else {}


async def template_verdict(
    kube: KubeClient, obj: Mapping[str, Any], old: Mapping[str, Any] | None, namespace: str
) -> list[FieldError]:
    """The field errors of the pod template of ``obj``; ``[]`` when the API server accepts the Pod
    or gives no verdict (policy refusals, outages: :func:`~.podtemplate.template_errors`).

    Not asked again when an UPDATE leaves the template and claim templates as they were (the
    stored template was judged when it was written).
    """
    meta = obj.get("metadata")
    name = str(meta.get("name") or "") if isinstance(meta, Mapping) else ""
    old_spec = _spec(old) if old is not None else None
    return await spec_template_verdict(kube, _spec(obj), old_spec, namespace, name=name)


async def spec_template_verdict(
    kube: KubeClient,
    spec: Mapping[str, Any],
    old_spec: Mapping[str, Any] | None,
    namespace: str,
    *,
    name: str = "",
    base: str = "spec.template",
) -> list[FieldError]:
    """:func:`template_verdict` for a workload spec found anywhere (a UnitedDeployment's subset
    template): judges ``spec.template`` (with ``volumeClaimTemplates``) and reports at ``base``."""
    if old_spec is not None and all(spec.get(k) == old_spec.get(k) for k in TEMPLATE_FIELDS):
        return []
    template = spec.get("template")
    claims = spec.get("volumeClaimTemplates")
    if not isinstance(template, Mapping):
        return []  # the CRD schema requires an object; nothing a Pod could be made of
    pod = dry_run_pod(template, claims if isinstance(claims, list) else [], namespace)
    try:
        await kube.create(PODS, pod, namespace, dry_run=True)
    except ApiError as err:
        verdict = template_errors(err.status, err.body, base)
        if verdict is not None:
            return verdict
        log.info("no verdict on the pod template of %s/%s: %s", namespace, name, err)
    except KruiseError as err:
        log.info("no verdict on the pod template of %s/%s: %s", namespace, name, err)
    return []
