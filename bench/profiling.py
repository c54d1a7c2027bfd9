"""Where a benchmarked process spends its time: a py-spy profile and metric snapshots.

:func:`profiled` wraps the measured phase of a benchmark. With ``out`` set it starts
``py-spy record`` on ``pid`` (speedscope JSON; ``--idle`` off: samples of the threads on CPU;
``--nolineno``, since py-spy 0.4.0 panics reading some Python 3.11 line tables), and writes the
process's ``/metrics`` (and the API server's, when a getter is given) before and after, as
``process.before.txt`` / ``process.after.txt`` (``apiserver.*``). Work-queue waits
(``workqueue_queue_duration_seconds``), reconcile times, REST request latencies and the API
server's admission-webhook latencies (``apiserver_admission_webhook_admission_duration_seconds``)
are read from their difference (:func:`summary`). py-spy is ``$PY_SPY`` or ``py-spy`` on
``PATH`` (``pip download py-spy`` gives a wheel with the binary); without it only the snapshots
are taken.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path


def _py_spy() -> str | None:
    return os.environ.get("PY_SPY") or shutil.which("py-spy")


def _snapshot(out: Path, stage: str, metrics_url: str | None, apiserver: Callable[[], str] | None) -> None:
    if metrics_url:
        with urllib.request.urlopen(metrics_url, timeout=10) as answer:
            (out / f"process.{stage}.txt").write_bytes(answer.read())
    if apiserver is not None:
        (out / f"apiserver.{stage}.txt").write_text(apiserver())


@contextlib.contextmanager
def profiled(
    out: Path | None,
    pid: int,
    *,
    metrics_url: str | None = None,
    apiserver: Callable[[], str] | None = None,
    rate: int = 50,
) -> Iterator[None]:
    """Profile ``pid`` and snapshot metrics around the block when ``out`` (a directory) is set;
    a no-op otherwise. The profile is ``out/profile.speedscope.json`` (open it at speedscope.app
    or read it with ``py-spy``'s ``--format raw`` instead)."""
    if out is None:
        yield
        return
    out.mkdir(parents=True, exist_ok=True)
    _snapshot(out, "before", metrics_url, apiserver)
    spy = _py_spy()
    proc = None
    if spy:
        argv = [spy, "record", "--pid", str(pid), "--rate", str(rate), "--nonblocking", "--nolineno"]
        argv += ["--format", "speedscope", "-o", str(out / "profile.speedscope.json")]
        log = (out / "py-spy.log").open("wb")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield
    finally:
        _snapshot(out, "after", metrics_url, apiserver)
        if proc is not None:
            proc.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()


# ---------------------------------------------------------------------- reading
Sample = tuple[str, tuple[tuple[str, str], ...]]
READ = {
    "process": (
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "controller_runtime_reconcile_time_seconds",
        "rest_client_request_duration_seconds",
        "controller_runtime_webhook_latency_seconds",
    ),
    "apiserver": ("apiserver_admission_webhook_admission_duration_seconds",),
}
"""Histograms read from each snapshot pair, with the label that splits them."""


def _histograms(text: str, names: tuple[str, ...]) -> dict[Sample, float]:
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[Sample, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name not in names:
            continue
        for sample in family.samples:
            if sample.name.endswith(("_sum", "_count")):
                labels = tuple(sorted((k, v) for k, v in sample.labels.items() if k != "le"))
                out[(sample.name, labels)] = out.get((sample.name, labels), 0.0) + sample.value
    return out


def summary(out: Path) -> list[str]:
    """``python bench/profiling.py DIR``: per histogram and label set, the observations and their
    mean (ms) between the two snapshots."""
    lines: list[str] = []
    for source, names in READ.items():
        before, after = out / f"{source}.before.txt", out / f"{source}.after.txt"
        if not (before.exists() and after.exists()):
            continue
        b, a = _histograms(before.read_text(), names), _histograms(after.read_text(), names)
        for (name, labels), total in sorted(a.items()):
            if not name.endswith("_sum"):
                continue
            count = a.get((name[:-4] + "_count", labels), 0.0) - b.get((name[:-4] + "_count", labels), 0.0)
            if count <= 0:
                continue
            spent = total - b.get((name, labels), 0.0)
            label = ",".join(f"{k}={v}" for k, v in labels)
            lines.append(
                f"{source} {name[:-4]} {{{label}}}: n={count:.0f} mean={spent / count * 1000:.1f} ms"
            )
    return lines


if __name__ == "__main__":
    import sys

    for line in summary(Path(sys.argv[1])):
        print(line)
