"""The algorithm of Java's ``AbstractStickyAssignor``, shared by both sticky assignors: who may keep
what they owned, then the "constrained" builder (identical subscriptions) or the "general" one,
and for cooperative-sticky the partitions held back until their owner has revoked them. The
rules are described in :mod:`.sticky_assignor`."""

from __future__ import annotations

import bisect
import logging
from collections.abc import Mapping
from typing import Any

from .....errors import IllegalStateError
from .....structs import TopicPartition
from ...subscription import ConsumerProtocolMemberMetadata, java_string_key
from ..abstract import Members
from .java_order import JavaHashOrder, java_hashmap_order, java_tp_hash
from .user_data import DEFAULT_GENERATION, MemberData, cooperative_member_data, sticky_member_data

__all__ = ["sticky_assign"]

log = logging.getLogger(__name__)


def _tp_key(tp: TopicPartition) -> tuple[bytes, int]:
    return (java_string_key(tp.topic), tp.partition)


class _StickyInput:
    """Members in Java's iteration order, their subscriptions, the partitions they may keep."""

    def __init__(
        self,
        members: Mapping[str, ConsumerProtocolMemberMetadata],
        partitions: Mapping[str, list[int]],
        member_data: Mapping[str, MemberData],
    ) -> None:
        self.partitions = partitions
        self.existing = {TopicPartition(t, p) for t, ps in partitions.items() for p in ps}
        # The leader's Java client puts members into a HashMap in JoinGroup order.
        self.order = java_hashmap_order(members)
        self.subscriptions = {m: list(members[m].subscription) for m in self.order}
        self.member_data = member_data
        self.max_generation = DEFAULT_GENERATION
        self.owned: dict[str, list[TopicPartition]] = {}
        self.multiply_claimed: set[TopicPartition] = set()
        self.all_equal = self._collect_owned(members)

    def _collect_owned(self, members: Mapping[str, ConsumerProtocolMemberMetadata]) -> bool:
        all_equal = True
        first: set[str] = set()  # the first non-empty subscription, as Java compares them
        claimed_by: dict[TopicPartition, str] = {}
        for member in self.order:
            topics = self.subscriptions[member]
            if not first:
                first = set(topics)
            elif all_equal and not (len(topics) == len(first) and first.issuperset(topics)):
                all_equal = False
            data = self.member_data[member]
            generation = DEFAULT_GENERATION if data.generation is None else data.generation
            self.max_generation = max(self.max_generation, generation)
            mine: list[TopicPartition] = []
            self.owned[member] = mine
            for tp in data.partitions:
                if tp.topic not in self.partitions:
                    continue
                if tp not in self.existing:
                    log.warning("member %s claims %s, which does not exist", member, tp)
                    continue
                other = claimed_by.get(tp)
                if other is None:
                    mine.append(tp)
                    claimed_by[tp] = member
                    continue
                other_generation = members[other].generation_id
                other_generation = other_generation if other_generation >= 0 else -1
                if generation == other_generation:
                    log.error(
                        "members %s and %s both claim %s in generation %s; neither keeps it",
                        member,
                        other,
                        tp,
                        generation,
                    )
                    self.multiply_claimed.add(tp)
                    _remove_first(self.owned[other], tp)
                    claimed_by[tp] = member
                elif generation > other_generation:
                    mine.append(tp)
                    _remove_first(self.owned[other], tp)
                    claimed_by[tp] = member
        return all_equal


def _remove_first(items: list[TopicPartition], tp: TopicPartition) -> None:
    try:
        items.remove(tp)
    except ValueError:
        pass


