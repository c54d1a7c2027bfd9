"""The CRI port: what the node daemon asks of a container runtime, in our own types and errors.

Upstream's kruise-daemon talks CRI v1 (``k8s.io/cri-api/pkg/apis/runtime/v1``) to the node's
runtime and uses only: the image service's ``PullImage``, ``ListImages`` and ``ImageStatus``,
and the runtime service's ``Version``, ``ListContainers``, ``ContainerStatus``,
``StopContainer`` and ``ExecSync`` (``K:pkg/daemon/criruntime``). This module is that surface as
a small :class:`CriRuntime` Protocol; the one adapter over the generated grpc stubs lives in
:mod:`kruise.daemon.cri.grpcclient`, and one contract suite (``tests/integration/realnode``)
runs it against a real containerd.

Times are Unix nanoseconds as CRI reports them (0: not yet); durations are seconds.
Errors are :class:`CriError` subclasses, which are also :class:`~kruise.core.errors.TransientError`
or :class:`~kruise.core.errors.PermanentError`, so the work queue's retry rules apply as is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from kruise.core.errors import KruiseError, PermanentError, TransientError

__all__ = [
    "ContainerState",
    "CriContainer",
    "CriError",
    "CriImage",
    "CriNotFoundError",
    "CriPullError",
    "CriRuntime",
    "CriTimeoutError",
    "CriUnavailableError",
    "CriUnsupportedError",
    "ExecResult",
    "PullAuth",
    "RuntimeVersion",
]


class CriError(KruiseError):
    """Any failure of a CRI call; ``code`` is the grpc status code name (``"UNAVAILABLE"``)."""

    def __init__(self, message: str, *, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class CriUnavailableError(CriError, TransientError):
    """The runtime's socket is missing or does not answer (grpc UNAVAILABLE)."""


class CriTimeoutError(CriError, TransientError):
    """The call outlived its deadline (grpc DEADLINE_EXCEEDED), e.g. a pull past ``timeoutSeconds``."""


class CriNotFoundError(CriError, PermanentError):
    """The container or image named does not exist (grpc NOT_FOUND)."""


class CriPullError(CriError, PermanentError):
    """The runtime refused a pull: no such image or tag, unauthorized, bad reference, registry
    unreachable (containerd answers UNKNOWN for all of these; the message says which)."""


class CriUnsupportedError(CriError, PermanentError):
    """The runtime speaks another CRI API version than ``v1`` (upstream checks ``0.1.0``)."""


class ContainerState(StrEnum):
    """CRI ``ContainerState`` names, without the ``CONTAINER_`` prefix."""

    CREATED = "CREATED"
    RUNNING = "RUNNING"
    EXITED = "EXITED"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True)
class RuntimeVersion:
    """``Version``'s answer: ``version`` is the CRI API version (``0.1.0``), ``runtime_api_version``
    is ``v1``."""

    version: str
    runtime_name: str
    runtime_version: str
    runtime_api_version: str


@dataclass(frozen=True)
class PullAuth:
    """Registry credentials for one pull (CRI ``AuthConfig``), as resolved from a
    ``kubernetes.io/dockerconfigjson`` or ``dockercfg`` Secret."""

    username: str = ""
    password: str = ""
    auth: str = ""
    server_address: str = ""
    identity_token: str = ""
    registry_token: str = ""


@dataclass(frozen=True)
class CriImage:
    """One image the runtime holds: ``id`` is its config digest (``sha256:...``, what ``PullImage``
    answers and upstream's NodeImage ``imageID`` carries after ``repo@``); a pod status's
    ``imageID`` is a repo digest instead (``repo@sha256:...``, :attr:`CriContainer.image_ref`);
    ``size`` in bytes."""

    id: str
    repo_tags: tuple[str, ...] = ()
    repo_digests: tuple[str, ...] = ()
    size: int = 0


@dataclass(frozen=True)
class CriContainer:
    """One container (any attempt) as ``ListContainers``/``ContainerStatus`` report it.

    ``name`` is the container's name in the pod spec and ``pod_*`` the pod's identity, read
    from the kubelet's labels (``io.kubernetes.container.name``, ``io.kubernetes.pod.uid`` ...).
    ``exit_code``, ``started_at``, ``finished_at``, ``reason`` and ``message`` are filled only by
    ``ContainerStatus`` (``ListContainers`` does not carry them: 0 and "").
    """

    id: str
    pod_sandbox_id: str
    name: str
    attempt: int
    state: ContainerState
    image: str
    image_ref: str
    created_at: int
    pod_uid: str = ""
    pod_name: str = ""
    pod_namespace: str = ""
    started_at: int = 0
    finished_at: int = 0
    exit_code: int = 0
    reason: str = ""
    message: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ExecResult:
    """``ExecSync``'s answer: the command's output and exit code."""

    stdout: bytes
    stderr: bytes
    exit_code: int


class CriRuntime(Protocol):
    """A container runtime reached through CRI v1 (one node's containerd or CRI-O)."""

    async def version(self) -> RuntimeVersion:
        """The runtime's versions. Raises :class:`CriUnavailableError`."""
        ...

    async def pull_image(
        self,
        image: str,
        *,
        auth: PullAuth | None = None,
        sandbox_config: Mapping[str, object] | None = None,
        timeout: float | None = None,
    ) -> str:
        """Pull ``image`` (``repo:tag`` or ``repo@digest``) and return its image reference (the
        ``sha256:`` id CRI answers). ``sandbox_config`` is the ImagePullJob's ``sandboxConfig``
        (``labels``, ``annotations``), passed on as CRI's ``PodSandboxConfig`` metadata.
        Raises :class:`CriPullError`, :class:`CriTimeoutError` (after ``timeout`` seconds) or
        :class:`CriUnavailableError`."""
        ...

    async def list_images(self) -> list[CriImage]:
        """Every image the runtime holds."""
        ...

    async def image_status(self, image: str) -> CriImage | None:
        """The image ``image`` names (tag, digest or id), or None when the runtime lacks it."""
        ...

    async def list_containers(self, *, pod_uid: str | None = None) -> list[CriContainer]:
        """Every container (running and exited), or only those of the pod ``pod_uid``."""
        ...

    async def container_status(self, container_id: str) -> CriContainer:
        """One container in full. Raises :class:`CriNotFoundError`."""
        ...

    async def stop_container(self, container_id: str, timeout: int) -> None:
        """Stop the container: SIGTERM, then SIGKILL after ``timeout`` seconds (CRI
        ``StopContainer``). Stopping an exited container succeeds. Raises :class:`CriNotFoundError`."""
        ...

    async def exec_sync(self, container_id: str, cmd: Sequence[str], timeout: int) -> ExecResult:
        """Run ``cmd`` in the running container and wait up to ``timeout`` seconds (0: no limit).
        A non-zero exit code is a result, not an error. Raises :class:`CriNotFoundError`,
        :class:`CriTimeoutError`."""
        ...

    async def close(self) -> None:
        """Close the channel."""
        ...
