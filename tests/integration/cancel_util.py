"""Calls cancelled at random points, for the tests that a cancelled call costs only itself."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

SEED = 35
STOP_WITHIN = 1.0
"""Seconds ``stop()`` may take after the cancellations: failure detection, not a benchmark."""


class Canceller:
    """Runs calls cancelled after a random wait, and counts how each ended."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        self.ended: Counter[str] = Counter()

    async def run(self, call: Awaitable[Any], most: float) -> Any:
        """``call``, cancelled after a random wait of up to ``most`` seconds: its result if
        it finished first, else a ``CancelledError`` instance (the caller's own cancellation
        is not swallowed). Anything else it raised is raised: a cancellation must not turn
        into another error."""
        task = asyncio.ensure_future(call)
        await asyncio.sleep(self.rng.uniform(0, most))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if task.cancelled():
            self.ended["cancelled"] += 1
            return asyncio.CancelledError()
        self.ended["done"] += 1
        return task.result()

    def both_happened(self, least: int) -> bool:
        """Whether ``least`` calls were cancelled and ``least`` others completed (a loop whose
        calls all ended one way would prove little)."""
        return self.ended["cancelled"] >= least and self.ended["done"] >= least

    async def exercise(
        self, calls: list[Callable[[], Awaitable[Any]]], rounds: int, least: int
    ) -> None:
        """At least ``rounds`` calls chosen at random, then more until ``least`` ended each
        way: how often a call beats its random cancellation depends on the machine's load, so
        the count of calls, not a time, decides when the loop has proved enough."""
        made = 0
        while made < rounds or not self.both_happened(least):
            assert made < 10 * rounds, f"after {made} calls: {dict(self.ended)}"
            await self.rng.choice(calls)()
            made += 1
