"""The env-from-metadata hash both processes compute, and upstream's consistency rule."""

from __future__ import annotations

import json
from typing import Any

from kruise.core.containermeta import (
    current_hash,
    env_from_metadata,
    env_hashes_consistent,
    expected_hash,
    fnv32a,
    parse_env_output,
    parse_meta_set,
)

CONTAINER: dict[str, Any] = {
    "name": "main",
    "env": [
        {"name": "LITERAL", "value": "x"},
        {"name": "APP_VERSION", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['version']"}}},
        {"name": "OWNER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['owner']"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "SIDECARSET_VERSION", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['x']"}}},
    ],
}


def test_fnv32a_known_values() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C


def test_only_label_and_annotation_env_vars_count_and_sidecarset_version_is_left_out() -> None:
    assert env_from_metadata(CONTAINER) == [
        ("APP_VERSION", "metadata.labels", "version"),
        ("OWNER", "metadata.annotations", "owner"),
    ]


def test_the_running_env_hash_matches_the_metadata_it_came_from_and_not_another() -> None:
    env = parse_env_output(b"PATH=/bin\nAPP_VERSION=v1\nOWNER=team-a\nLITERAL=x\nnoise\n")
    assert env["APP_VERSION"] == "v1" and "noise" not in env
    running = current_hash(CONTAINER, env)
    assert running == expected_hash(CONTAINER, {"version": "v1"}, {"owner": "team-a"})
    assert running != expected_hash(CONTAINER, {"version": "v2"}, {"owner": "team-a"})
    # the order of the env list does not matter, a missing value equals an empty one
    reordered = {**CONTAINER, "env": list(reversed(CONTAINER["env"]))}
    assert expected_hash(reordered, {"version": "v1"}, {"owner": "team-a"}) == running
    assert expected_hash(CONTAINER, {}, {}) == current_hash(CONTAINER, {"APP_VERSION": "", "OWNER": ""})


def pod(version: str, container_id: str = "containerd://b") -> dict[str, Any]:
    return {
        "metadata": {"labels": {"version": version}, "annotations": {"owner": "team-a"}},
        "spec": {"containers": [CONTAINER]},
        "status": {"containerStatuses": [{"name": "main", "containerID": container_id}]},
    }


def meta(container_id: str, version: str) -> dict[str, Any]:
    value = expected_hash(CONTAINER, {"version": version}, {"owner": "team-a"})
    return {
        "containers": [
            {"name": "main", "containerID": container_id, "restartCount": 1,
             "hashes": {"plainHash": 1, "extractedEnvFromMetadataHash": value}},
        ]
    }  # fmt: skip


def test_consistency_needs_the_current_container_id_and_the_current_metadatas_hash() -> None:
    assert env_hashes_consistent(pod("v2"), meta("containerd://b", "v2"))
    assert not env_hashes_consistent(pod("v2"), meta("containerd://b", "v1"))  # not restarted yet
    assert not env_hashes_consistent(pod("v2"), meta("containerd://a", "v2"))  # a report of the old container
    assert not env_hashes_consistent(pod("v2"), {"containers": []})


def test_parse_meta_set_tolerates_garbage() -> None:
    assert parse_meta_set(None) is None
    assert parse_meta_set("{not json") is None
    assert parse_meta_set('{"containers": 3}') is None
    assert parse_meta_set(json.dumps(meta("x", "v1"))) == meta("x", "v1")
