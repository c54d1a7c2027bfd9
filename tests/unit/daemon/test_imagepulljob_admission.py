"""Defaults and validation of the image pre-pull kinds (upstream v1.8 webhooks, Appendix B)."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.daemon.imagepulljob.admission import (
    PROTECTION_FINALIZER,
    default_imagelistpulljob,
    default_imagepulljob,
    default_nodeimage,
    validate_imagelistpulljob,
    validate_imagepulljob,
    validate_nodeimage,
)
from kruise.daemon.imagepulljob.imageref import InvalidReferenceError, name_and_tag


def job(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "j", "namespace": "ns"}, "spec": {"image": "nginx:1.9.1", **spec}}


def test_imagepulljob_defaults_and_finalizer_on_create() -> None:
    out = default_imagepulljob(job(), create=True)
    assert out["spec"]["completionPolicy"] == {"type": "Always"}
    assert out["spec"]["pullPolicy"] == {"timeoutSeconds": 600, "backoffLimit": 3}
    assert out["spec"]["imagePullPolicy"] == "IfNotPresent"
    assert out["metadata"]["finalizers"] == [PROTECTION_FINALIZER]
    assert "finalizers" not in default_imagepulljob(job(), create=False)["metadata"]


def test_imagelistpulljob_defaults_leave_image_pull_policy_alone() -> None:
    out = default_imagelistpulljob({"metadata": {}, "spec": {"images": ["a"]}})
    assert out["spec"]["completionPolicy"] == {"type": "Always"}
    assert "imagePullPolicy" not in out["spec"]


def test_nodeimage_defaults_created_at_and_pull_policy_and_sorts_tags() -> None:
    obj = {"spec": {"images": {"nginx": {"tags": [{"tag": "b"}, {"tag": "a", "createdAt": "x"}]}}}}
    out = default_nodeimage(obj, "2024-01-01T00:00:00Z")
    tags = out["spec"]["images"]["nginx"]["tags"]
    assert [t["tag"] for t in tags] == ["a", "b"]
    assert tags[0]["createdAt"] == "x" and tags[1]["createdAt"] == "2024-01-01T00:00:00Z"
    assert tags[1]["pullPolicy"] == {"timeoutSeconds": 600, "backoffLimit": 3}


ALWAYS = {"type": "Always"}
JOB_CASES = [
    ("a valid always job", job(completionPolicy=ALWAYS), None),
    (
        "names with a label selector",
        job(completionPolicy=ALWAYS, selector={"names": ["a"], "matchLabels": {"x": "y"}}),
        "can not set both names and labelSelector in this spec.selector",
    ),
    (
        "a bad selector operator",
        job(completionPolicy=ALWAYS, selector={"matchExpressions": [{"key": "a", "operator": "Foo"}]}),
        'invalid selector: "Foo" is not a valid label selector operator',
    ),
    (
        "duplicated names",
        job(completionPolicy=ALWAYS, selector={"names": ["a", "a"]}),
        "duplicated name in selector names",
    ),
    (
        "selector and podSelector",
        job(completionPolicy=ALWAYS, selector={"names": ["a"]}, podSelector={"matchLabels": {"a": "b"}}),
        "can not set both selector and podSelector",
    ),
    (
        "an In requirement with no values",
        job(completionPolicy=ALWAYS, podSelector={"matchExpressions": [{"key": "a", "operator": "In"}]}),
        "invalid podSelector: for 'in', 'notin' operators, values set can't be empty",
    ),
    ("no image", job(completionPolicy=ALWAYS, image=""), "image can not be empty"),
    ("an uppercase image", job(completionPolicy=ALWAYS, image="Nginx"), "invalid image Nginx: "),
    (
        "a deadline below the pull timeout",
        job(completionPolicy={"type": "Always", "activeDeadlineSeconds": 60}),
        "completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds(default 600)",
    ),
    (
        "a never job with a ttl",
        job(completionPolicy={"type": "Never", "ttlSecondsAfterFinished": 5}),
        "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType",
    ),
    (
        "an unknown completion type",
        job(completionPolicy={"type": "Sometimes"}),
        "unknown type of completionPolicy: Sometimes",
    ),
]


@pytest.mark.parametrize(("obj", "message"), [c[1:] for c in JOB_CASES], ids=[c[0] for c in JOB_CASES])
def test_imagepulljob_validation(obj: dict[str, Any], message: str | None) -> None:
    verdict = validate_imagepulljob(obj)
    if message is None:
        assert verdict is None
    else:
        assert verdict is not None and verdict.startswith(message)


def lst(images: list[str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {}, "spec": {"images": images, "completionPolicy": ALWAYS, **spec}}


LIST_CASES = [
    ("a valid list", lst(["nginx:1.9.1", "busybox:1.35"]), None),
    ("no images", lst([]), "image can not be empty"),
    ("duplicates", lst(["a", "a"]), "images cannot have duplicate values"),
    ("too many", lst([f"img{i}" for i in range(256)]), "the maximum number of images cannot > 255"),
    ("a bad image", lst(["a:b:c"]), "invalid image a:b:c: invalid reference format"),
    (
        "a never list with a deadline",
        lst(["a"], completionPolicy={"type": "Never", "activeDeadlineSeconds": 1}),
        "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType",
    ),
]


@pytest.mark.parametrize(("obj", "message"), [c[1:] for c in LIST_CASES], ids=[c[0] for c in LIST_CASES])
def test_imagelistpulljob_validation(obj: dict[str, Any], message: str | None) -> None:
    assert validate_imagelistpulljob(obj) == message


def tag(**kw: Any) -> dict[str, Any]:
    return {"tag": "1", "createdAt": "t", "version": 0, "pullPolicy": {"ttlSecondsAfterFinished": 5}, **kw}


NODE_CASES = [
    ("a valid nodeimage", {"nginx": {"tags": [tag()]}}, None),
    ("an empty tag", {"nginx": {"tags": [tag(tag="")]}}, "tag for image nginx can not be empty"),
    ("a duplicated tag", {"nginx": {"tags": [tag(), tag()]}}, "duplicated tag 1 for image nginx"),
    (
        "no createdAt",
        {"nginx": {"tags": [tag(createdAt=None)]}},
        "createAt field for nginx/1 can not be empty",
    ),
    (
        "a negative version",
        {"nginx": {"tags": [tag(version=-1)]}},
        "version for nginx/1 can not be less than 0",
    ),
    ("no pull policy", {"nginx": {"tags": [tag(pullPolicy=None)]}}, "pullPolicy field for nginx/1 must set"),
    (
        "no ttl",
        {"nginx": {"tags": [tag(pullPolicy={})]}},
        "pullPolicy.ttlSecondsAfterFinished for nginx/1 must set",
    ),
    (
        "too many images",
        {f"i{i}": {"tags": []} for i in range(257)},
        "spec images length 257 can not be more than 256",
    ),
]


@pytest.mark.parametrize(("images", "message"), [c[1:] for c in NODE_CASES], ids=[c[0] for c in NODE_CASES])
def test_nodeimage_validation(images: dict[str, Any], message: str | None) -> None:
    assert validate_nodeimage({"spec": {"images": images}}) == message


REFS = [
    ("a docker hub short name", "nginx:1.9.1", ("nginx", "1.9.1")),
    ("no tag means latest", "nginx", ("nginx", "latest")),
    ("the library prefix is dropped", "docker.io/library/nginx", ("nginx", "latest")),
    ("a docker hub user repo", "openkruise/guestbook:v1", ("openkruise/guestbook", "v1")),
    ("a registry with a port", "kruise.local:5000/busybox:v2", ("kruise.local:5000/busybox", "v2")),
    ("a digest is the tag", "busybox@sha256:" + "a" * 64, ("busybox", "sha256:" + "a" * 64)),
]


@pytest.mark.parametrize(("ref", "expected"), [c[1:] for c in REFS], ids=[c[0] for c in REFS])
def test_name_and_tag(ref: str, expected: tuple[str, str]) -> None:
    assert name_and_tag(ref) == expected


@pytest.mark.parametrize("ref", ["", "a:b:c", "UPPER", "a" * 64, "busybox@sha256:abc"])
def test_bad_references_are_refused(ref: str) -> None:
    with pytest.raises(InvalidReferenceError):
        name_and_tag(ref)
