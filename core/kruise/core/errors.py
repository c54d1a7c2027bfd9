"""kruise's own error vocabulary (DESIGN §3).

Adapters wrap client exceptions into these (``raise ... from``); the work queue retries a
reconcile that raised with per-key backoff.
"""

from __future__ import annotations

from typing import Any


class KruiseError(Exception):
    """Base of every error kruise raises on purpose."""


class TransientError(KruiseError):
    """Worth retrying as is: timeouts, 429, 5xx, connection resets."""


class PermanentError(KruiseError):
    """Retrying the same input cannot succeed (invalid spec, forbidden change)."""


class ReportedError(KruiseError):
    """A failure already reported to the user (a Warning Event and its log line).

    Whoever retries it (the work queue) only backs off and logs at DEBUG, so one failed attempt
    makes one Event and one log line, never a traceback.
    """


class FencedError(KruiseError):
    """A write refused before it was sent: this replica can no longer prove it holds the leader
    lease (see :class:`kruise.core.leader.LeaseFence`)."""


class ProviderError(KruiseError):
    """A traffic or metric provider failed."""


class ApiError(KruiseError):
    """An error answer from the Kubernetes API server.

    ``status`` is the HTTP code, ``reason`` the Status reason (``NotFound``,
    ``Conflict``, ``AlreadyExists``, ``Invalid``, ...), ``body`` the Status object.
    """

    def __init__(self, status: int, reason: str, message: str, body: dict[str, Any] | None = None):
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}


class NotFoundError(ApiError):
    """404."""


class ConflictError(ApiError):
    """409 with reason Conflict: a stale resourceVersion; re-read and decide again."""


class AlreadyExistsError(ApiError):
    """409 with reason AlreadyExists."""


class GoneError(ApiError):
    """410: the resourceVersion asked for was compacted (a watch must relist)."""


class InvalidError(ApiError, PermanentError):
    """422: the object was rejected by schema or admission validation."""


class ForbiddenError(ApiError, PermanentError):
    """403: RBAC or an admission webhook denied the request."""


class ServerError(ApiError, TransientError):
    """5xx or 429: retry later."""


def api_error(status: int, body: dict[str, Any] | None, text: str = "") -> ApiError:
    """The :class:`ApiError` subclass for an HTTP ``status`` and Status ``body``."""
    body = body or {}
    reason = str(body.get("reason") or "")
    message = str(body.get("message") or text or "")
    cls: type[ApiError]
    if status == 404:
        cls = NotFoundError
    elif status == 409 and reason == "AlreadyExists":
        cls = AlreadyExistsError
    elif status == 409:
        cls = ConflictError
    elif status == 410:
        cls = GoneError
    elif status == 422:
        cls = InvalidError
    elif status == 403:
        cls = ForbiddenError
    elif status == 429 or status >= 500:
        cls = ServerError
    else:
        cls = ApiError
    return cls(status, reason or str(status), message, body)
