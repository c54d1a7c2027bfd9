"""A sandboxed Lua runtime with upstream's data contract for traffic-routing scripts.

Kruise Rollouts runs its Ingress-class and custom-provider scripts in gopher-lua, a Lua 5.1
(``KR:pkg/util/luamanager/lua.go``): a fresh state per run with only the ``base``, ``table``,
``string`` and ``math`` libraries plus a ``json`` module (``encode``/``decode``), the input as the
global ``obj`` and a one second timeout; the chunk's return value is the answer. Users paste
scripts written for that environment into the ``kruise-rollout-configuration`` ConfigMap, so we
run them the same way with lupa's Lua 5.1 build:

- a fresh ``LuaRuntime`` per run; no ``os``, ``io``, ``package``/``require``, ``debug``,
  ``load*``/``dofile``, ``python``; every Python attribute access from Lua is refused;
- an instruction budget (a count hook; ``pcall`` cannot swallow it) instead of a wall clock, so
  tests are deterministic; a memory cap;
- JSON-shaped conversion both ways, as upstream's ``luamanager.Encode``/``DecodeValue``: objects
  become string-keyed tables, arrays 1-based tables, integral numbers come back as ``int``.
  Upstream encodes every empty table as ``[]``; we remember which tables came from JSON objects
  (a marker metatable) so an untouched ``{}`` goes back as ``{}``.
"""

from __future__ import annotations

import importlib
import json
import logging
import math
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from kruise.core.errors import ProviderError

log = logging.getLogger(__name__)

INSTRUCTION_BUDGET = 20_000_000
"""Lua VM instructions one script may run (counted per 1000); a generous stand-in for 1 s."""
MAX_MEMORY = 64 * 1024 * 1024
_HOOK_EVERY = 1000
_MAX_DEPTH = 100
_OBJECT_MARK = "__kruise_json_object"

_REMOVED_GLOBALS = (
    "io",
    "os",
    "package",
    "require",
    "module",
    "debug",
    "dofile",
    "loadfile",
    "load",
    "loadstring",
    "python",
    "getfenv",
    "setfenv",
    "collectgarbage",
    "gcinfo",
    "newproxy",
    "coroutine",
)

_SETUP = """
local budget, every, encode, decode, logger = ...
local count = 0
local limit = math.floor(budget / every)
local message = "lua script exceeded its instruction budget"
debug.sethook(function()
  count = count + 1
  if count > limit then error(message, 0) end
end, "", every)
local rawpcall, rawxpcall, select, unpack = pcall, xpcall, select, unpack
local function pack(...)
  return {n = select("#", ...), ...}
end
local function guarded(results)
  if count > limit then error(message, 0) end
  return unpack(results, 1, results.n)
end
pcall = function(...) return guarded(pack(rawpcall(...))) end
xpcall = function(...) return guarded(pack(rawxpcall(...))) end
json = {encode = encode, decode = decode}
print = function(...)
  local parts = {}
  for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
  logger(table.concat(parts, "\\t"))
end
"""


class LuaScriptError(ProviderError):
    """A traffic-routing Lua script failed: syntax, runtime error, budget, or a bad return value."""


def _lupa() -> ModuleType:
    """lupa's Lua 5.1 build (gopher-lua's dialect); the default build where it is missing."""
    try:
        return importlib.import_module("lupa.lua51")
    except ImportError:  # pragma: no cover - every lupa 2.x wheel ships lua51
        return importlib.import_module("lupa")


def _deny_attributes(obj: object, name: object, is_setting: bool) -> str:
    raise AttributeError("python attribute access is not allowed from traffic-routing scripts")


