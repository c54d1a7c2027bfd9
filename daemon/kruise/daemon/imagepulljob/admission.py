"""Defaulting and validation of ImagePullJob, ImageListPullJob and NodeImage (pure).

Mirrors OpenKruise v1.8 (``apis/apps/defaults``, ``pkg/webhook/*/validating``):

- ImagePullJob defaults: ``completionPolicy.type: Always``, ``pullPolicy {timeoutSeconds: 600,
  backoffLimit: 3}``, ``imagePullPolicy: IfNotPresent`` and, on CREATE only, the finalizer
  ``apps.kruise.io/deletion-protection`` (the controller removes it once the job's pull-secret
  copies are released, at completion or deletion).
- ImageListPullJob defaults: ``completionPolicy.type`` and ``pullPolicy`` only (no
  ``imagePullPolicy``, no finalizer).
- NodeImage defaults: every tag gets ``createdAt`` (now) and ``pullPolicy {timeoutSeconds: 600,
  backoffLimit: 3}``; tags (spec and status) are sorted by tag.
- Validation returns the first error's message, which the webhook answers with HTTP 400
  (``admission.Errored(http.StatusBadRequest, err)``); nothing is stored.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.daemon.imagepulljob.imageref import InvalidReferenceError, name_and_tag
from kruise.daemon.imagepulljob.selectors import selector_error

__all__ = [
    "ALWAYS",
    "DEFAULT_BACKOFF_LIMIT",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_IMAGES_PER_NODE",
    "NEVER",
    "PROTECTION_FINALIZER",
    "default_imagelistpulljob",
    "default_imagepulljob",
    "default_nodeimage",
    "validate_imagelistpulljob",
    "validate_imagepulljob",
    "validate_nodeimage",
]

ALWAYS = "Always"
NEVER = "Never"
DEFAULT_TIMEOUT_SECONDS = 600
DEFAULT_BACKOFF_LIMIT = 3
PROTECTION_FINALIZER = "apps.kruise.io/deletion-protection"
"""Upstream's ``defaults.ProtectionFinalizer``: keeps a job until its secret copies are released."""
MAX_IMAGES_PER_NODE = 256
MAX_IMAGES_PER_LIST = 255
NEVER_ONLY_ALWAYS = (
    "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType"
)

JSON = dict[str, Any]


