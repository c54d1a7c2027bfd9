"""A pull worker's steps, retries, deadlines and credentials (a scripted CRI stands in for the
runtime; the real one is exercised on the real node)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from kruise.daemon.cri.port import CriContainer, CriImage, CriPullError, ExecResult, PullAuth, RuntimeVersion
from kruise.daemon.imagepuller.plan import TagJob, TagKey, TagState
from kruise.daemon.imagepuller.worker import DEADLINE_MESSAGE, PullWorker

REPO = "kruise.local/busybox"


class ScriptedCri:
    """Answers ``pull_image`` from ``outcomes`` in turn (an exception or a delay in seconds)."""

    def __init__(self, outcomes: Sequence[Exception | float] = (), present: bool = False) -> None:
        self.outcomes = list(outcomes)
        self.present = present
        self.pulls: list[tuple[str, PullAuth | None]] = []

    async def version(self) -> RuntimeVersion:
        return RuntimeVersion("0.1.0", "scripted", "1", "v1")

    async def pull_image(
        self,
        image: str,
        *,
        auth: PullAuth | None = None,
        sandbox_config: Mapping[str, object] | None = None,
        timeout: float | None = None,
    ) -> str:
        self.pulls.append((image, auth))
        outcome = self.outcomes.pop(0) if self.outcomes else 0.0
        if isinstance(outcome, Exception):
            raise outcome
        await asyncio.sleep(outcome)
        self.present = True
        return "sha256:abc"

    async def list_images(self) -> list[CriImage]:
        return [CriImage("sha256:abc", (f"{REPO}:v1",))] if self.present else []

    async def image_status(self, image: str) -> CriImage | None:
        return CriImage("sha256:abc", (image,)) if self.present else None

    async def list_containers(self, *, pod_uid: str | None = None) -> list[CriContainer]:
        return []

    async def container_status(self, container_id: str) -> CriContainer:
        raise NotImplementedError

    async def stop_container(self, container_id: str, timeout: int) -> None:
        raise NotImplementedError

    async def exec_sync(self, container_id: str, cmd: Sequence[str], timeout: int) -> ExecResult:
        raise NotImplementedError

    async def close(self) -> None:
        return None


class Recorder:
    def __init__(self) -> None:
        self.states: list[TagState] = []
        self.sleeps: list[float] = []

    def report(self, key: TagKey, state: TagState) -> None:
        self.states.append(state)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    @property
    def phases(self) -> list[str]:
        return [s.phase for s in self.states]


def worker(job: TagJob, cri: ScriptedCri, rec: Recorder, auths: Sequence[PullAuth] = ()) -> PullWorker:
    fixed = datetime(2026, 12, 4, 3, 0, 0, tzinfo=UTC)
    return PullWorker(job, cri, auths, rec.report, now=lambda: fixed, sleep=rec.sleep)


async def test_a_pull_reports_pulling_then_succeeded_with_the_image_id() -> None:
    cri, rec = ScriptedCri(), Recorder()
    final = await worker(TagJob(REPO, "v1", version=3), cri, rec).run()
    assert rec.phases == ["Pulling", "Succeeded"]
    assert final == TagState(
        tag="v1", phase="Succeeded", version=3, progress=100, start_time="2026-12-04T03:00:00Z",
        completion_time="2026-12-04T03:00:00Z", image_id=f"{REPO}@sha256:abc",
    )  # fmt: skip
    assert cri.pulls == [(f"{REPO}:v1", None)]


async def test_if_not_present_skips_the_pull_of_an_image_the_node_has() -> None:
    cri, rec = ScriptedCri(present=True), Recorder()
    final = await worker(TagJob(REPO, "v1"), cri, rec).run()
    assert (final.phase, final.progress, cri.pulls) == ("Succeeded", 100, [])


async def test_always_pulls_even_when_present() -> None:
    cri, rec = ScriptedCri(present=True), Recorder()
    await worker(TagJob(REPO, "v1", image_pull_policy="Always"), cri, rec).run()
    assert len(cri.pulls) == 1


async def test_failures_retry_backoff_limit_times_with_doubling_sleeps_then_fail_with_the_last_error() -> (
    None
):
    errors = [CriPullError(f"not found {i}") for i in range(4)]
    cri, rec = ScriptedCri(errors), Recorder()
    final = await worker(TagJob(REPO, "nope", backoff_limit=3), cri, rec).run()
    assert len(cri.pulls) == 4  # the first attempt and three retries
    assert rec.sleeps == [1.0, 2.0, 4.0]
    assert (final.phase, final.message, final.completion_time) == (
        "Failed",
        "not found 3",
        "2026-12-04T03:00:00Z",
    )


async def test_a_retry_that_succeeds_ends_succeeded() -> None:
    cri, rec = ScriptedCri([CriPullError("registry down")]), Recorder()
    final = await worker(TagJob(REPO, "v1", backoff_limit=1), cri, rec).run()
    assert final.phase == "Succeeded" and len(cri.pulls) == 2


async def test_an_attempt_past_timeout_seconds_is_canceled() -> None:
    cri, rec = ScriptedCri([5.0]), Recorder()
    final = await worker(TagJob(REPO, "slow", timeout=0.05, backoff_limit=0), cri, rec).run()
    assert (final.phase, final.message) == ("Failed", f"pulling image {REPO}:slow is canceled")


async def test_the_active_deadline_stops_retrying() -> None:
    cri, rec = ScriptedCri([0.06, 0.06, 0.06]), Recorder()
    job = TagJob(REPO, "slow", timeout=0.05, backoff_limit=5, active_deadline=0.08)
    final = await worker(job, cri, rec).run()
    assert (final.phase, final.message) == ("Failed", DEADLINE_MESSAGE)
    assert len(cri.pulls) == 2  # the second attempt got only what was left of the deadline


async def test_matching_credentials_are_tried_in_turn_and_never_followed_by_an_anonymous_pull() -> None:
    first, second = PullAuth(username="a"), PullAuth(username="b")
    cri, rec = ScriptedCri([CriPullError("401"), CriPullError("401")]), Recorder()
    final = await worker(TagJob(REPO, "v1", backoff_limit=0), cri, rec, auths=(first, second)).run()
    assert [auth for _, auth in cri.pulls] == [first, second]
    assert (final.phase, final.message) == ("Failed", "401")
    cri, rec = ScriptedCri([CriPullError("401")]), Recorder()
    final = await worker(TagJob(REPO, "v1", backoff_limit=0), cri, rec, auths=(first, second)).run()
    assert [auth for _, auth in cri.pulls] == [first, second] and final.phase == "Succeeded"
    cri, rec = ScriptedCri(), Recorder()
    await worker(TagJob(REPO, "v1"), cri, rec).run()
    assert [auth for _, auth in cri.pulls] == [None]  # no credential matched: anonymous


async def test_start_reports_waiting_and_a_stopped_worker_reports_nothing_more() -> None:
    cri, rec = ScriptedCri([10.0]), Recorder()
    pull = worker(TagJob(REPO, "v1", version=7), cri, rec)
    pull.start()
    assert rec.states == [TagState(tag="v1", phase="Waiting", version=7)]
    await asyncio.sleep(0.01)
    assert rec.phases == ["Waiting", "Pulling"]
    await pull.stop()
    await asyncio.sleep(0.01)
    assert rec.phases == ["Waiting", "Pulling"]


async def test_the_worker_limit_queues_workers_as_waiting() -> None:
    cri, rec = ScriptedCri([0.05, 0.05]), Recorder()
    limit = asyncio.Semaphore(1)
    fixed = datetime(2026, 12, 4, tzinfo=UTC)
    workers = [
        PullWorker(
            TagJob(REPO, tag, image_pull_policy="Always"), cri, (), rec.report, limit=limit, now=lambda: fixed
        )
        for tag in ("a", "b")
    ]
    for w in workers:
        w.start()
    await asyncio.sleep(0.02)
    assert sorted((s.tag, s.phase) for s in rec.states) == [
        ("a", "Pulling"),
        ("a", "Waiting"),
        ("b", "Waiting"),
    ]
    await asyncio.sleep(0.15)
    assert [s.phase for s in rec.states if s.tag == "b"] == ["Waiting", "Pulling", "Succeeded"]
