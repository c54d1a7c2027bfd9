"""The admission.k8s.io/v1 AdmissionReview request and response, as data."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

JSON = dict[str, Any]


@dataclass(frozen=True)
class AdmissionRequest:
    """The parts of ``AdmissionReview.request`` handlers use."""

    uid: str
    operation: str  # CREATE, UPDATE, DELETE, CONNECT
    kind: str
    namespace: str | None
    name: str | None
    object: JSON | None
    old_object: JSON | None
    dry_run: bool
    user: str
    raw: JSON = field(repr=False, default_factory=dict)

    @classmethod
    def from_review(cls, review: JSON) -> AdmissionRequest:
        req = review.get("request") or {}
        return cls(
            uid=str(req.get("uid", "")),
            operation=str(req.get("operation", "")),
            kind=str((req.get("kind") or {}).get("kind", "")),
            namespace=req.get("namespace"),
            name=req.get("name"),
            object=req.get("object"),
            old_object=req.get("oldObject"),
            dry_run=bool(req.get("dryRun")),
            user=str((req.get("userInfo") or {}).get("username", "")),
            raw=req,
        )


@dataclass(frozen=True)
class AdmissionResponse:
    """Allowed or denied (``code``/``message``, as controller-runtime's
    ``admission.Errored``/``Denied``), optionally with a JSON patch for mutations."""

    allowed: bool
    message: str = ""
    code: int = 200
    reason: str = ""
    patch: list[JSON] | None = None
    warnings: tuple[str, ...] = ()

    @classmethod
    def allow(cls, patch: list[JSON] | None = None) -> AdmissionResponse:
        return cls(True, patch=patch or None)

    @classmethod
    def deny(cls, message: str, code: int = 422, reason: str = "Invalid") -> AdmissionResponse:
        return cls(False, message=message, code=code, reason=reason)

    def to_review(self, uid: str) -> JSON:
        response: JSON = {"uid": uid, "allowed": self.allowed}
        if not self.allowed or self.message:
            status: JSON = {"code": self.code, "message": self.message}
            if self.reason:
                status["reason"] = self.reason
            response["status"] = status
        if self.patch:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(orjson.dumps(self.patch)).decode()
        if self.warnings:
            response["warnings"] = list(self.warnings)
        return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


Handler = Callable[[AdmissionRequest], Awaitable[AdmissionResponse]]