def _default_template(spec: JSON) -> None:
    policy = spec.get("completionPolicy")
    if not isinstance(policy, dict):
        policy = spec["completionPolicy"] = {}
    if not policy.get("type"):
        policy["type"] = ALWAYS
    pull = spec.get("pullPolicy")
    if not isinstance(pull, dict):
        pull = spec["pullPolicy"] = {}
    pull.setdefault("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS)
    pull.setdefault("backoffLimit", DEFAULT_BACKOFF_LIMIT)


def default_imagepulljob(obj: Mapping[str, Any], *, create: bool) -> JSON:
    """``SetDefaultsImagePullJob``: a defaulted copy (``create`` adds the protection finalizer)."""
    out = copy.deepcopy(dict(obj))
    spec = out.setdefault("spec", {})
    _default_template(spec)
    if not spec.get("imagePullPolicy"):
        spec["imagePullPolicy"] = "IfNotPresent"
    if create:
        finalizers = out.setdefault("metadata", {}).setdefault("finalizers", [])
        if PROTECTION_FINALIZER not in finalizers:
            finalizers.append(PROTECTION_FINALIZER)
    return out


def default_imagelistpulljob(obj: Mapping[str, Any]) -> JSON:
    """``SetDefaultsImageListPullJob``: ``completionPolicy.type`` and ``pullPolicy`` only."""
    out = copy.deepcopy(dict(obj))
    _default_template(out.setdefault("spec", {}))
    return out


def default_nodeimage(obj: Mapping[str, Any], now: str) -> JSON:
    """``SetDefaultsNodeImage`` plus the webhook's sort: ``now`` is RFC 3339."""
    out = copy.deepcopy(dict(obj))
    for image in ((out.get("spec") or {}).get("images") or {}).values():
        tags = image.get("tags") or []
        for tag in tags:
            if not tag.get("createdAt"):
                tag["createdAt"] = now
            pull = tag.get("pullPolicy")
            if not isinstance(pull, dict):
                pull = tag["pullPolicy"] = {}
            pull.setdefault("timeoutSeconds", DEFAULT_TIMEOUT_SECONDS)
            pull.setdefault("backoffLimit", DEFAULT_BACKOFF_LIMIT)
        if tags:
            tags.sort(key=lambda t: str(t.get("tag", "")))
    for status in ((out.get("status") or {}).get("imageStatuses") or {}).values():
        if status.get("tags"):
            status["tags"].sort(key=lambda t: str(t.get("tag", "")))
    return out


def _selector_errors(spec: Mapping[str, Any]) -> str | None:
    selector = spec.get("selector")
    if selector is not None:
        if selector.get("matchLabels") is not None or selector.get("matchExpressions") is not None:
            if selector.get("names") is not None:
                return "can not set both names and labelSelector in this spec.selector"
            if (err := selector_error(selector)) is not None:
                return f"invalid selector: {err}"
        names = selector.get("names")
        if names is not None and len(set(names)) != len(names):
            return "duplicated name in selector names"
    pod_selector = spec.get("podSelector")
    if pod_selector is not None:
        if selector is not None:
            return "can not set both selector and podSelector"
        if (err := selector_error(pod_selector)) is not None:
            return f"invalid podSelector: {err}"
    return None


def _image_error(image: str) -> str | None:
    try:
        name_and_tag(image)
    except InvalidReferenceError as err:
        return f"invalid image {image}: {err}"
    return None


def validate_imagepulljob(obj: Mapping[str, Any]) -> str | None:
    """The ImagePullJob validating webhook's verdict: None, or the first error's message."""
    spec = obj.get("spec") or {}
    if (err := _selector_errors(spec)) is not None:
        return err
    image = spec.get("image") or ""
    if not image:
        return "image can not be empty"
    if (err := _image_error(image)) is not None:
        return err
    timeout = (spec.get("pullPolicy") or {}).get("timeoutSeconds")
    timeout = DEFAULT_TIMEOUT_SECONDS if timeout is None else timeout
    policy = spec.get("completionPolicy") or {}
    kind = policy.get("type") or ""
    if kind == ALWAYS:
        deadline = policy.get("activeDeadlineSeconds")
        if deadline is not None and timeout > deadline:
            return (
                "completionPolicy.activeDeadlineSeconds must be greater than "
                "pullPolicy.timeoutSeconds(default 600)"
            )
    elif kind == NEVER:
        if (
            policy.get("activeDeadlineSeconds") is not None
            or policy.get("ttlSecondsAfterFinished") is not None
        ):
            return NEVER_ONLY_ALWAYS
    else:
        return f"unknown type of completionPolicy: {kind}"
    return None


def validate_imagelistpulljob(obj: Mapping[str, Any]) -> str | None:
    """The ImageListPullJob validating webhook's verdict: None, or the first error's message."""
    spec = obj.get("spec") or {}
    if (err := _selector_errors(spec)) is not None:
        return err
    images = list(spec.get("images") or [])
    if not images:
        return "image can not be empty"
    if len(set(images)) != len(images):
        return "images cannot have duplicate values"
    if len(images) > MAX_IMAGES_PER_LIST:
        return "the maximum number of images cannot > 255"
    for image in images:
        if (err := _image_error(image)) is not None:
            return err
    policy = spec.get("completionPolicy") or {}
    kind = policy.get("type") or ""
    if kind == NEVER:
        if (
            policy.get("activeDeadlineSeconds") is not None
            or policy.get("ttlSecondsAfterFinished") is not None
        ):
            return NEVER_ONLY_ALWAYS
    elif kind != ALWAYS:
        return f"unknown type of completionPolicy: {kind}"
    return None


def validate_nodeimage(obj: Mapping[str, Any]) -> str | None:
    """The NodeImage validating webhook's verdict (names in messages are ``<image>/<tag>``, as
    upstream formats them)."""
    images = (obj.get("spec") or {}).get("images") or {}
    if len(images) > MAX_IMAGES_PER_NODE:
        return f"spec images length {len(images)} can not be more than {MAX_IMAGES_PER_NODE}"
    for name, image in images.items():
        if not name:
            return "image name can not be empty"
        seen: set[str] = set()
        for tag in (image or {}).get("tags") or ():
            value = tag.get("tag") or ""
            if not value:
                return f"tag for image {name} can not be empty"
            if value in seen:
                return f"duplicated tag {value} for image {name}"
            seen.add(value)
            full = f"{name}/{value}"
            if not tag.get("createdAt"):
                return f"createAt field for {full} can not be empty"
            if (tag.get("version") or 0) < 0:
                return f"version for {full} can not be less than 0"
            if tag.get("pullPolicy") is None:
                return f"pullPolicy field for {full} must set"
            if tag["pullPolicy"].get("ttlSecondsAfterFinished") is None:
                return f"pullPolicy.ttlSecondsAfterFinished for {full} must set"
    return None
