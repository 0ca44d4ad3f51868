"""Share-group acknowledgements (KIP-932): what a member says about each record it was given.

A member of a share group holds each record it was handed under a time-limited lock, and
answers for it by offset: ACCEPT (processed), RELEASE (give it to a member again, its delivery
count one higher), REJECT (never deliver it again: archived), RENEW (keep the lock longer,
KIP-1222). Offsets inside an acquired range that carry no record for the application (control
batches, aborted transactional data) are acknowledged as gaps, so that the broker does not
wait for their locks to expire.

On the wire a partition's acknowledgements are batches of consecutive offsets, each with one
type for all of its offsets or one type per offset; ``PartitionAcknowledgements.batches()``
makes the fewest such batches.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._native import AcknowledgementBatch

__all__ = ["GAP", "AcknowledgeType", "PartitionAcknowledgements"]

GAP = 0
"""The acknowledgement of an offset that holds no record for the application."""


class AcknowledgeType(enum.IntEnum):
    """How a share-group member answers for a record, as Java's ``AcknowledgeType``."""

    ACCEPT = 1
    """Processed: done with it."""
    RELEASE = 2
    """Not processed now: deliver it again (to any member), with a higher delivery count."""
    REJECT = 3
    """Unprocessable: archive it, never deliver it again."""
    RENEW = 4
    """Still being processed: extend its acquisition lock (KIP-1222)."""


class PartitionAcknowledgements:
    """One partition's acknowledgements not yet sent: offset -> type (the last one given for
    an offset wins)."""

    def __init__(self) -> None:
        self._types: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._types)

    def __bool__(self) -> bool:
        return bool(self._types)

    def add(self, offset: int, type_: int) -> None:
        if not GAP <= type_ <= AcknowledgeType.RENEW:
            raise ValueError(f"acknowledge type must be 0-4, got {type_!r}")
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        self._types[offset] = int(type_)

    def add_range(self, first: int, last: int, type_: int) -> None:
        """Every offset of ``first..=last``."""
        if last < first:
            raise ValueError(f"empty range {first}..{last}")
        for offset in range(first, last + 1):
            self.add(offset, type_)

    def has_renewals(self) -> bool:
        return any(t == AcknowledgeType.RENEW for t in self._types.values())

    def batches(self, *, renewals: bool | None = None) -> list[AcknowledgementBatch]:
        """The pending acknowledgements as wire batches, offsets ascending: one batch per run of
        consecutive offsets, with a single type when the run has one, else a type per offset.
        ``renewals=True``: only the RENEWs; ``False``: all but them (a request either renews
        locks or settles records, KIP-1222); None: all."""
        runs: list[list[int]] = []
        for offset in sorted(self._types):
            if renewals is not None and (self._types[offset] == AcknowledgeType.RENEW) != renewals:
                continue
            if runs and offset == runs[-1][-1] + 1:
                runs[-1].append(offset)
            else:
                runs.append([offset])
        out: list[AcknowledgementBatch] = []
        for run in runs:
            types = [self._types[o] for o in run]
            if all(t == types[0] for t in types):
                types = types[:1]
            out.append({"first_offset": run[0], "last_offset": run[-1], "acknowledge_types": types})
        return out

    def take(self, *, renewals: bool | None = None) -> list[AcknowledgementBatch]:
        """``batches(renewals=)``, and forget them (they are on their way)."""
        out = self.batches(renewals=renewals)
        for batch in out:
            for offset in range(batch["first_offset"], batch["last_offset"] + 1):
                del self._types[offset]
        return out
