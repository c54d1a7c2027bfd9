"""One pull worker per active tag: upstream's ``pullWorker`` over the CRI port.

A worker reports its tag's state through ``report`` at each step, exactly as upstream's does:

1. ``Waiting`` (with the spec ``version``) as soon as it exists: it may queue behind the
   daemon's ``--max-workers-for-pull-image`` limit (``limit``, a semaphore shared by all);
2. ``Pulling`` with ``startTime`` once it runs;
3. up to ``1 + backoffLimit`` attempts, each bounded by ``timeoutSeconds`` and by what is left of
   ``activeDeadlineSeconds`` (counted from ``startTime``); between attempts it sleeps 1 s,
   doubling to at most 30 s. With ``imagePullPolicy: IfNotPresent`` an image the runtime already
   holds succeeds at once (progress 100, no pull). Each attempt tries the matching pull
   credentials in turn, or pulls anonymously when none matched (upstream's order);
4. ``Succeeded`` (``progress`` 100, ``imageID`` ``repo@<image id>``) or ``Failed`` with the last
   error as ``message`` ("pulling exceeds the activeDeadlineSeconds" when the deadline cut it),
   both with ``completionTime``; an Event ``PullImageSucceed``/``PullImageFailed`` (the latter
   also on every owner ImagePullJob) through ``on_finished``.

A stopped worker (:meth:`PullWorker.stop`) cancels its pull and reports nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime

from kruise.core.api import format_time
from kruise.daemon.cri.port import CriError, CriRuntime, CriTimeoutError, PullAuth
from kruise.daemon.imagepuller.plan import FAILED, PULLING, SUCCEEDED, WAITING, TagJob, TagKey, TagState

__all__ = ["MAX_BACKOFF", "PullWorker", "Report"]

log = logging.getLogger("kruise.daemon.imagepuller")

MAX_BACKOFF = 30.0
"""Seconds: the longest sleep between two attempts (upstream's ``maxBackoff``)."""
DEADLINE_MESSAGE = "pulling exceeds the activeDeadlineSeconds"

Report = Callable[[TagKey, TagState], None]
"""Called with each new state of a tag (from the event loop; must not block)."""
Finished = Callable[[TagJob, TagState, float], None]
"""Called once with the final state and the seconds the pull took."""


def _utcnow() -> datetime:
    return datetime.now(UTC)


class PullWorker:
    """Pulls ``job`` through ``cri`` with ``auths`` (credentials to try in turn; none: an anonymous
    pull) and reports each state to ``report``."""

    def __init__(
        self,
        job: TagJob,
        cri: CriRuntime,
        auths: Sequence[PullAuth],
        report: Report,
        *,
        limit: asyncio.Semaphore | None = None,
        on_finished: Finished | None = None,
        now: Callable[[], datetime] = _utcnow,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        first_backoff: float = 1.0,
    ) -> None:
        self.job = job
        self._cri = cri
        self._auths = tuple(auths)
        self._report = report
        self._limit = limit
        self._on_finished = on_finished
        self._now = now
        self._sleep = sleep
        self._first_backoff = first_backoff
        self._active = True
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Report ``Waiting`` and run in the background."""
        self._emit(TagState(tag=self.job.tag, phase=WAITING, version=self.job.version))
        self._task = asyncio.get_running_loop().create_task(self._queued(), name=f"pull {self.job.image}")

    async def stop(self) -> None:
        """Cancel the pull; nothing is reported after this returns."""
        self._active = False
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    def _emit(self, state: TagState) -> None:
        if self._active:
            self._report(self.job.key, state)

    async def _queued(self) -> None:
        try:
            if self._limit is None:
                await self.run()
            else:
                async with self._limit:
                    await self.run()
        except asyncio.CancelledError:
            raise
        except Exception:  # a worker must never die silently: report it Failed
            log.exception("pull worker for %s crashed", self.job.image)

    async def run(self) -> TagState:
        """Pull with retries and report the final state (also returned)."""
        job = self.job
        started = self._now()
        t0 = time.monotonic()
        start_time = format_time(started)
        self._emit(TagState(tag=job.tag, phase=PULLING, version=job.version, start_time=start_time))
        deadline = None if job.active_deadline is None else t0 + job.active_deadline
        step = self._first_backoff
        error = ""
        for attempt in range(job.backoff_limit + 1):
            budget = job.timeout
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    error = DEADLINE_MESSAGE
                    break
                budget = min(budget, left)
            try:
                image_id = await self._attempt(budget)
            except CriError as err:
                error = str(err)
                log.warning("pulling %s failed (attempt %d of %d): %s", job.image, attempt + 1,
                            job.backoff_limit + 1, error)  # fmt: skip
                if attempt < job.backoff_limit:
                    await self._sleep(step)
                    step = min(2 * step, MAX_BACKOFF)
                continue
            final = TagState(
                tag=job.tag, phase=SUCCEEDED, version=job.version, progress=100, start_time=start_time,
                completion_time=format_time(self._now()), image_id=image_id,
            )  # fmt: skip
            return self._finish(final, t0)
        final = TagState(
            tag=job.tag, phase=FAILED, version=job.version, start_time=start_time,
            completion_time=format_time(self._now()), message=error,
        )  # fmt: skip
        return self._finish(final, t0)

    def _finish(self, final: TagState, t0: float) -> TagState:
        self._emit(final)
        if self._active and self._on_finished is not None:
            self._on_finished(self.job, final, time.monotonic() - t0)
        return final

    async def _attempt(self, budget: float) -> str:
        """One attempt within ``budget`` seconds; returns ``repo@<image id>`` ("" if the runtime
        cannot say). Raises the last :class:`CriError`."""
        job = self.job
        try:
            async with asyncio.timeout(budget):
                return await self._pull(job)
        except TimeoutError:
            message = f"pulling image {job.image} is canceled"
            raise CriTimeoutError(message, code="DEADLINE_EXCEEDED") from None

    async def _pull(self, job: TagJob) -> str:
        if job.image_pull_policy == "IfNotPresent":
            present = await self._cri.image_status(job.image)
            if present is not None:
                log.info("image %s is already present", job.image)
                return f"{job.repo}@{present.id}"
        last: CriError | None = None
        # upstream (imageruntime/cri.go): the matching credentials in turn, and anonymously only
        # when none matched; a pull every credential failed is not retried without one
        for auth in self._auths or (None,):
            try:
                await self._cri.pull_image(job.image, auth=auth, sandbox_config=job.sandbox_config)
                break
            except CriError as err:
                last = err
        else:
            assert last is not None
            raise last
        image = await self._cri.image_status(job.image)
        return f"{job.repo}@{image.id}" if image is not None else ""
