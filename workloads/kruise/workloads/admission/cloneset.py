"""CloneSet admission: defaulting (mutating webhook) and validation (validating webhook).

Pure functions over CloneSet dicts (the ``object``/``oldObject`` of an AdmissionReview), mirroring
OpenKruise v1.8 ``pkg/webhook/cloneset/{mutating,validating}`` and ``SetDefaultsCloneSet``. The
shell runs :func:`default_cloneset` on CREATE/UPDATE, answers with a patch from the input to its
result, and runs the validators on the *defaulted* object (as the API server calls validating
webhooks after mutating ones). A non-empty error list is answered with HTTP 422 and
``aggregate(errors)``; a deletion refusal with HTTP 403 and the returned text.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from kruise.core.api.pod import PersistentVolumeClaimTemplate, PodTemplateSpec
from kruise.workloads.admission.cloneset_strategy import (
    PodLookup,
    validate_scale_strategy,
    validate_update_strategy,
)
from kruise.workloads.admission.deletion_protection import validate_workload_deletion
from kruise.workloads.admission.fielderrors import (
    FieldError,
    forbidden,
    go_label_selector,
    invalid,
    not_supported,
    required,
)
from kruise.workloads.admission.jsondiff import create_patch, normalize_for_diff, semantic_view
from kruise.workloads.admission.metavalidation import (
    IS_NEGATIVE_ERROR_MSG,
    validate_label_selector,
    validate_object_meta,
)
from kruise.workloads.admission.pod_defaults import (
    add_marshal_artifacts,
    claim_marshal_artifacts,
    default_claim_template,
    default_pod_template,
)
from kruise.workloads.admission.podtemplate import validate_template
from kruise.workloads.api.cloneset import CloneSet

__all__ = [
    "MUTABLE_SPEC_FIELDS",
    "SPEC_UPDATE_FORBIDDEN_MESSAGE",
    "default_cloneset",
    "is_well_typed",
    "validate_cloneset_create",
    "validate_cloneset_delete",
    "validate_cloneset_update",
]

SPEC_UPDATE_FORBIDDEN_MESSAGE = (
    "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', "
    "'updateStrategy', 'minReadySeconds', 'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden"
)
MUTABLE_SPEC_FIELDS = frozenset(
    {
        "replicas",
        "template",
        "scaleStrategy",
        "updateStrategy",
        "minReadySeconds",
        "lifecycle",
        "revisionHistoryLimit",
        "volumeClaimTemplates",
        # Not in the v1.8 Go struct (dropped when upstream decodes), so never compared there.
        "progressDeadlineSeconds",
    }
)
"""Spec fields an UPDATE may change; everything else (in practice ``selector``) is immutable."""

_IN_PLACE_TYPES = ("InPlaceIfPossible", "InPlaceOnly")
_IMAGE_PATCH = re.compile(r"/containers/([0-9]+)/image")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _mapping(_mapping(obj).get("spec"))


def is_well_typed(obj: Mapping[str, Any]) -> bool:
    """Whether every field of the CloneSet has its schema's JSON type (pod and claim templates too).

    The mutating webhook runs before the API server checks the schema; upstream's decodes the
    object into Go structs first and fails on a wrong type. Ours leaves such an object unchanged
    (no defaults that could replace the bad value), so the schema refuses it naming the field.
    """
    try:
        cloneset = CloneSet.from_dict(obj)
        PodTemplateSpec.model_validate(cloneset.spec.template)
        for claim in cloneset.spec.volume_claim_templates or []:
            PersistentVolumeClaimTemplate.model_validate(claim)
    except ValidationError:
        return False
    return True


def default_cloneset(
    obj: Mapping[str, Any], *, old: Mapping[str, Any] | None, template_no_defaults: bool = False
) -> dict[str, Any]:
    """The CloneSet as the mutating webhook leaves it (``SetDefaultsCloneSet``); input untouched.

    - ``replicas: 1``, ``revisionHistoryLimit: 10`` when unset;
    - pod-template defaults (:func:`~.pod_defaults.default_pod_template`) and claim-template
      defaults (``status.phase: Pending``, quantities canonicalised) on CREATE (``old`` is
      ``None``) or when ``spec.template`` differs from ``old``'s, unless ``template_no_defaults``
      (feature gate ``TemplateNoDefaults``);
    - ``updateStrategy.type: ReCreate`` when empty; ``inPlaceUpdateStrategy: {}`` for
      InPlaceIfPossible/InPlaceOnly; ``partition: 0``, ``maxUnavailable: "20%"``,
      ``maxSurge: 0`` when unset. ``scaleStrategy`` has no defaults.

    When anything changed, the result also carries what upstream's re-marshalling of the Go
    struct adds (``scaleStrategy: {}``, template ``metadata.creationTimestamp: null``,
    containers' ``resources: {}``, claim templates' ``creationTimestamp``/``resources``/``status``,
    canonical quantities), so the stored object looks like upstream's. Not reproduced: Go's
    dropping of fields unknown to its structs. Unchanged input is returned as an equal copy
    (upstream then answers "allowed" without a patch).
    """
    out = copy.deepcopy(dict(obj))
    spec = out.get("spec")
    spec = dict(spec) if isinstance(spec, Mapping) else {}
    out["spec"] = spec
    inject = not template_no_defaults and (
        old is None or _spec(obj).get("template") != _spec(old).get("template")
    )
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if spec.get("revisionHistoryLimit") is None:
        spec["revisionHistoryLimit"] = 10
    if inject:
        spec["template"] = default_pod_template(_mapping(spec.get("template")))
        claims = spec.get("volumeClaimTemplates")
        if isinstance(claims, list):
            spec["volumeClaimTemplates"] = [default_claim_template(c) for c in claims]
    strategy = spec.get("updateStrategy")
    strategy = dict(strategy) if isinstance(strategy, Mapping) else {}
    spec["updateStrategy"] = strategy
    if strategy.get("type") in (None, ""):  # a value of the wrong type is left to the schema
        strategy["type"] = "ReCreate"
    elif strategy["type"] in _IN_PLACE_TYPES and strategy.get("inPlaceUpdateStrategy") is None:
        strategy["inPlaceUpdateStrategy"] = {}
    for key, value in (("partition", 0), ("maxUnavailable", "20%"), ("maxSurge", 0)):
        if strategy.get(key) is None:
            strategy[key] = value
    if out == obj:
        return out
    if spec.get("scaleStrategy") is None:
        spec["scaleStrategy"] = {}
    spec["template"] = add_marshal_artifacts(_mapping(spec.get("template")))
    if isinstance(spec.get("volumeClaimTemplates"), list):
        spec["volumeClaimTemplates"] = [claim_marshal_artifacts(c) for c in spec["volumeClaimTemplates"]]
    return out


def _no_pods(name: str) -> Mapping[str, Any] | None:
    return None


def _validate_spec(
    spec: Mapping[str, Any],
    old_spec: Mapping[str, Any] | None,
    metadata: Mapping[str, Any],
    pod_lookup: PodLookup,
    template_errors: Sequence[FieldError],
) -> list[FieldError]:
    errs: list[FieldError] = []
    replicas_raw = spec.get("replicas")
    replicas = replicas_raw if isinstance(replicas_raw, int) and not isinstance(replicas_raw, bool) else 1
    if replicas < 0:
        errs.append(invalid("spec.replicas", replicas, IS_NEGATIVE_ERROR_MSG))
    selector = spec.get("selector")
    if not isinstance(selector, Mapping):
        errs.append(required("spec.selector"))
        selector = None
    else:
        errs.extend(validate_label_selector(selector, "spec.selector"))
        if not _mapping(selector.get("matchLabels")) and not selector.get("matchExpressions"):
            errs.append(
                invalid(
                    "spec.selector", go_label_selector(selector), "empty selector is invalid for cloneset"
                )
            )
    errs.extend(validate_template(spec, selector, "spec", template_errors))
    pod_spec = _mapping(default_pod_template(_mapping(spec.get("template"))).get("spec"))
    restart = str(pod_spec.get("restartPolicy") or "")
    if restart and restart != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", restart, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                "spec.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in cloneset is not Supported",
            )
        )
    old_scale = _mapping(old_spec.get("scaleStrategy")) if old_spec is not None else None
    errs.extend(
        validate_scale_strategy(
            _mapping(spec.get("scaleStrategy")), old_scale, metadata, pod_lookup, "spec.scaleStrategy"
        )
    )
    errs.extend(
        validate_update_strategy(_mapping(spec.get("updateStrategy")), replicas, "spec.updateStrategy")
    )
    return errs


def _validate_cloneset(
    obj: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    pod_lookup: PodLookup,
    template_errors: Sequence[FieldError],
) -> list[FieldError]:
    metadata = _mapping(obj.get("metadata"))
    errs = validate_object_meta(metadata, requires_namespace=True)
    old_spec = _spec(old) if old is not None else None
    errs.extend(_validate_spec(_spec(obj), old_spec, metadata, pod_lookup, template_errors))
    return errs


def validate_cloneset_create(
    obj: Mapping[str, Any],
    *,
    pod_lookup: PodLookup = _no_pods,
    template_errors: Sequence[FieldError] = (),
) -> list[FieldError]:
    """Validating webhook on CREATE (``validateCloneSet(obj, nil)``); ``[]`` means admitted.

    Checks, in upstream's order: metadata (name a DNS-1123 subdomain, namespace required...),
    ``replicas >= 0``, selector (required, valid, non-empty, matching the template labels), the
    template (``template_errors``: the API server's verdict on a Pod made from it, see
    :mod:`.podtemplate`; no ephemeral containers), ``restartPolicy: Always``, no
    ``activeDeadlineSeconds``, then :mod:`.cloneset_strategy`. ``pod_lookup`` resolves
    ``podsToDelete`` names (default: no pod exists). Like the API server, the caller must have
    filled ``metadata.namespace`` (and ``uid``) before.
    """
    return _validate_cloneset(obj, None, pod_lookup, template_errors)


def in_place_only_violation(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """``ValidateCloneSetUpdate`` of the CloneSet core: with InPlaceOnly, the template spec may only
    change by ``replace /containers/<n>/image``; returns upstream's message for the first other op.
    """
    if _mapping(_spec(new).get("updateStrategy")).get("type") != "InPlaceOnly":
        return None
    old_spec = normalize_for_diff(_mapping(_mapping(_spec(old).get("template")).get("spec")))
    new_spec = normalize_for_diff(_mapping(_mapping(_spec(new).get("template")).get("spec")))
    for op, path, _value in create_patch(old_spec, new_spec):
        if op != "replace" or not _IMAGE_PATCH.fullmatch(path):
            return f"only allowed to update images in spec for InPlaceOnly, but found {op} {path}"
    return None


def validate_cloneset_update(
    obj: Mapping[str, Any],
    old: Mapping[str, Any],
    *,
    pod_lookup: PodLookup = _no_pods,
    template_errors: Sequence[FieldError] = (),
) -> list[FieldError]:
    """Validating webhook on UPDATE (``validateCloneSetUpdate``); ``[]`` means admitted.

    First ``spec: Forbidden: updates to cloneset spec for fields other than ...`` when a field
    outside :data:`MUTABLE_SPEC_FIELDS` changed (the selector), then ``spec: Forbidden: only
    allowed to update images in spec for InPlaceOnly, but found <op> <path>``, then every create
    check; ``podsToDelete`` lookups only for names not already in ``old``; ``template_errors`` as
    for :func:`validate_cloneset_create`. Metadata immutability (``ValidateObjectMetaUpdate``) is
    left to the API server.
    """
    errs: list[FieldError] = []
    new_rest = {k: v for k, v in _spec(obj).items() if k not in MUTABLE_SPEC_FIELDS}
    old_rest = {k: v for k, v in _spec(old).items() if k not in MUTABLE_SPEC_FIELDS}
    if semantic_view(new_rest) != semantic_view(old_rest):
        errs.append(forbidden("spec", SPEC_UPDATE_FORBIDDEN_MESSAGE))
    violation = in_place_only_violation(old, obj)
    if violation is not None:
        errs.append(forbidden("spec", violation))
    errs.extend(_validate_cloneset(obj, old, pod_lookup, template_errors))
    return errs


def validate_cloneset_delete(old: Mapping[str, Any], *, gate_enabled: bool) -> str | None:
    """Validating webhook on DELETE: deletion protection of the stored object (``oldObject``).

    Returns the HTTP 403 message, or ``None`` when deletion is allowed; see
    :func:`~.deletion_protection.validate_workload_deletion` (uses ``spec.replicas`` only).
    ``gate_enabled`` is the ``ResourcesDeletionProtection`` feature gate (upstream default off).
    """
    return validate_workload_deletion(old, _spec(old).get("replicas"), gate_enabled=gate_enabled)
