"""The completion stages of ``kwok-stages.yaml`` select the pods a kubelet would finish, and only
those: their selectors run through ``jq`` (KWOK evaluates them with gojq) with KWOK's matching
rules (``expression.Requirement.Matches``: In/NotIn on string or bool results, a null result
matches NotIn and DoesNotExist only). The integration tests prove the status they write on the
real KWOK (tests/integration/test_kwok_completion.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from kruise.core.localcluster.stages import load_stages

JSON = dict[str, Any]
JQ = shutil.which("jq")
EXIT_STAGES = ("pod-exit-succeeded", "pod-exit-failed", "pod-exit-restart", "pod-complete")

pytestmark = pytest.mark.skipif(JQ is None, reason="jq is not installed")


def _values(expression: str, obj: JSON) -> list[Any]:
    assert JQ is not None
    expression = expression.replace(".[", "[")  # gojq (and jq >= 1.7) take ``.a.[]``; jq 1.6 wants ``.a[]``
    out = subprocess.run(
        [JQ, "-c", expression], input=json.dumps(obj), capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in out.stdout.splitlines() if line]


def _string(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else None


def _matches(stage: JSON, obj: JSON) -> bool:
    for req in stage["spec"]["selector"]["matchExpressions"]:
        results = [v for v in _values(req["key"], obj) if v is not None]
        op, wanted = req["operator"], set(req.get("values") or ())
        hit = any(_string(v) in wanted for v in results)
        ok = {
            "In": hit,
            "NotIn": not hit,
            "Exists": bool(results),
            "DoesNotExist": not results,
        }[op]
        if not ok:
            return False
    return True


def pod(restart: str, code: str | None, *, phase: str = "Running", owner: str = "BroadcastJob") -> JSON:
    annotations = (
        {} if code is None else {"kwok.kruise.local/exit-code": code, "kwok.kruise.local/run-duration": "1s"}
    )
    return {
        "metadata": {"name": "p", "annotations": annotations, "ownerReferences": [{"kind": owner}]},
        "spec": {"restartPolicy": restart, "containers": [{"name": "c", "image": "busybox"}]},
        "status": {"phase": phase},
    }


def selected(obj: JSON) -> list[str]:
    stages = {s["metadata"]["name"]: s for s in load_stages()}
    return [name for name in EXIT_STAGES if _matches(stages[name], obj)]


@pytest.mark.parametrize(
    ("obj", "stages"),
    [
        pytest.param(pod("Never", "0"), ["pod-exit-succeeded"], id="exit 0 under Never: Succeeded"),
        pytest.param(pod("OnFailure", "0"), ["pod-exit-succeeded"], id="exit 0 under OnFailure: Succeeded"),
        pytest.param(pod("Never", "3"), ["pod-exit-failed"], id="exit 3 under Never: Failed"),
        pytest.param(pod("OnFailure", "1"), ["pod-exit-restart"], id="exit 1 under OnFailure: restart"),
        pytest.param(pod("Always", "0"), ["pod-exit-restart"], id="exit 0 under Always: restart"),
        pytest.param(pod("Never", None), [], id="no annotation: runs on"),
        pytest.param(pod("Never", "0", phase="Pending"), [], id="not running yet"),
        pytest.param(pod("Never", "1", phase="Failed"), [], id="already finished"),
        pytest.param(
            pod("Never", None, owner="Job"), ["pod-complete"], id="a Job's pod: KWOK's pod-complete"
        ),
        pytest.param(pod("Never", "1", owner="Job"), ["pod-exit-failed"], id="an annotated Job pod: ours"),
    ],
)
def test_exactly_the_kubelets_outcome_is_selected(obj: JSON, stages: list[str]) -> None:
    # pod-complete also wants Ready True; our pods in these cases have no conditions, so add it
    obj["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    assert selected(obj) == stages


def test_each_exit_stage_waits_the_annotated_run_duration() -> None:
    stages = {s["metadata"]["name"]: s for s in load_stages()}
    for name in EXIT_STAGES[:3]:
        expression = stages[name]["spec"]["delay"]["durationFrom"]["expressionFrom"]
        assert _values(expression, pod("Never", "0")) == ["1s"]
