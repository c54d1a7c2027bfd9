"""BroadcastJob admission: defaulting (mutating webhook) and validation (validating webhook).

Pure functions over BroadcastJob dicts, mirroring OpenKruise ``pkg/webhook/broadcastjob`` and
``SetDefaultsBroadcastJob`` (v1.8), messages verbatim.

Defaults, in upstream's order: the pod template's defaults (:func:`~.pod_defaults.default_pod_template`,
``SetDefaultPodSpec``) on CREATE or when the template changed, unless the ``TemplateNoDefaults``
gate is on; ``completionPolicy.type: Always``; ``parallelism: 2147483647``;
``failurePolicy.type: FailFast``; ``template.spec.restartPolicy: OnFailure`` when still empty.
As upstream, the pod defaults run first and default an empty ``restartPolicy`` to ``Always``, so
a template must name Never or OnFailure unless ``TemplateNoDefaults`` is on; the OnFailure
default is reached only then.

Validation (``validateBroadcastJob``): metadata with the job's name rule (``^[a-zA-Z0-9\\-]+$``,
"BroadcastJob name must consist of alphanumeric characters or '-'", at most 63 characters);
with completion type Never, ``ttlSecondsAfterFinished`` and ``activeDeadlineSeconds`` are
refused ("... can just work with Always CompletionPolicyType"); ``restartPolicy`` must be Never
or OnFailure; the template labels may not preset ``broadcastjob-name`` or
``broadcastjob-controller-uid``; then the pod template as the API server judges it (a dry-run
Pod; upstream runs ``ValidatePodTemplateSpec``). CREATE and UPDATE are judged alike.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kruise.workloads.admission.fielderrors import FieldError, go_string_map, invalid
from kruise.workloads.admission.intstr import validate_positive_int_or_percent
from kruise.workloads.admission.metavalidation import max_len_error, regex_error, validate_object_meta
from kruise.workloads.admission.pod_defaults import add_marshal_artifacts, default_pod_template
from kruise.workloads.broadcastjob.jobpods import CONTROLLER_UID_LABEL, JOB_NAME_LABEL
from kruise.workloads.intorpercent import MAX_INT32

__all__ = ["default_broadcastjob", "validate_broadcastjob"]

NAME_MAX_LEN = 63
_NAME_FMT = r"^[a-zA-Z0-9\-]+$"
_NAME = re.compile(_NAME_FMT)
_NAME_MSG = "BroadcastJob name must consist of alphanumeric characters or '-'"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _spec(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return _mapping((obj or {}).get("spec"))


def default_broadcastjob(
    obj: Mapping[str, Any], *, old: Mapping[str, Any] | None, template_no_defaults: bool = False
) -> dict[str, Any]:
    """The BroadcastJob as the mutating webhook leaves it (see the module docstring); input
    untouched. ``old`` is the stored object on UPDATE (``None`` on CREATE). Unchanged input
    comes back as an equal copy (upstream then answers "allowed" without a patch)."""
    out = copy.deepcopy(dict(obj))
    spec = dict(_spec(out))
    out["spec"] = spec
    template = dict(_mapping(spec.get("template")))
    if not template_no_defaults and (old is None or _spec(obj).get("template") != _spec(old).get("template")):
        template = default_pod_template(template)
    for key, value in (("completionPolicy", {"type": "Always"}), ("failurePolicy", {"type": "FailFast"})):
        policy = dict(_mapping(spec.get(key)))
        if not policy.get("type"):
            policy["type"] = value["type"]
        spec[key] = policy
    if spec.get("parallelism") is None:
        spec["parallelism"] = MAX_INT32
    pod_spec = dict(_mapping(template.get("spec")))
    if not pod_spec.get("restartPolicy"):
        pod_spec["restartPolicy"] = "OnFailure"
    template["spec"] = pod_spec
    spec["template"] = template
    if not spec.get("paused"):
        spec.pop("paused", None)  # Go's omitempty drops paused: false
    if out == obj:
        return out
    spec["template"] = add_marshal_artifacts(template)
    return out


def _name_errors(name: str, prefix: bool) -> list[str]:
    """``validateBroadcastJobName``."""
    errs: list[str] = []
    if not _NAME.match(name):
        errs.append(regex_error(_NAME_MSG, _NAME_FMT, "example-com"))
    if len(name) > NAME_MAX_LEN:
        errs.append(max_len_error(NAME_MAX_LEN))
    return errs


def validate_broadcastjob(
    obj: Mapping[str, Any], *, template_errors: Sequence[FieldError] = ()
) -> list[FieldError]:
    """Validating webhook on CREATE and UPDATE (``validateBroadcastJob``); ``[]`` means admitted.

    ``template_errors`` is the API server's verdict on a Pod made from the template
    (:func:`~kruise.workloads.admission.dryrun.template_verdict`).
    """
    errs = validate_object_meta(
        _mapping(obj.get("metadata")), requires_namespace=True, name_validator=_name_errors
    )
    spec = _spec(obj)
    completion = _mapping(spec.get("completionPolicy"))
    if completion.get("type") == "Never":
        for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds"):
            if completion.get(key) is not None:
                path = f"spec.completionPolicy.{key}"
                errs.append(
                    invalid(path, completion[key], f"{key} can just work with Always CompletionPolicyType")
                )
    if spec.get("parallelism") is not None:
        # ours: upstream's webhook does not look, and its controller then fails every round
        errs.extend(validate_positive_int_or_percent(spec["parallelism"], "spec.parallelism", max_100=False))
    template = _mapping(spec.get("template"))
    restart = str(_mapping(template.get("spec")).get("restartPolicy") or "")
    if restart not in ("OnFailure", "Never"):
        path = "spec.template.spec.restartPolicy"
        errs.append(invalid(path, restart, "pod restartPolicy can only be Never or OnFailure"))
    labels = _mapping(template.get("metadata")).get("labels")
    if isinstance(labels, Mapping) and (labels.get(JOB_NAME_LABEL) or labels.get(CONTROLLER_UID_LABEL)):
        detail = f'"{JOB_NAME_LABEL}" and "{CONTROLLER_UID_LABEL}" are not allowed to preset in pod labels'
        errs.append(invalid("spec.template.metadata.labels", go_string_map(labels), detail))
    return [*errs, *template_errors]
