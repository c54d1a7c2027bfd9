"""AdvancedCronJob (``apps.kruise.io/v1alpha1``, short name ``acj``): models and CRD description.

Field names follow OpenKruise's ``apis/apps/v1alpha1/advancedcronjob_types.go`` (v1.8 line):

- ``spec.schedule`` (required) is a robfig/cron v3 standard expression
  (:mod:`kruise.workloads.advancedcronjob.cron`); ``spec.timeZone`` an IANA zone name;
- ``spec.template`` (required) holds exactly one of ``jobTemplate`` (a batch/v1 JobTemplateSpec,
  kept verbatim), ``broadcastJobTemplate`` or ``imageListPullJobTemplate`` (metadata + spec,
  kept verbatim): the validating webhook enforces "exactly one";
- defaults (``concurrencyPolicy`` Allow, ``paused`` false, ``successfulJobsHistoryLimit`` 3,
  ``failedJobsHistoryLimit`` 1) are applied by the mutating webhook, not by the model or CRD, as
  upstream (``SetDefaultsAdvancedCronJob``);
- ``status.type`` is the template kind (Job, BroadcastJob or ImageListPullJob), ``status.active``
  references the unfinished children and ``status.lastScheduleTime`` is the newest child's
  scheduled time.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import Field

from kruise.core.api import Bool, Int32, Int64, KubeModel, KubeObject, ObjectReference, PreservedObject, Time
from kruise.core.crdgen import AGE_COLUMN, CRDSpec, CRDVersion, PrinterColumn

__all__ = [
    "ADVANCEDCRONJOB_CRD",
    "AdvancedCronJob",
    "AdvancedCronJobSpec",
    "AdvancedCronJobStatus",
    "ConcurrencyPolicy",
    "CronJobTemplate",
    "TemplateKind",
]

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "AdvancedCronJob"


class ConcurrencyPolicy(StrEnum):
    """Values of ``spec.concurrencyPolicy``: run concurrently (Allow, the default), skip a run
    while one is active (Forbid), or delete the active ones and run (Replace)."""

    ALLOW = "Allow"
    FORBID = "Forbid"
    REPLACE = "Replace"


class TemplateKind(StrEnum):
    """Values of ``status.type``: the kind of the children."""

    JOB = "Job"
    BROADCAST_JOB = "BroadcastJob"
    IMAGE_LIST_PULL_JOB = "ImageListPullJob"


class CronJobTemplate(KubeModel):
    """CronJobTemplate: exactly one of the three templates (checked by the webhook). Each is a
    ``{metadata, spec}`` object kept verbatim."""

    job_template: PreservedObject | None = Field(
        default=None, description="Specifies the job that will be created when executing a CronJob."
    )
    broadcast_job_template: PreservedObject | None = Field(
        default=None,
        description="Specifies the broadcastjob that will be created when executing a BroadcastCronJob.",
    )
    image_list_pull_job_template: PreservedObject | None = Field(
        default=None,
        description="Specifies the imagelistpulljob that will be created when executing a ImageListPullJob.",
    )


class AdvancedCronJobSpec(KubeModel):
    """AdvancedCronJobSpec defines the desired state of AdvancedCronJob"""

    schedule: str = Field(description="The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.")
    time_zone: str | None = Field(
        default=None,
        description="The time zone name for the given schedule, see "
        "https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.",
    )
    starting_deadline_seconds: Int64 | None = Field(
        default=None,
        description="Optional deadline in seconds for starting the job if it misses scheduled time for any "
        "reason.",
    )
    concurrency_policy: ConcurrencyPolicy | None = Field(
        default=None, description="Specifies how to treat concurrent executions of a Job."
    )
    paused: Bool | None = Field(default=None, description="Paused will pause the cron job.")
    successful_jobs_history_limit: Int32 | None = Field(
        default=None, description="The number of successful finished jobs to retain."
    )
    failed_jobs_history_limit: Int32 | None = Field(
        default=None, description="The number of failed finished jobs to retain."
    )
    template: CronJobTemplate = Field(
        description="Specifies the job that will be created when executing a CronJob."
    )


class AdvancedCronJobStatus(KubeModel):
    """AdvancedCronJobStatus defines the observed state of AdvancedCronJob"""

    type: TemplateKind | None = Field(default=None, description="")
    active: list[ObjectReference] | None = Field(
        default=None, description="A list of pointers to currently running jobs."
    )
    last_schedule_time: Time | None = Field(
        default=None, description="Information when was the last time the job was successfully scheduled."
    )


class AdvancedCronJob(KubeObject):
    """AdvancedCronJob is the Schema for the advancedcronjobs API"""

    API_VERSION: ClassVar[str] = f"{GROUP}/{VERSION}"
    KIND: ClassVar[str] = KIND

    spec: AdvancedCronJobSpec | None = None
    status: AdvancedCronJobStatus | None = None


ADVANCEDCRONJOB_CRD = CRDSpec(
    group=GROUP,
    kind=KIND,
    plural="advancedcronjobs",
    singular="advancedcronjob",
    short_names=("acj",),
    scope="Namespaced",
    versions=(
        CRDVersion(
            name=VERSION,
            model=AdvancedCronJob,
            served=True,
            storage=True,
            status_subresource=True,
            printer_columns=(
                PrinterColumn("Schedule", "string", ".spec.schedule", "The schedule of this cron job."),
                PrinterColumn("Type", "string", ".status.type", "The type of of this cron job."),
                PrinterColumn(
                    "LastScheduleTime", "date", ".status.lastScheduleTime", "The last scheduled time"
                ),
                AGE_COLUMN,
            ),
        ),
    ),
)
"""The AdvancedCronJob CRD: namespaced, short name ``acj``, a status subresource, printer columns
Schedule, Type, LastScheduleTime and AGE (the ``+kubebuilder:printcolumn`` markers upstream)."""
