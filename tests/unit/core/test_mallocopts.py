"""The manager pins glibc's mmap threshold unless the user chose one."""

from __future__ import annotations

from kruise.core.mallocopts import M_MMAP_THRESHOLD, MMAP_THRESHOLD, pin_mmap_threshold


def test_the_threshold_is_pinned_at_128_kib() -> None:
    calls: list[tuple[int, int]] = []

    def mallopt(param: int, value: int) -> int:
        calls.append((param, value))
        return 1

    assert pin_mmap_threshold({}, mallopt) is True
    assert calls == [(M_MMAP_THRESHOLD, MMAP_THRESHOLD)] == [(-3, 131072)]


def test_a_threshold_chosen_by_the_user_is_left_alone() -> None:
    calls: list[tuple[int, int]] = []
    assert (
        pin_mmap_threshold({"MALLOC_MMAP_THRESHOLD_": "65536"}, lambda p, v: calls.append((p, v)) or 1)
        is False
    )
    assert calls == []


def test_a_refusal_is_reported() -> None:
    assert pin_mmap_threshold({}, lambda p, v: 0) is False


def test_the_real_glibc_accepts_it() -> None:
    assert pin_mmap_threshold({}) is True  # the test image runs on glibc (Debian)
