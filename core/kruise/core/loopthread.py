"""An asyncio event loop on its own thread, for work that must not queue behind another loop.

The manager's main loop decodes every watch event of its informers and runs the controllers;
during a burst of pod creations that is a queue of tens of milliseconds. The admission webhooks
are served from a :class:`LoopThread` instead, so an AdmissionReview is read, judged and answered
without waiting for that queue (it still shares the GIL, which the interpreter hands over at
least every ``sys.getswitchinterval()`` seconds).

Rules for what runs there: a coroutine given to :meth:`LoopThread.call` runs on the thread's
loop, so it may only use objects that are safe to share between threads (the informer stores'
reads, prometheus-client metrics, immutable data) or that belong to that loop alone (an
:class:`aiohttp` server or client session first used there). Cancelling the caller cancels the
coroutine on the thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread", "LoopThreadError"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class LoopThreadError(RuntimeError):
    """The thread's loop is not running (not started, or stopped)."""


class LoopThread:
    """One daemon thread running one event loop, from :meth:`start` until :meth:`stop`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._running = threading.Event()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The thread's loop. Raises :class:`LoopThreadError` when it is not running."""
        if self._loop is None or not self._running.is_set():
            raise LoopThreadError(f"loop thread {self.name} is not running")
        return self._loop

    def start(self) -> None:
        """Start the thread and return once its loop runs. Starting twice is an error."""
        if self._thread is not None:
            raise LoopThreadError(f"loop thread {self.name} started twice")
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        self._running.wait()

    def _run(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        loop.call_soon(self._running.set)
        try:
            loop.run_forever()
        finally:
            self._running.clear()
            try:
                _cancel_all(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the thread's loop and await its result (or exception) here.

        Raises:
            LoopThreadError: the loop is not running (``coro`` is closed unawaited).
        """
        try:
            loop = self.loop
        except LoopThreadError:
            coro.close()
            raise
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, loop)
        return await asyncio.wrap_future(future)

    async def stop(self) -> None:
        """Stop the loop (tasks still on it are cancelled and awaited) and join the thread.
        A no-op when not started or already stopped."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        if self._running.is_set():
            loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join)
        self._thread = None
        self._loop = None


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left on ``loop`` and let it finish (as ``asyncio.run`` does)."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    if not tasks:
        return
    results = loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    for task, result in zip(tasks, results, strict=True):
        if isinstance(result, Exception) and not task.cancelled():
            log.error("task %s failed while its loop thread stopped", task.get_name(), exc_info=result)