class _Session:
    """One sandboxed Lua state and the conversions bound to it."""

    def __init__(self, budget: int) -> None:
        self.mod = _lupa()
        self.rt = self.mod.LuaRuntime(
            register_eval=False,
            register_builtins=False,
            unpack_returned_tuples=True,
            attribute_filter=_deny_attributes,
            max_memory=MAX_MEMORY,
        )
        g = self.rt.globals()
        self._setmetatable = g.setmetatable
        self._getmetatable = g.getmetatable
        self._object_mt = self.rt.table()
        self._object_mt[_OBJECT_MARK] = True
        self.rt.execute(_SETUP, budget, _HOOK_EVERY, self._json_encode, self._json_decode, self._print)
        for name in _REMOVED_GLOBALS:
            g[name] = None

    # -------------------------------------------------------------- json module for scripts
    def _json_encode(self, value: Any) -> Any:
        try:
            return json.dumps(self.to_python(value), sort_keys=True, separators=(",", ":"))
        except (LuaScriptError, TypeError, ValueError) as err:
            return (None, str(err))

    def _json_decode(self, text: Any) -> Any:
        try:
            return self.to_lua(json.loads(str(text)))
        except ValueError as err:
            return (None, str(err))

    @staticmethod
    def _print(line: Any) -> None:
        log.debug("lua: %s", line)

    # -------------------------------------------------------------- conversions
    def to_lua(self, value: Any, depth: int = 0) -> Any:
        """JSON-like Python value -> Lua value (objects are marked so ``{}`` survives)."""
        if depth > _MAX_DEPTH:
            raise LuaScriptError("input nested too deeply for a traffic-routing script")
        if isinstance(value, Mapping):
            table = self.rt.table()
            for key, item in value.items():
                table[str(key)] = self.to_lua(item, depth + 1)
            self._setmetatable(table, self._object_mt)
            return table
        if isinstance(value, list | tuple):
            table = self.rt.table()
            for index, item in enumerate(value, start=1):
                table[index] = self.to_lua(item, depth + 1)
            return table
        if value is None or isinstance(value, bool | int | float | str):
            return value
        raise LuaScriptError(f"cannot hand a {type(value).__name__} to a Lua script")

    def to_python(self, value: Any, depth: int = 0) -> Any:
        """Lua value -> JSON-like Python value, with upstream's encoder rules."""
        if depth > _MAX_DEPTH:
            raise LuaScriptError("value nested too deeply (or recursive) in a Lua script result")
        if value is None or isinstance(value, bool | str):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise LuaScriptError("cannot encode a non-finite number to JSON")
            return int(value) if value.is_integer() else value
        if self.mod.lua_type(value) != "table":
            raise LuaScriptError(f"cannot encode a Lua {self.mod.lua_type(value)} to JSON")
        items = list(value.items())
        if not items:
            mt = self._getmetatable(value)
            return {} if mt is not None and mt[_OBJECT_MARK] else []
        keys = [k for k, _ in items]
        if all(isinstance(k, str) for k in keys):
            return {k: self.to_python(v, depth + 1) for k, v in items}
        if all(isinstance(k, int | float) and not isinstance(k, bool) for k in keys):
            by_index = {int(k): v for k, v in items if float(k).is_integer()}
            if len(by_index) != len(items) or sorted(by_index) != list(range(1, len(items) + 1)):
                raise LuaScriptError("cannot encode a sparse array to JSON")
            return [self.to_python(by_index[i], depth + 1) for i in range(1, len(items) + 1)]
        raise LuaScriptError("cannot encode a table with mixed or invalid key types to JSON")


def run_lua(script: str, obj: Mapping[str, Any], *, budget: int = INSTRUCTION_BUDGET) -> Any:
    """Run ``script`` with the global ``obj`` set from ``obj``; return its result as JSON-like data.

    Mirrors ``luamanager.RunLuaScript`` + ``Encode``: the caller checks the result's type
    (upstream demands a table). Raises :class:`LuaScriptError` for any failure in the script.
    """
    session = _Session(budget)
    try:
        session.rt.globals().obj = session.to_lua(obj)
        result = session.rt.execute(script)
    except MemoryError as err:
        raise LuaScriptError("lua script exceeded its memory limit") from err
    except Exception as err:  # LuaError, or a refused Python attribute access from the script
        raise LuaScriptError(f"lua script failed: {_first_line(err)}") from err
    return session.to_python(result)


def run_lua_table(script: str, obj: Mapping[str, Any], *, budget: int = INSTRUCTION_BUDGET) -> Any:
    """:func:`run_lua`, but the script must return a table (upstream: "expect table output")."""
    result = run_lua(script, obj, budget=budget)
    if not isinstance(result, dict | list):
        kind = "nil" if result is None else type(result).__name__
        raise LuaScriptError(f"expect table output from Lua script, not {kind}")
    return result


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
