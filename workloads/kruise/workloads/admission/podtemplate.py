"""Pod template validation by the API server itself: the dry-run Pod and its verdict (pure).

Upstream's workload webhooks run Kubernetes' own ``ValidatePodTemplateSpec`` (vendored Go code)
on the template, with the ``volumeClaimTemplates`` mocked in as PVC volumes. Python cannot call
that code, and a partial copy lets through what Kubernetes refuses (an image with spaces, a cpu
quantity ``"abc"``, requests above limits, ``value`` with ``valueFrom``, a probe without handler),
leaving a workload that can never create a pod. So the webhook asks the API server: it
server-side dry-runs the creation of a Pod made from the template (:func:`dry_run_pod`) in the
workload's namespace and turns the refusal into field errors at the template's paths
(:func:`template_errors`): ``spec.containers[0].image`` becomes
``spec.template.spec.containers[0].image``, ``metadata.labels`` becomes ``spec.template.labels``
(where ``ValidatePodTemplateSpec`` reports labels and annotations); the messages are Kubernetes'
own, for the API server's version.

Only the pod's validity is taken from the answer: a refusal by admission policy (quota, LimitRange,
PodSecurity, a missing ServiceAccount or PriorityClass: HTTP 403), another webhook, or an API
server that cannot answer gives no verdict (``None``) and the template is admitted, as upstream
admits it; the controller then reports what stops its pods (``FailedCreate`` events).

Not sent to the dry run, and checked by the workload webhook itself with upstream's messages:
``ephemeralContainers`` (a Pod may not be created with them, a template may not hold them) and
what is specific to the workload (restart policy, ``activeDeadlineSeconds``, selector).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.workloads.admission.fielderrors import (
    ErrorType,
    FieldError,
    forbidden,
    go_label_selector,
    go_string_map,
    invalid,
)
from kruise.workloads.admission.metavalidation import (
    LabelSelectorError,
    selector_matches,
    selector_requirements,
)

__all__ = ["DRY_RUN_GENERATE_NAME", "RenderedError", "dry_run_pod", "template_errors", "validate_template"]

DRY_RUN_GENERATE_NAME = "kruise-template-check-"
"""``generateName`` of the dry-run Pod (nothing is stored; the name only has to be valid)."""

_DECODE_PREFIX = re.compile(r'^Pod in version "v1" cannot be handled as a Pod: ')
_GO_FIELD = re.compile(r"Go struct field \w+\.((?:metadata|spec)(?:\.\w+)*) of type")


class RenderedError(FieldError):
    """A field error whose text another validator (the API server) already rendered."""

    def __init__(self, type_: ErrorType, field: str, text: str) -> None:
        super().__init__(type_, field, "", text)

    def body(self) -> str:
        return self.detail


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def dry_run_pod(
    template: Mapping[str, Any], claim_templates: Sequence[Any], namespace: str
) -> dict[str, Any]:
    """The Pod whose dry-run creation validates ``template``.

    Labels and annotations come from the template (other template metadata is not the pod's);
    every claim template named ``n`` is appended as volume ``n`` backed by claim ``n``, as
    upstream mocks them; ``ephemeralContainers`` is left out.
    """
    meta = _mapping(template.get("metadata"))
    spec = copy.deepcopy(dict(_mapping(template.get("spec"))))
    spec.pop("ephemeralContainers", None)
    volumes = spec.get("volumes")
    volumes = list(volumes) if isinstance(volumes, list) else []
    for claim in claim_templates:
        name = _mapping(_mapping(claim).get("metadata")).get("name")
        volumes.append({"name": name, "persistentVolumeClaim": {"claimName": name}})
    if volumes:
        spec["volumes"] = volumes
    pod_meta: dict[str, Any] = {"generateName": DRY_RUN_GENERATE_NAME, "namespace": namespace}
    for key in ("labels", "annotations"):
        if meta.get(key) is not None:
            pod_meta[key] = meta[key]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}


def template_path(pod_field: str, base: str) -> str:
    """A Pod field path as the template's: ``spec.x`` -> ``<base>.spec.x``, ``metadata.labels``
    -> ``<base>.labels`` (and annotations), other ``metadata.x`` -> ``<base>.metadata.x``. An
    empty ``base`` keeps the Pod's own paths (SidecarSet reports its fake pod's as they are)."""
    if not base:
        return pod_field
    for key in ("labels", "annotations"):
        prefix = f"metadata.{key}"
        if pod_field == prefix or pod_field.startswith((f"{prefix}.", f"{prefix}[")):
            return f"{base}.{key}{pod_field[len(prefix) :]}"
    return f"{base}.{pod_field}" if pod_field else base


def _error_type(reason: Any) -> ErrorType:
    try:
        return ErrorType(str(reason))
    except ValueError:
        return ErrorType.INVALID


def template_errors(status: int, body: Mapping[str, Any], base: str) -> list[FieldError] | None:
    """The field errors in the API server's answer to the dry run, at ``base`` (``spec.template``).

    ``status``/``body`` are the HTTP code and Status object of a refused dry run. Returns
    ``None`` when the answer is not a verdict on the pod's content:

    - 422 ``Invalid`` with ``details.causes``: one error per cause with a field;
    - 400 naming a decoding failure of the Pod (a JSON type the schema let through): one error at
      the Go field the decoder names, else at ``base``;
    - anything else (403 policy, a webhook's denial, 5xx): ``None``.
    """
    details = _mapping(body.get("details"))
    if status == 422 and body.get("reason") == "Invalid" and details.get("kind") == "Pod":
        causes = [c for c in details.get("causes") or [] if isinstance(c, Mapping) and c.get("field")]
        if not causes:
            return None
        return [
            RenderedError(
                _error_type(c.get("reason")), template_path(str(c["field"]), base), str(c["message"])
            )
            for c in causes
        ]
    message = str(body.get("message") or "")
    if status == 400 and _DECODE_PREFIX.match(message):
        reason = _DECODE_PREFIX.sub("", message)
        found = _GO_FIELD.search(reason)
        path = template_path(found.group(1), base) if found else base
        return [RenderedError(ErrorType.TYPE_INVALID, path, reason)]
    return None


def validate_template(
    spec: Mapping[str, Any], selector: Any, path: str, template_errors: Sequence[FieldError]
) -> list[FieldError]:
    """Selector/template agreement, then the pod-template verdict: what the workloads'
    ``validate<Kind>Spec`` check of ``spec.template`` (CloneSet, Advanced DaemonSet).

    A selector that does not convert is reported at ``<path>.selector`` with no detail; one that
    does not match the template labels at ``<path>.template.metadata.labels`` (an empty selector
    is skipped); then ``template_errors`` (the API server's verdict, :func:`template_errors`) and
    ``ephemeralContainers`` (``ValidatePodTemplateSpec``: not allowed in a template).
    """
    template = _mapping(spec.get("template"))
    labels = _mapping(template.get("metadata")).get("labels")
    try:
        requirements = selector_requirements(selector)
    except LabelSelectorError:
        shown = None if selector is None else go_label_selector(_mapping(selector))
        return [invalid(f"{path}.selector", shown, "")]
    errs: list[FieldError] = []
    # An empty selector is skipped; a nil one (labels.Nothing(), not Empty()) matches nothing.
    not_empty = requirements is None or len(requirements) > 0
    if not_empty and not selector_matches(requirements, labels):
        shown_labels = go_string_map(labels if isinstance(labels, Mapping) else None)
        errs.append(
            invalid(
                f"{path}.template.metadata.labels",
                shown_labels,
                "`selector` does not match template `labels`",
            )
        )
    errs.extend(template_errors)
    if _mapping(template.get("spec")).get("ephemeralContainers"):
        errs.append(
            forbidden(
                f"{path}.template.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs
