"""AdvancedCronJob admission: defaulting (mutating webhook) and validation (validating webhook).

Pure functions over AdvancedCronJob dicts, mirroring OpenKruise ``pkg/webhook/advancedcronjob``
and ``SetDefaultsAdvancedCronJob`` (v1.8), messages verbatim (Appendix B):

- defaults: ``concurrencyPolicy: Allow``, ``successfulJobsHistoryLimit: 3``,
  ``failedJobsHistoryLimit: 1`` when unset (``paused`` false is Go's zero value and omitted);
- validation: object metadata (DNS-subdomain name, namespaced); ``spec.schedule`` non-empty
  ("schedule cannot be empty, please provide valid cron schedule.") and parseable by the
  robfig/cron v3 standard parser (:mod:`kruise.workloads.advancedcronjob.cron`; the detail is
  the parser's error); ``timeZone`` set together with ``TZ``/``CRON_TZ`` in the schedule is
  refused ("cannot use both timeZone field and TZ or CRON_TZ in schedule"); ``timeZone`` must be
  non-empty and a loadable IANA zone; ``spec.template`` must hold exactly one of
  ``jobTemplate``/``broadcastJobTemplate``/``imageListPullJobTemplate`` (Forbidden, the two
  upstream texts);
- on UPDATE, only schedule, concurrencyPolicy, the two history limits, startingDeadlineSeconds,
  timeZone and paused may change (Forbidden on ``spec``, upstream's text).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.workloads.admission.fielderrors import FieldError, forbidden, invalid
from kruise.workloads.admission.metavalidation import validate_object_meta
from kruise.workloads.advancedcronjob.cron import CronError, parse_standard

__all__ = ["UPDATABLE_FIELDS", "default_advancedcronjob", "validate_advancedcronjob"]

UPDATABLE_FIELDS = (
    "schedule",
    "concurrencyPolicy",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
    "startingDeadlineSeconds",
    "timeZone",
    "paused",
)
_TEMPLATES = ("jobTemplate", "broadcastJobTemplate", "imageListPullJobTemplate")
_NO_TEMPLATE = "spec must have one template, either JobTemplate or BroadcastJobTemplate should be provided"
_TWO_TEMPLATES = (
    "spec can have only one template, either JobTemplate or BroadcastJobTemplate should be provided"
)
_UPDATE_FORBIDDEN = (
    "updates to advancedcronjob spec for fields other than 'schedule', 'concurrencyPolicy', "
    "'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'timeZone' "
    "and 'paused' are forbidden"
)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def default_advancedcronjob(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The AdvancedCronJob as the mutating webhook leaves it (input untouched; unchanged input
    comes back as an equal copy, so the handler sends no patch)."""
    out = copy.deepcopy(dict(obj))
    spec = dict(_mapping(out.get("spec")))
    for key, value in (
        ("concurrencyPolicy", "Allow"),
        ("successfulJobsHistoryLimit", 3),
        ("failedJobsHistoryLimit", 1),
    ):
        if spec.get(key) is None:
            spec[key] = value
    if spec.get("paused") is False:
        spec.pop("paused")  # Go's omitempty
    out["spec"] = spec
    return out


def _schedule_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    schedule = spec.get("schedule")
    text = schedule if isinstance(schedule, str) else ""
    if not text:
        return [
            invalid("spec.schedule", text, "schedule cannot be empty, please provide valid cron schedule.")
        ]
    errs: list[FieldError] = []
    try:
        parse_standard(text)
    except CronError as exc:
        errs.append(invalid("spec.schedule", text, str(exc)))
    if spec.get("timeZone") is not None and "TZ" in text:
        errs.append(
            invalid("spec.schedule", text, "cannot use both timeZone field and TZ or CRON_TZ in schedule")
        )
    return errs


def _time_zone_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    zone = spec.get("timeZone")
    if zone is None:
        return []
    if not isinstance(zone, str) or not zone:
        return [invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string")]
    if zone.lower() == "local":
        return [
            invalid(
                "spec.timeZone",
                zone,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            )
        ]
    try:
        parse_standard(f"TZ={zone} @hourly")
    except CronError as exc:
        return [
            invalid("spec.timeZone", zone, str(exc).removeprefix("provided bad location ").split(": ", 1)[-1])
        ]
    return []


def _template_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    template = _mapping(spec.get("template"))
    count = sum(1 for key in _TEMPLATES if template.get(key) is not None)
    if count == 0:
        return [forbidden("spec.template", _NO_TEMPLATE)]
    if count > 1:
        return [forbidden("spec.template", _TWO_TEMPLATES)]
    return []


def validate_advancedcronjob(
    obj: Mapping[str, Any], *, old: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """Validating webhook (``validateAdvancedCronJob``, plus the update rule when ``old`` is the
    stored object); ``[]`` means admitted."""
    errs = validate_object_meta(_mapping(obj.get("metadata")), requires_namespace=True)
    spec = _mapping(obj.get("spec"))
    errs += _schedule_errors(spec)
    errs += _time_zone_errors(spec)
    errs += _template_errors(spec)
    if old is not None:
        old_spec = dict(_mapping(old.get("spec")))
        new_spec = dict(spec)
        for key in UPDATABLE_FIELDS:
            old_spec.pop(key, None)
            new_spec.pop(key, None)
        if old_spec != new_spec:
            errs.append(forbidden("spec", _UPDATE_FORBIDDEN))
    return errs