def _constrained(
    inp: _StickyInput,
) -> tuple[dict[str, list[TopicPartition]], dict[TopicPartition, str]]:
    """Java's ConstrainedAssignmentBuilder (every member has the same subscription).
    Returns the assignment and the partitions moving to a new owner (partition -> new owner)."""
    total = sum(len(ps) for ps in inp.partitions.values())
    n_members = len(inp.order)
    min_quota, extra_members = divmod(total, n_members)
    max_quota = min_quota + (1 if extra_members else 0)
    over_min = 0  # members given more than min_quota so far
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in inp.order}
    maybe_revoked: dict[TopicPartition, str] = {}
    transferring: dict[TopicPartition, str] = {}
    under_min: list[str] = []
    at_min: list[str] = []
    assigned: set[TopicPartition] = set()

    for member in inp.order:
        owned = sorted(inp.owned[member], key=lambda tp: (tp.partition, java_string_key(tp.topic)))
        owned = [tp for tp in owned if tp not in inp.multiply_claimed]
        mine = assignment[member]
        if len(owned) < min_quota:
            mine.extend(owned)
            assigned.update(owned)
            under_min.append(member)
        elif len(owned) >= max_quota and over_min < extra_members:
            over_min += 1
            if over_min == extra_members:
                at_min.clear()
            mine.extend(owned[:max_quota])
            assigned.update(owned[:max_quota])
            for tp in owned[max_quota:]:
                maybe_revoked[tp] = member
        else:
            mine.extend(owned[:min_quota])
            assigned.update(owned[:min_quota])
            for tp in owned[min_quota:]:
                maybe_revoked[tp] = member
            if over_min < extra_members:
                at_min.append(member)

    unassigned = [
        TopicPartition(topic, p)
        for topic in sorted(inp.partitions, key=java_string_key)
        for p in inp.partitions[topic]
        if TopicPartition(topic, p) not in assigned
    ]
    under_min.sort(key=java_string_key)
    at_min.sort(key=java_string_key)

    def give(tp: TopicPartition, member: str) -> int:
        assignment[member].append(tp)
        previous = maybe_revoked.get(tp)
        if (previous is not None and previous != member) or tp in inp.multiply_claimed:
            transferring[tp] = member
        return len(assignment[member])

    # Round robin over the members under min quota (Java iterates its LinkedList and removes
    # members as they reach min quota); once they are all filled, the members at min quota
    # take one more each, in order.
    cursor = 0
    for tp in unassigned:
        from_cursor = False
        if cursor < len(under_min):
            member = under_min[cursor]
            cursor += 1
            from_cursor = True
        elif not under_min and not at_min:
            # Cannot happen: the quotas add up to the partition count (Java throws here too).
            raise IllegalStateError(f"sticky assignor: no member left below quota for {tp}")
        elif not under_min:
            member = at_min.pop(0)
        else:
            cursor = 0
            member = under_min[cursor]
            cursor += 1
            from_cursor = True
        count = give(tp, member)
        if count == min_quota:
            if from_cursor:
                cursor -= 1
                del under_min[cursor]
            at_min.append(member)
        elif count == max_quota:
            over_min += 1
    return assignment, transferring


class _SortedMembers:
    """Java's ``TreeSet`` of members ordered by (assigned count, member id)."""

    def __init__(self, assignment: dict[str, list[TopicPartition]]) -> None:
        self._assignment = assignment
        self._items: list[tuple[int, bytes, str]] = []

    def _item(self, member: str) -> tuple[int, bytes, str]:
        return (len(self._assignment[member]), java_string_key(member), member)

    def add(self, member: str) -> None:
        item = self._item(member)
        i = bisect.bisect_left(self._items, item)
        if i == len(self._items) or self._items[i] != item:
            self._items.insert(i, item)

    def remove(self, member: str) -> None:
        item = self._item(member)
        i = bisect.bisect_left(self._items, item)
        if i < len(self._items) and self._items[i] == item:
            del self._items[i]

    def first(self) -> str:
        return self._items[0][2]

    def last(self) -> str:
        return self._items[-1][2]

    def __iter__(self) -> Any:
        return iter([m for _, _, m in self._items])

    def __bool__(self) -> bool:
        return bool(self._items)


