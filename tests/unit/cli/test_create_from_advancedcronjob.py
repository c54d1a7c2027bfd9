"""``kubectl kruise create job --from=advancedcronjob/NAME``."""

from __future__ import annotations

import pytest

from kruise.rollouts.cli.create import job_from_advancedcronjob
from kruise.rollouts.cli.refs import TYPES


def test_kubectl_kruise_create_job_from_advancedcronjob() -> None:
    """``kubectl kruise create job --from=advancedcronjob/NAME`` (kubectl-kruise's
    createJobFromAdvancedCronJob): the jobTemplate, owned by the ACJ; other types refused."""
    assert TYPES["acj"] is TYPES["advancedcronjob"] is TYPES["advancedcronjobs.apps.kruise.io"]
    acj = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "AdvancedCronJob",
        "metadata": {"name": "a", "namespace": "d", "uid": "u-9"},
        "spec": {
            "template": {"jobTemplate": {"metadata": {"labels": {"a": "b"}}, "spec": {"backoffLimit": 2}}}
        },
        "status": {"type": "Job"},
    }
    job = job_from_advancedcronjob("manual", acj)
    assert job["metadata"] == {
        "name": "manual",
        "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
        "labels": {"a": "b"},
        "ownerReferences": [
            {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob", "name": "a", "uid": "u-9"}
        ],
    }
    assert job["spec"] == {"backoffLimit": 2} and job["kind"] == "Job"
    acj["status"] = {"type": "BroadcastJob"}
    with pytest.raises(ValueError, match="from must be a job template, but got BroadcastJob"):
        job_from_advancedcronjob("manual", acj)
