"""The CRI port over grpc: :class:`GrpcCri`, one ``grpc.aio`` channel to a unix socket.

The stubs come from ``k8s.io/cri-api``'s ``runtime/v1`` proto, generated at build time
(``hack/gen-cri.sh`` into :mod:`kruise.daemon.cri._generated`). grpc status codes become the
port's errors: ``UNAVAILABLE`` -> :class:`CriUnavailableError`, ``DEADLINE_EXCEEDED`` ->
:class:`CriTimeoutError`, ``NOT_FOUND`` -> :class:`CriNotFoundError`; a failed ``PullImage``
(containerd answers ``NOT_FOUND`` or ``UNKNOWN`` with the registry's reason) ->
:class:`CriPullError`. Upstream's daemon checks the runtime answers ``Version`` on CRI ``v1``
(:meth:`GrpcCri.connect`) and marks the image pulls it makes with the sandbox annotation
``apps.kruise.io/pulling-image-by: kruise-daemon``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import grpc
import grpc.aio

from kruise.daemon.cri._generated import api_pb2 as pb
from kruise.daemon.cri._generated import api_pb2_grpc as pb_grpc
from kruise.daemon.cri.port import (
    ContainerState,
    CriContainer,
    CriError,
    CriImage,
    CriNotFoundError,
    CriPullError,
    CriTimeoutError,
    CriUnavailableError,
    CriUnsupportedError,
    ExecResult,
    PullAuth,
    RuntimeVersion,
)

__all__ = ["DEFAULT_TIMEOUT", "PULLING_BY_ANNOTATION", "GrpcCri", "translate"]

DEFAULT_TIMEOUT = 30.0
"""Seconds a call may take unless it says otherwise (pulls take the caller's bound instead)."""
PULLING_BY_ANNOTATION = "apps.kruise.io/pulling-image-by"
MAX_MESSAGE = 16 * 1024 * 1024
_STATES = {
    pb.CONTAINER_CREATED: ContainerState.CREATED,
    pb.CONTAINER_RUNNING: ContainerState.RUNNING,
    pb.CONTAINER_EXITED: ContainerState.EXITED,
}


def translate(err: grpc.aio.AioRpcError | grpc.RpcError, what: str, *, pulling: bool = False) -> CriError:
    """The port's error for a failed call (``what`` names it in the message)."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    details = err.details() if hasattr(err, "details") else str(err)
    name = code.name if code is not None else "UNKNOWN"
    message = f"{what}: {details}"
    if code == grpc.StatusCode.UNAVAILABLE:
        return CriUnavailableError(message, code=name)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return CriTimeoutError(message, code=name)
    if pulling:
        return CriPullError(message, code=name)
    if code == grpc.StatusCode.NOT_FOUND:
        return CriNotFoundError(message, code=name)
    return CriError(message, code=name)


def _image(image: Any) -> CriImage:
    return CriImage(
        id=image.id,
        repo_tags=tuple(image.repo_tags),
        repo_digests=tuple(image.repo_digests),
        size=int(image.size),
    )


def _container(raw: Any, *, full: bool = False) -> CriContainer:
    labels = dict(raw.labels)
    fields: dict[str, Any] = {}
    if full:
        fields = {
            "started_at": raw.started_at,
            "finished_at": raw.finished_at,
            "exit_code": raw.exit_code,
            "reason": raw.reason,
            "message": raw.message,
        }
    return CriContainer(
        id=raw.id,
        pod_sandbox_id="" if full else raw.pod_sandbox_id,
        name=labels.get("io.kubernetes.container.name", raw.metadata.name),
        attempt=int(raw.metadata.attempt),
        state=_STATES.get(raw.state, ContainerState.UNKNOWN),
        image=raw.image.image,
        image_ref=raw.image_ref,
        created_at=int(raw.created_at),
        pod_uid=labels.get("io.kubernetes.pod.uid", ""),
        pod_name=labels.get("io.kubernetes.pod.name", ""),
        pod_namespace=labels.get("io.kubernetes.pod.namespace", ""),
        labels=labels,
        annotations=dict(raw.annotations),
        **fields,
    )


class GrpcCri:
    """:class:`~kruise.daemon.cri.port.CriRuntime` over ``endpoint`` (``unix:///path``)."""

    def __init__(self, endpoint: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        options = [("grpc.max_receive_message_length", MAX_MESSAGE)]
        self._channel = grpc.aio.insecure_channel(endpoint, options=options)
        self._runtime = pb_grpc.RuntimeServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._images = pb_grpc.ImageServiceStub(self._channel)  # type: ignore[no-untyped-call]

    @classmethod
    async def connect(cls, endpoint: str, *, timeout: float = DEFAULT_TIMEOUT) -> GrpcCri:
        """A client whose runtime answered ``Version`` with CRI API ``v1``.

        Raises:
            CriUnavailableError: nothing answers on ``endpoint``.
            CriUnsupportedError: the runtime speaks another CRI API version.
        """
        client = cls(endpoint, timeout=timeout)
        try:
            version = await client.version()
        except BaseException:
            await client.close()
            raise
        if version.runtime_api_version != "v1":
            await client.close()
            raise CriUnsupportedError(
                f"{endpoint}: runtime API {version.runtime_api_version!r}, kruise-daemon speaks CRI v1",
                code="UNIMPLEMENTED",
            )
        return client

    async def version(self) -> RuntimeVersion:
        try:
            answer = await self._runtime.Version(pb.VersionRequest(version="0.1.0"), timeout=self.timeout)
        except grpc.aio.AioRpcError as err:
            raise translate(err, f"Version at {self.endpoint}") from err
        return RuntimeVersion(
            answer.version, answer.runtime_name, answer.runtime_version, answer.runtime_api_version
        )

    async def pull_image(
        self,
        image: str,
        *,
        auth: PullAuth | None = None,
        sandbox_config: Mapping[str, object] | None = None,
        timeout: float | None = None,
    ) -> str:
        sandbox = dict(sandbox_config or {})
        annotations = {str(k): str(v) for k, v in dict(sandbox.get("annotations") or {}).items()}  # type: ignore[call-overload]
        annotations[PULLING_BY_ANNOTATION] = "kruise-daemon"
        labels = {str(k): str(v) for k, v in dict(sandbox.get("labels") or {}).items()}  # type: ignore[call-overload]
        request = pb.PullImageRequest(
            image=pb.ImageSpec(image=image),
            sandbox_config=pb.PodSandboxConfig(labels=labels, annotations=annotations),
        )
        if auth is not None:
            request.auth.CopyFrom(
                pb.AuthConfig(
                    username=auth.username,
                    password=auth.password,
                    auth=auth.auth,
                    server_address=auth.server_address,
                    identity_token=auth.identity_token,
                    registry_token=auth.registry_token,
                )
            )
        try:
            answer = await self._images.PullImage(request, timeout=timeout)
        except grpc.aio.AioRpcError as err:
            raise translate(err, f"pulling image {image}", pulling=True) from err
        return str(answer.image_ref)

    async def list_images(self) -> list[CriImage]:
        try:
            answer = await self._images.ListImages(pb.ListImagesRequest(), timeout=self.timeout)
        except grpc.aio.AioRpcError as err:
            raise translate(err, "ListImages") from err
        return [_image(i) for i in answer.images]

    async def image_status(self, image: str) -> CriImage | None:
        try:
            answer = await self._images.ImageStatus(
                pb.ImageStatusRequest(image=pb.ImageSpec(image=image)), timeout=self.timeout
            )
        except grpc.aio.AioRpcError as err:
            raise translate(err, f"ImageStatus of {image}") from err
        return _image(answer.image) if answer.HasField("image") and answer.image.id else None

    async def list_containers(self, *, pod_uid: str | None = None) -> list[CriContainer]:
        selector = {"io.kubernetes.pod.uid": pod_uid} if pod_uid else {}
        request = pb.ListContainersRequest(filter=pb.ContainerFilter(label_selector=selector))
        try:
            answer = await self._runtime.ListContainers(request, timeout=self.timeout)
        except grpc.aio.AioRpcError as err:
            raise translate(err, "ListContainers") from err
        return [_container(c) for c in answer.containers]

    async def container_status(self, container_id: str) -> CriContainer:
        try:
            answer = await self._runtime.ContainerStatus(
                pb.ContainerStatusRequest(container_id=container_id), timeout=self.timeout
            )
        except grpc.aio.AioRpcError as err:
            raise translate(err, f"ContainerStatus of {container_id}") from err
        return _container(answer.status, full=True)

    async def stop_container(self, container_id: str, timeout: int) -> None:
        try:
            await self._runtime.StopContainer(
                pb.StopContainerRequest(container_id=container_id, timeout=timeout),
                timeout=self.timeout + timeout,
            )
        except grpc.aio.AioRpcError as err:
            raise translate(err, f"StopContainer {container_id}") from err

    async def exec_sync(self, container_id: str, cmd: Sequence[str], timeout: int) -> ExecResult:
        request = pb.ExecSyncRequest(container_id=container_id, cmd=list(cmd), timeout=timeout)
        try:
            answer = await self._runtime.ExecSync(
                request, timeout=(timeout + self.timeout) if timeout else None
            )
        except grpc.aio.AioRpcError as err:
            raise translate(err, f"ExecSync {list(cmd)} in {container_id}") from err
        return ExecResult(
            stdout=bytes(answer.stdout), stderr=bytes(answer.stderr), exit_code=int(answer.exit_code)
        )

    async def close(self) -> None:
        await self._channel.close()
