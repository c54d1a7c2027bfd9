"""Run Argo CD's own health checks (``tests/data/argocd``) on an object, as Argo CD does.

Argo CD evaluates ``resource_customizations/<group>/<kind>/health.lua`` in gopher-lua with the
object as the global ``obj`` and reads ``status``/``message`` from the returned table; a script
error leaves the resource's health ``Unknown``. :func:`kruise.traffic.lua.run_lua` is the same
kind of sandbox (Lua 5.1, JSON-shaped conversion), so the scripts run here unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kruise.traffic.lua import LuaScriptError, run_lua

CUSTOMIZATIONS = Path(__file__).resolve().parents[1] / "data" / "argocd" / "resource_customizations"


def script_for(obj: Mapping[str, Any]) -> Path:
    group = str(obj["apiVersion"]).rpartition("/")[0]
    return CUSTOMIZATIONS / group / str(obj["kind"]) / "health.lua"


def argocd_health(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(status, message)`` Argo CD shows for ``obj``: Healthy, Progressing, Suspended, Degraded or
    Unknown (the script failed, for instance on a missing field)."""
    try:
        result = run_lua(script_for(obj).read_text(), obj)
    except LuaScriptError as err:
        return "Unknown", str(err)
    return str(result.get("status")), str(result.get("message") or "")
