"""AdvancedCronJob webhooks' pure rules: defaults and upstream's messages (Appendix B)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.workloads.admission.advancedcronjob import default_advancedcronjob, validate_advancedcronjob
from kruise.workloads.admission.fielderrors import aggregate

BCJ = {
    "broadcastJobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}
}


def obj(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"schedule": "*/1 * * * *", "template": copy.deepcopy(BCJ)}
    body.update(spec)
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": "a", "namespace": "d"},
        "spec": body,
    }


def test_defaults() -> None:
    out = default_advancedcronjob(obj(paused=False))
    assert out["spec"]["concurrencyPolicy"] == "Allow"
    assert out["spec"]["successfulJobsHistoryLimit"] == 3
    assert out["spec"]["failedJobsHistoryLimit"] == 1
    assert "paused" not in out["spec"]
    kept = default_advancedcronjob(obj(concurrencyPolicy="Forbid", successfulJobsHistoryLimit=0))
    assert kept["spec"]["concurrencyPolicy"] == "Forbid" and kept["spec"]["successfulJobsHistoryLimit"] == 0


def test_defaults_leave_input_untouched() -> None:
    src = obj()
    before = copy.deepcopy(src)
    default_advancedcronjob(src)
    assert src == before


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"schedule": ""},
            'spec.schedule: Invalid value: "": schedule cannot be empty, please provide valid cron schedule.',
        ),
        (
            {"schedule": "* * *"},
            'spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]',
        ),
        (
            {"schedule": "TZ=UTC * * * * *", "timeZone": "Asia/Shanghai"},
            'spec.schedule: Invalid value: "TZ=UTC * * * * *": '
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ),
        ({"timeZone": ""}, 'spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string'),
        (
            {"timeZone": "Local"},
            'spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in '
            "https://www.iana.org/time-zones",
        ),
        (
            {"timeZone": "Mars/Olympus"},
            'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
        ),
        (
            {"template": {}},
            "spec.template: Forbidden: spec must have one template, "
            "either JobTemplate or BroadcastJobTemplate should be provided",
        ),
        (
            {"template": {**BCJ, "jobTemplate": {"spec": {}}}},
            "spec.template: Forbidden: spec can have only one template, "
            "either JobTemplate or BroadcastJobTemplate should be provided",
        ),
    ],
)
def test_validation_messages(spec: dict[str, Any], message: str) -> None:
    assert aggregate(validate_advancedcronjob(obj(**spec))) == message


def test_valid_objects() -> None:
    assert validate_advancedcronjob(obj()) == []
    assert validate_advancedcronjob(obj(schedule="@every 2s", timeZone="Europe/Berlin")) == []
    assert validate_advancedcronjob(obj(schedule="CRON_TZ=America/New_York 0 9 * * mon-fri")) == []


def test_update_only_listed_fields() -> None:
    old = obj()
    new = obj(
        schedule="@hourly",
        concurrencyPolicy="Forbid",
        paused=True,
        timeZone="Europe/Berlin",
        startingDeadlineSeconds=5,
    )
    assert validate_advancedcronjob(new, old=old) == []
    changed = obj(template={"jobTemplate": {"spec": {}}})
    assert aggregate(validate_advancedcronjob(changed, old=old)) == (
        "spec: Forbidden: updates to advancedcronjob spec for fields other than 'schedule', "
        "'concurrencyPolicy', 'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', "
        "'startingDeadlineSeconds', 'timeZone' and 'paused' are forbidden"
    )