class _PartitionMovements:
    """Java's ``PartitionMovements``: which partitions moved between which members, used to move
    a partition back rather than a second one away (keeps the result sticky)."""

    def __init__(self) -> None:
        self._moves: dict[TopicPartition, tuple[str, str]] = {}
        self._by_topic: dict[str, dict[tuple[str, str], JavaHashOrder]] = {}

    def _remove_record(self, tp: TopicPartition) -> tuple[str, str]:
        pair = self._moves.pop(tp)
        per_topic = self._by_topic[tp.topic]
        per_topic[pair].discard(tp)
        if not len(per_topic[pair]):
            del per_topic[pair]
        if not per_topic:
            del self._by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: tuple[str, str]) -> None:
        self._moves[tp] = pair
        per_topic = self._by_topic.setdefault(tp.topic, {})
        per_topic.setdefault(pair, JavaHashOrder()).add(tp, java_tp_hash(tp))

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self._moves:
            src, _dst = self._remove_record(tp)
            if src != new:
                self._add_record(tp, (src, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        per_topic = self._by_topic.get(tp.topic)
        if per_topic is None:
            return tp
        if tp in self._moves:
            old = self._moves[tp][0]
        reverse = per_topic.get((new, old))
        if reverse is None:
            return tp
        first: TopicPartition = reverse.first()
        return first


class _General:
    """Java's GeneralAssignmentBuilder (members with different subscriptions)."""

    def __init__(self, inp: _StickyInput) -> None:
        self.inp = inp
        self.partitions = inp.partitions
        self.total = sum(len(ps) for ps in inp.partitions.values())
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in inp.partitions}
        self.consumer_topics: dict[str, list[str]] = {}
        for member in inp.order:
            topics = [t for t in inp.subscriptions[member] if t in inp.partitions]
            self.consumer_topics[member] = topics
            for t in topics:
                self.topic_consumers[t].append(member)
        self.current: dict[str, list[TopicPartition]] = {m: inp.owned[m] for m in inp.order}
        self.owner: dict[TopicPartition, str] = {
            tp: m for m, tps in self.current.items() for tp in tps
        }
        sorted_topics = sorted(
            self.topic_consumers,
            key=lambda t: (len(self.topic_consumers[t]), java_string_key(t)),
        )
        self.sorted_partitions = [
            TopicPartition(t, p) for t in sorted_topics for p in self.partitions[t]
        ]
        self.sorted_members = _SortedMembers(self.current)
        self.movements = _PartitionMovements()
        self.revocation_required = False

    def build(self) -> dict[str, list[TopicPartition]]:
        previous = self._previous_owners()
        assigned: set[TopicPartition] = set()
        for member, tps in self.current.items():
            subscribed = self.inp.subscriptions[member]
            keep = []
            for tp in tps:
                if tp.topic not in subscribed:
                    self.revocation_required = True  # owner left the topic; stale in self.owner
                else:
                    keep.append(tp)
                    assigned.add(tp)
            tps[:] = keep
        unassigned = [tp for tp in self.sorted_partitions if tp not in assigned]
        for member in self.current:
            self.sorted_members.add(member)
        self._balance(previous, unassigned)
        return self.current

    def _previous_owners(self) -> dict[TopicPartition, tuple[str, int]]:
        """Owners in generations before the newest (Java's ``prevAssignment``)."""
        previous: dict[TopicPartition, tuple[str, int]] = {}
        max_generation = self.inp.max_generation

        def update(tps: list[TopicPartition], member: str, generation: int) -> None:
            for tp in tps:
                known = previous.get(tp)
                if known is None or generation > known[1]:
                    previous[tp] = (member, generation)

        for member in self.inp.order:
            data = self.inp.member_data[member]
            if data.generation is not None and data.generation < max_generation:
                update(data.partitions, member, data.generation)
            elif data.generation is None and max_generation > DEFAULT_GENERATION:
                update(data.partitions, member, DEFAULT_GENERATION)
        return previous

    def _max_size(self, member: str) -> int:
        topics = self.consumer_topics[member]
        if len(topics) == len(self.partitions):
            return self.total
        return sum(len(self.partitions[t]) for t in topics)

    def _is_balanced(self) -> bool:
        low = len(self.current[self.sorted_members.first()])
        high = len(self.current[self.sorted_members.last()])
        if low >= high - 1:
            return True
        owner_of = {tp: m for m, tps in self.current.items() for tp in tps}
        for member in self.sorted_members:
            mine = self.current[member]
            if len(mine) == self._max_size(member):
                continue
            mine_set = set(mine)
            for topic in self.consumer_topics[member]:
                for p in self.partitions[topic]:
                    tp = TopicPartition(topic, p)
                    if tp in mine_set:
                        continue
                    other = owner_of.get(tp)
                    if other is not None and len(mine) + 1 < len(self.current[other]):
                        return False
        return True

    @staticmethod
    def _balance_score(assignment: Mapping[str, list[TopicPartition]]) -> int:
        sizes = [len(tps) for tps in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _assign_to_least_loaded(self, tp: TopicPartition) -> None:
        for member in self.sorted_members:
            if tp.topic in self.consumer_topics[member]:
                self.sorted_members.remove(member)
                self.current[member].append(tp)
                self.owner[tp] = member
                self.sorted_members.add(member)
                return

    def _can_member_move(self, member: str) -> bool:
        mine = self.current[member]
        if len(mine) < self._max_size(member):
            return True
        return any(len(self.topic_consumers[tp.topic]) >= 2 for tp in mine)

    def _balance(
        self, previous: dict[TopicPartition, tuple[str, int]], unassigned: list[TopicPartition]
    ) -> None:
        initializing = not self.current[self.sorted_members.last()]
        for tp in unassigned:
            if self.topic_consumers[tp.topic]:
                self._assign_to_least_loaded(tp)

        fixed_topics = {t for t, ms in self.topic_consumers.items() if len(ms) < 2}
        self.sorted_partitions = [
            tp for tp in self.sorted_partitions if tp.topic not in fixed_topics
        ]
        unassigned = [tp for tp in unassigned if tp.topic not in fixed_topics]

        fixed: dict[str, list[TopicPartition]] = {}
        for member in self.consumer_topics:
            if not self._can_member_move(member):
                self.sorted_members.remove(member)
                fixed[member] = self.current.pop(member)

        before = {m: list(tps) for m, tps in self.current.items()}
        owner_before = dict(self.owner)
        if not self.revocation_required:
            self._reassign(unassigned, previous)
        moved = self._reassign(self.sorted_partitions, previous)
        if (
            not initializing
            and moved
            and self._balance_score(self.current) >= self._balance_score(before)
        ):
            self.current.clear()
            self.current.update({m: list(tps) for m, tps in before.items()})
            self.owner = owner_before
        for member, tps in fixed.items():
            self.current[member] = tps

    def _reassign(
        self, partitions: list[TopicPartition], previous: dict[TopicPartition, tuple[str, int]]
    ) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                member = self.owner.get(tp)
                if member is None or member not in self.current:
                    log.error("sticky assignor: %s has no current owner", tp)
                    continue
                prev = previous.get(tp)
                # Java would fail on a previous owner that is not being balanced, and would give
                # the partition back to a previous owner no longer subscribed to its topic.
                if (
                    prev is not None
                    and prev[0] in self.current
                    and tp.topic in self.consumer_topics[prev[0]]
                    and len(self.current[member]) > len(self.current[prev[0]]) + 1
                ):
                    self._move(tp, prev[0])
                    performed = modified = True
                    continue
                for other in self.topic_consumers[tp.topic]:
                    if (
                        other in self.current
                        and len(self.current[member]) > len(self.current[other]) + 1
                    ):
                        self._move_to_least_loaded(tp)
                        performed = modified = True
                        break
        return performed

    def _move_to_least_loaded(self, tp: TopicPartition) -> None:
        for member in self.sorted_members:
            if tp.topic in self.consumer_topics[member]:
                self._move(tp, member)
                return

    def _move(self, tp: TopicPartition, new: str) -> None:
        old = self.owner[tp]
        tp = self.movements.partition_to_move(tp, old, new)
        old = self.owner[tp]
        self.sorted_members.remove(old)
        self.sorted_members.remove(new)
        self.movements.move(tp, old, new)
        self.current[old].remove(tp)
        self.current[new].append(tp)
        self.owner[tp] = new
        self.sorted_members.add(new)
        self.sorted_members.add(old)


def _transferring(
    inp: _StickyInput,
    members: Mapping[str, ConsumerProtocolMemberMetadata],
    assignment: Mapping[str, list[TopicPartition]],
) -> dict[TopicPartition, str]:
    """Partitions assigned to a member that did not own them while another member owned them
    (Java's computePartitionsTransferringOwnership, for the general builder)."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member, tps in assignment.items():
        owned = set(members[member].owned_partitions)
        mine = set(tps)
        added.update({tp: member for tp in tps if tp not in owned})
        revoked.update(tp for tp in owned if tp not in mine)
    return {tp: m for tp, m in added.items() if tp in revoked}


def sticky_assign(
    partitions: dict[str, list[int]], members: Members, cooperative: bool
) -> dict[str, list[TopicPartition]]:
    if not members:
        return {}
    read = cooperative_member_data if cooperative else sticky_member_data
    member_data = {m: read(meta) for m, meta in members.items()}
    inp = _StickyInput(members, partitions, member_data)
    if inp.all_equal:
        assignment, transferring = _constrained(inp)
    else:
        assignment = _General(inp).build()
        transferring = _transferring(inp, members, assignment) if cooperative else {}
    if cooperative:
        for tp, member in transferring.items():
            _remove_first(assignment[member], tp)
    return {m: assignment.get(m, []) for m in members}
