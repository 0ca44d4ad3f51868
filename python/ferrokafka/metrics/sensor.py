"""A sensor: values recorded over time, read as avg, max, rate and total over a window.

As the Java client's metrics: two samples of 30 s each; a windowed stat reads the samples not
older than the window (60 s). A rate divides by the time the samples cover, at least one
sample's length, so a sensor that has just started does not report a burst as a huge rate.
Recording is a few additions (callers record per batch or response, never per record).
"""

from __future__ import annotations

import math
import time

SAMPLE_SECONDS = 30.0
"""One sample's length (the Java client's ``metrics.sample.window.ms``, 30 s)."""


class Sensor:
    """Values recorded in two rolling samples, plus all-time totals."""

    __slots__ = (
        "_cur_count",
        "_cur_max",
        "_cur_start",
        "_cur_sum",
        "_prev_count",
        "_prev_max",
        "_prev_start",
        "_prev_sum",
        "_window",
        "count",
        "total",
    )

    def __init__(self, sample_seconds: float = SAMPLE_SECONDS, now: float | None = None) -> None:
        start = time.monotonic() if now is None else now
        self._window = sample_seconds
        self._cur_start = start
        self._cur_count = 0
        self._cur_sum = 0.0
        self._cur_max = -math.inf
        self._prev_start = start - sample_seconds  # empty, and too old to count soon
        self._prev_count = 0
        self._prev_sum = 0.0
        self._prev_max = -math.inf
        self.count = 0
        """Values recorded, all time."""
        self.total = 0.0
        """Their sum, all time."""

    def record(self, value: float = 1.0, now: float | None = None) -> None:
        if now is None:
            now = time.monotonic()
        if now - self._cur_start >= self._window:
            self._roll(now)
        self._cur_count += 1
        self._cur_sum += value
        if value > self._cur_max:
            self._cur_max = value
        self.count += 1
        self.total += value

    def _roll(self, now: float) -> None:
        if now - self._cur_start < 2 * self._window:
            self._prev_start = self._cur_start
            self._prev_count = self._cur_count
            self._prev_sum = self._cur_sum
            self._prev_max = self._cur_max
        else:  # idle for more than a sample: the current one is too old to keep
            self._prev_start = now - self._window
            self._prev_count = 0
            self._prev_sum = 0.0
            self._prev_max = -math.inf
        self._cur_start = now
        self._cur_count = 0
        self._cur_sum = 0.0
        self._cur_max = -math.inf

    def _samples(self, now: float) -> tuple[int, float, float, float]:
        """(count, sum, max, start of the oldest sample) of the samples still in the window."""
        expire = 2 * self._window
        count, total, top, oldest = 0, 0.0, -math.inf, now
        if now - self._prev_start < expire:
            count, total, top, oldest = (
                self._prev_count,
                self._prev_sum,
                self._prev_max,
                self._prev_start,
            )
        if now - self._cur_start < expire:
            count += self._cur_count
            total += self._cur_sum
            top = max(top, self._cur_max)
            oldest = min(oldest, self._cur_start)
        return count, total, top, oldest

    def avg(self, now: float) -> float:
        """Mean of the values in the window; NaN when none."""
        count, total, _, _ = self._samples(now)
        return total / count if count else math.nan

    def max(self, now: float) -> float:
        """Largest value in the window; NaN when none."""
        count, _, top, _ = self._samples(now)
        return top if count else math.nan

    def _elapsed(self, now: float, oldest: float) -> float:
        elapsed = now - oldest
        if elapsed < self._window:
            # As the Java client: never less than one whole sample (samples - 1 of them).
            elapsed += self._window * (1 - int(elapsed // self._window))
        return elapsed

    def rate(self, now: float) -> float:
        """Sum of the values in the window per second (bytes/s, records/s)."""
        _, total, _, oldest = self._samples(now)
        return total / self._elapsed(now, oldest)

    def count_rate(self, now: float) -> float:
        """Values recorded in the window per second (requests/s, fetches/s)."""
        count, _, _, oldest = self._samples(now)
        return count / self._elapsed(now, oldest)
