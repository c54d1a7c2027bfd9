"""Failpoints are armed only by KRUISE_FAILPOINTS, by name and detail."""

from __future__ import annotations

import subprocess
import sys

from kruise.core import failpoints


def test_parse_names_details_and_wildcards() -> None:
    assert failpoints.parse("") == {}
    assert failpoints.parse("after-transition-event=Progressing, b") == {
        "after-transition-event": "Progressing",
        "b": "*",
    }


def run(env_value: str, detail: str) -> int:
    code = f"from kruise.core import failpoints; failpoints.hit('after-transition-event', {detail!r})"
    env = {"KRUISE_FAILPOINTS": env_value, "PATH": ""}
    return subprocess.run([sys.executable, "-c", code], env=env, check=False).returncode


def test_an_armed_point_exits_like_a_sigkill_and_others_do_nothing() -> None:
    assert run("after-transition-event=Progressing", "Progressing") == 137
    assert run("after-transition-event=*", "StepReady") == 137
    assert run("after-transition-event=Progressing", "StepReady") == 0
    assert run("", "Progressing") == 0
