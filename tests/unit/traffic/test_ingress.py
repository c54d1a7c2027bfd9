"""The nginx canary Ingress: rules copied from the stable Ingress, annotations from our nginx.lua."""

from __future__ import annotations

import pytest

from kruise.traffic.ingress import canary_annotations, canary_rules, desired_canary_ingress, needs_update
from kruise.traffic.lua import LuaScriptError
from kruise.traffic.scripts import builtin_ingress_script
from tests.unit.traffic.builders import CANARY, JSON, STABLE, header, ingress, intent

NGINX = builtin_ingress_script("nginx") or ""
N = "nginx.ingress.kubernetes.io/"


def annotations(
    weight: int | None = None, matches: list[JSON] | None = None, start: dict[str, str] | None = None
):
    return canary_annotations(NGINX, start or {}, intent(weight, matches))


ANNOTATION_CASES = [
    pytest.param(20, None, {N + "canary": "true", N + "canary-weight": "20"}, id="weight only"),
    pytest.param(
        0, None, {N + "canary": "true", N + "canary-weight": "0"}, id="zero weight is still written"
    ),
    pytest.param(
        None,
        [{"headers": [header("user", "beta")]}],
        {N + "canary": "true", N + "canary-by-header": "user", N + "canary-by-header-value": "beta"},
        id="exact header match, no weight annotation",
    ),
    pytest.param(
        None,
        [{"headers": [header("user", "beta|gamma", "RegularExpression")]}],
        {N + "canary": "true", N + "canary-by-header": "user", N + "canary-by-header-pattern": "beta|gamma"},
        id="regular expression header becomes a pattern",
    ),
    pytest.param(
        None,
        [{"headers": [header("canary-by-cookie", "beta_user")]}],
        {N + "canary": "true", N + "canary-by-cookie": "beta_user"},
        id="a header named canary-by-cookie names the cookie",
    ),
    pytest.param(
        30,
        [{"headers": [header("user", "beta")]}],
        {
            N + "canary": "true",
            N + "canary-weight": "30",
            N + "canary-by-header": "user",
            N + "canary-by-header-value": "beta",
        },
        id="nginx can weigh and match at once",
    ),
    pytest.param(
        None,
        [{"headers": [header("user", "beta"), header("ignored", "x")]}],
        {N + "canary": "true", N + "canary-by-header": "user", N + "canary-by-header-value": "beta"},
        id="only the first header of a match is used",
    ),
    pytest.param(
        None,
        [{"headers": [header("canary-by-cookie", "c")]}, {"headers": [header("user", "beta")]}],
        {
            N + "canary": "true",
            N + "canary-by-cookie": "c",
            N + "canary-by-header": "user",
            N + "canary-by-header-value": "beta",
        },
        id="a cookie and a header from two matches",
    ),
    pytest.param(
        None,
        [{"path": {"type": "Exact", "value": "/x"}}],
        {N + "canary": "true"},
        id="matches without headers add nothing",
    ),
]


@pytest.mark.parametrize(("weight", "matches", "expected"), ANNOTATION_CASES)
def test_nginx_annotations(weight: int | None, matches: list[JSON] | None, expected: dict[str, str]) -> None:
    assert annotations(weight, matches) == expected


def test_previous_step_annotations_are_cleared_and_foreign_ones_kept() -> None:
    start = {
        "kubernetes.io/ingress.class": "nginx",
        N + "canary": "true",
        N + "canary-weight": "20",
        N + "canary-by-header": "old",
        N + "canary-by-header-pattern": "x.*",
        N + "canary-by-cookie": "old",
    }
    assert annotations(None, [{"headers": [header("user", "beta")]}], start) == {
        "kubernetes.io/ingress.class": "nginx",
        N + "canary": "true",
        N + "canary-by-header": "user",
        N + "canary-by-header-value": "beta",
    }


def test_canary_rules_keep_only_stable_paths_rewritten_to_the_canary() -> None:
    stable = ingress("web", ("/", STABLE), ("/static", "static"), ("/api", STABLE))
    stable["spec"]["rules"].append({"host": "other.example.com", "http": {"paths": []}})
    rules = canary_rules(stable, STABLE, CANARY)
    assert rules == [
        {
            "host": "web.example.com",
            "http": {
                "paths": [
                    {
                        "path": "/",
                        "pathType": "Prefix",
                        "backend": {"service": {"name": CANARY, "port": {"number": 80}}},
                    },
                    {
                        "path": "/api",
                        "pathType": "Prefix",
                        "backend": {"service": {"name": CANARY, "port": {"number": 80}}},
                    },
                ]
            },
        }
    ]
    assert stable["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"] == STABLE


def test_desired_canary_ingress_copies_metadata_class_and_tls_and_sets_owner() -> None:
    stable = ingress("web", ("/", STABLE), **{"team": "a"})
    stable["metadata"]["labels"] = {"app": "web"}
    stable["spec"]["tls"] = [{"hosts": ["web.example.com"], "secretName": "tls"}]
    owner = {"apiVersion": "rollouts.kruise.io/v1beta1", "kind": "Rollout", "name": "r", "uid": "u"}
    out = desired_canary_ingress(stable, None, intent(20), NGINX, owner)
    assert out["metadata"] == {
        "name": "web-canary",
        "namespace": "ns",
        "labels": {"app": "web"},
        "annotations": {"team": "a", N + "canary": "true", N + "canary-weight": "20"},
        "ownerReferences": [owner],
    }
    assert out["spec"]["ingressClassName"] == "nginx"
    assert out["spec"]["tls"] == stable["spec"]["tls"]


def test_existing_canary_annotations_feed_the_script_and_unchanged_means_no_update() -> None:
    stable = ingress("web", ("/", STABLE))
    first = desired_canary_ingress(stable, None, intent(20), NGINX)
    current = {**first, "metadata": {**first["metadata"], "resourceVersion": "5", "uid": "x"}}
    again = desired_canary_ingress(stable, current, intent(20), NGINX)
    assert not needs_update(current, again)
    assert needs_update(current, desired_canary_ingress(stable, current, intent(40), NGINX))


def test_user_ingress_script_with_upstream_contract() -> None:
    script = """
    local annotations = obj.annotations
    annotations["example.com/canary-weight"] = obj.weight
    annotations["example.com/canary-service"] = obj.canaryService
    annotations["example.com/stable-service"] = obj.stableService
    if obj.matches then
      annotations["example.com/header"] = obj.matches[1].headers[1].name
    end
    if obj.requestHeaderModifier then
      annotations["example.com/set"] = obj.requestHeaderModifier.set[1].value
    end
    return annotations
    """
    got = canary_annotations(
        script,
        {"keep": "me"},
        intent(None, [{"headers": [header("x-user", "1")]}], {"set": [{"name": "x", "value": "gray"}]}),
    )
    assert got == {
        "keep": "me",
        "example.com/canary-weight": "-1",
        "example.com/canary-service": CANARY,
        "example.com/stable-service": STABLE,
        "example.com/header": "x-user",
        "example.com/set": "gray",
    }


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("return 'nope'", "expect table output"),
        ("return {a = {b = 1}}", "not a string"),
        ("return {1, 2}", "not a list"),
    ],
)
def test_bad_ingress_script_results_are_errors(script: str, message: str) -> None:
    with pytest.raises(LuaScriptError, match=message):
        canary_annotations(script, {}, intent(10))


def test_numbers_from_a_script_become_strings() -> None:
    assert canary_annotations("return {w = 5, on = true}", {}, intent(5)) == {"w": "5", "on": "true"}
