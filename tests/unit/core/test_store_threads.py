"""The informer store read from another thread (the webhooks' loop thread) while one writer
relists: a reader sees the store before or after a relist, never half of it."""

from __future__ import annotations

import threading
import time
from typing import Any

from kruise.core.informer.store import Store

JSON = dict[str, Any]
SIZE = 3000


def generation(tag: str) -> list[JSON]:
    """SIZE objects filed under index value ``tag``, with names unique to ``tag``."""
    return [
        {"metadata": {"namespace": "ns", "name": f"{tag}-{i}", "resourceVersion": "1", "labels": {"g": tag}}}
        for i in range(SIZE)
    ]


def by_generation(obj: JSON) -> list[str]:
    return [obj["metadata"]["labels"]["g"]]


def test_a_reader_on_another_thread_never_sees_half_a_relist() -> None:
    store = Store()
    store.add_indexer("g", by_generation)
    gens = {"a": generation("a"), "b": generation("b")}
    store.replace(gens["a"])
    seen: list[tuple[int, int, int]] = []
    torn: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            everything = store.values()
            tags = {o["metadata"]["labels"]["g"] for o in everything}
            if len(everything) != SIZE or len(tags) != 1:
                torn.append(f"values: {len(everything)} objects of {sorted(tags)}")
            in_a, in_b = len(store.by_index("g", "a")), len(store.by_index("g", "b"))
            if in_a not in (0, SIZE) or in_b not in (0, SIZE):
                torn.append(f"by_index: a={in_a} b={in_b}")
            seen.append((len(everything), in_a, in_b))

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.monotonic() + 1.5
    flips = 0
    while time.monotonic() < deadline:
        store.replace(gens["b" if flips % 2 == 0 else "a"])
        flips += 1
    stop.set()
    reader.join(10)
    assert flips > 2 and len(seen) > 2
    assert torn == []
