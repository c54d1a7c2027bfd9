"""The Lua runtime: gopher-lua's dialect and libraries, a sandbox, JSON-shaped conversions."""

from __future__ import annotations

import pytest

from kruise.traffic.lua import LuaScriptError, run_lua, run_lua_table


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            {"a": 1, "b": "x", "c": True, "d": None}, {"a": 1, "b": "x", "c": True}, id="nil drops a key"
        ),
        pytest.param({"list": [1, 2, 3]}, {"list": [1, 2, 3]}, id="arrays stay arrays"),
        pytest.param({"o": {}, "l": []}, {"o": {}, "l": []}, id="empty object and empty array survive"),
        pytest.param({"f": 2.5, "i": 2.0}, {"f": 2.5, "i": 2}, id="integral numbers come back as int"),
        pytest.param({"deep": {"x": [{"y": [{}]}]}}, {"deep": {"x": [{"y": [{}]}]}}, id="nesting"),
    ],
)
def test_values_round_trip(value: dict[str, object], expected: dict[str, object]) -> None:
    assert run_lua("return obj", value) == expected


def test_lua_5_1_dialect_and_libraries() -> None:
    script = """
    local parts = {}
    for w in string.gmatch("a,b,c", "[^,]+") do table.insert(parts, w) end
    return {n = #parts, joined = table.concat(parts, "-"), floor = math.floor(7.9),
            unpacked = select("#", unpack({1, 2, 3})), version = _VERSION}
    """
    assert run_lua(script, {}) == {"n": 3, "joined": "a-b-c", "floor": 7, "unpacked": 3, "version": "Lua 5.1"}


def test_json_module_as_upstream() -> None:
    script = """
    local text = json.encode({b = 1, a = {1, 2}})
    local back = json.decode(text)
    local bad, err = json.decode("{not json")
    return {text = text, back = back, bad = bad == nil, err = err ~= nil}
    """
    assert run_lua(script, {}) == {
        "text": '{"a":[1,2],"b":1}',
        "back": {"a": [1, 2], "b": 1},
        "bad": True,
        "err": True,
    }


@pytest.mark.parametrize(
    "script",
    [
        pytest.param("return os.execute('true')", id="no os"),
        pytest.param("return io.open('/etc/passwd')", id="no io"),
        pytest.param("return require('os')", id="no require"),
        pytest.param("return dofile('/etc/passwd')", id="no dofile"),
        pytest.param("return loadstring('return 1')()", id="no loadstring"),
        pytest.param("return debug.getinfo(1)", id="no debug"),
        pytest.param("return python.builtins.open('/etc/passwd')", id="no python bridge"),
        pytest.param("return json.encode.__globals__", id="no attribute access on python callables"),
    ],
)
def test_sandbox_refuses_escapes(script: str) -> None:
    with pytest.raises(LuaScriptError):
        run_lua(script, {})


@pytest.mark.parametrize(
    "script",
    [
        pytest.param("while true do end", id="endless loop"),
        pytest.param(
            "while true do pcall(function() while true do end end) end", id="pcall cannot swallow it"
        ),
    ],
)
def test_instruction_budget(script: str) -> None:
    with pytest.raises(LuaScriptError, match="instruction budget"):
        run_lua(script, {}, budget=100_000)


def test_memory_limit() -> None:
    with pytest.raises(LuaScriptError, match="memory"):
        run_lua("local s = string.rep('x', 512 * 1024 * 1024) return #s", {})


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("return {", "lua script failed"),
        ("error('boom')", "boom"),
        ("local t = {} t[1] = 1 t[3] = 3 return t", "sparse array"),
        ("return {1, a = 2}", "mixed"),
        ("return {f = function() end}", "function"),
        ("local t = {} t.self = t return t", "nested"),
    ],
)
def test_script_failures_are_lua_script_errors(script: str, message: str) -> None:
    with pytest.raises(LuaScriptError, match=message):
        run_lua(script, {})


def test_table_result_required() -> None:
    with pytest.raises(LuaScriptError, match="expect table output from Lua script, not nil"):
        run_lua_table("local x = 1", {})


def test_each_run_starts_from_a_fresh_state() -> None:
    assert run_lua("leaked = 1; return {ok = true}", {}) == {"ok": True}
    assert run_lua("return {leaked = leaked == nil}", {}) == {"leaked": True}
