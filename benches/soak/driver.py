"""The soak's driver: the cluster, the children, the faults, the samples and the verdict.

Faults come one at a time, at seeded random intervals, in rounds of three: a member SIGKILLed
and started again (a new incarnation), one proxy fault (latency, black hole, cut, refused
connections; the four in turn) healed after a while, and a broker SIGKILLed and restarted (on
its data, after a few seconds down; never two down, the topic's min ISR is 2). Which member,
which broker, how long and how bad are drawn from the seeded generator.

With ``--protocol both`` the group is classic for the first half and KIP-848 (``consumer``)
for the second: at half time every member stops cleanly and four members of the consumer
protocol join the same, now empty, group, which the broker converts, keeping its committed
offsets.

Recovery after a fault is the time from its start until every partition has processed a
record the producer sent after the fault began (its create time): produce, fetch and the group
all flowing again, on every partition.

While it runs the driver samples the group's committed offsets every 2 s (admin
``list_consumer_group_offsets`` over the direct listeners), then reads the members' logs, and
counts any committed offset more than one past the highest offset processed for its
partition. It samples the RSS of every child every 2 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from array import array
from pathlib import Path
from typing import Any

from ferrokafka import AIOKafkaConsumer, TopicPartition
from ferrokafka.admin import AIOKafkaAdminClient
from ferrokafka.testing import KafkaCluster
from ferrokafka.testing.kraft import QUICK_START_JVM_OPTIONS

from .logs import Progress, decode_value
from .report import slope_per_hour, table
from .verify import Verdict, read_acks, verify_processing, verify_producer

BENCHES = Path(__file__).resolve().parent.parent
PARTITIONS = 12
MEMBERS = 4
PROXY_FAULTS = ("latency", "black_hole", "cut", "refuse")


def log(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


class Child:
    """A child process: the producer or one member incarnation, its output in a file."""

    def __init__(self, name: str, role: str, spec: dict[str, Any], workdir: Path) -> None:
        self.name = name
        self.output = workdir / f"{name}.out"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCHES), env.get("PYTHONPATH")]))
        with open(self.output, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", f"soak.{role}", json.dumps(spec)],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        self.started = time.time()
        self.ended: float | None = None
        self.rss: list[tuple[float, float]] = []
        self.expected_exit = False

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss_mb(self) -> float | None:
        try:
            with open(f"/proc/{self.process.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None

    def kill(self) -> None:
        self.expected_exit = True
        self.process.kill()
        self.process.wait()
        self.ended = time.time()

    async def stop(self, timeout: float) -> bool:
        """SIGTERM, then wait; SIGKILL after ``timeout`` (returns False then)."""
        self.expected_exit = True
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.to_thread(self.process.wait, timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return False
        self.ended = time.time()
        return self.process.returncode == 0

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.output.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class Soak:
    def __init__(self, args: Any, cluster: KafkaCluster, workdir: Path) -> None:
        self.args = args
        self.cluster = cluster
        self.workdir = workdir
        (workdir / "members").mkdir(parents=True, exist_ok=True)
        self.rng = random.Random(args.seed)
        tag = uuid.uuid4().hex[:8]
        self.topic = f"soak-{tag}"
        self.group = f"soak-group-{tag}"
        self.protocols = ["classic", "consumer"] if args.protocol == "both" else [args.protocol]
        self.protocol = self.protocols[0]
        self.acked = Progress(workdir, "acks.log")
        self.processed = Progress(workdir / "members", "*.log")
        self.producer: Child | None = None
        self.members: list[Child | None] = [None] * MEMBERS
        self.incarnations: list[Child] = []
        self.killed: set[str] = set()
        self.faults: list[dict[str, Any]] = []
        self.crashes: list[str] = []
        self.problems: list[str] = []
        self.commit_violations: list[str] = []
        self.commit_samples = 0
        self.commit_sample_errors = 0
        self.final_committed: dict[int, int] = {}
        self.producer_crashed = False
        self._count = 0
        self._round: list[str] = []
        self._proxy_round: list[str] = []

    # ---- children ----------------------------------------------------------------------------

    def start_producer(self) -> None:
        spec = {
            "bootstrap": self.cluster.bootstrap_servers,
            "topic": self.topic,
            "partitions": PARTITIONS,
            "rate": self.args.rate,
            "acks": str(self.workdir / "acks.log"),
        }
        self.producer = Child("producer", "producer", spec, self.workdir)

    def start_member(self, slot: int) -> None:
        self._count += 1
        name = f"member{slot}-{self._count:03d}-{self.protocol}"
        spec = {
            "bootstrap": self.cluster.bootstrap_servers,
            "topic": self.topic,
            "group": self.group,
            "protocol": self.protocol,
            "log": str(self.workdir / "members" / f"{name}.log"),
        }
        child = Child(name, "member", spec, self.workdir)
        self.members[slot] = child
        self.incarnations.append(child)

    async def stop_members(self) -> None:
        members = [m for m in self.members if m is not None]
        results = await asyncio.gather(*(m.stop(60) for m in members))
        for member, clean in zip(members, results, strict=True):
            if not clean:
                self.problems.append(
                    f"{member.name} did not stop cleanly (exit {member.process.returncode}):\n"
                    + member.tail()
                )
                self.killed.add(member.name)

    # ---- background samplers -----------------------------------------------------------------

    async def watch_children(self) -> None:
        while True:
            await asyncio.sleep(1)
            for slot, member in enumerate(self.members):
                if member is not None and not member.alive() and not member.expected_exit:
                    member.ended = time.time()
                    self.crashes.append(f"{member.name} exited {member.process.returncode}")
                    log(f"CRASH {member.name} exited {member.process.returncode}:\n{member.tail()}")
                    self.start_member(slot)
            producer = self.producer
            if producer is not None and not producer.alive() and not producer.expected_exit:
                producer.expected_exit = True
                self.producer_crashed = True
                self.crashes.append(f"producer exited {producer.process.returncode}")
                log(f"CRASH producer exited {producer.process.returncode}:\n{producer.tail()}")

    async def sample_rss(self) -> None:
        while True:
            now = time.time()
            for child in [self.producer, *self.members]:
                if child is not None and child.alive():
                    mb = child.rss_mb()
                    if mb is not None:
                        child.rss.append((now, mb))
            await asyncio.sleep(2)

    async def sample_commits(self) -> None:
        admin = AIOKafkaAdminClient(
            bootstrap_servers=self.cluster.plaintext_bootstrap_servers, request_timeout_ms=5000
        )
        await admin.start()
        try:
            while True:
                await asyncio.sleep(2)
                await self.sample_commits_once(admin)
        finally:
            await admin.close()

    async def sample_commits_once(self, admin: AIOKafkaAdminClient) -> None:
        try:
            committed = await asyncio.wait_for(admin.list_consumer_group_offsets(self.group), 10)
        except Exception as exc:  # a broker down, a coordinator moving: the next sample
            self.commit_sample_errors += 1
            if self.commit_sample_errors % 20 == 1:
                log(f"committed offsets not sampled: {exc!r}")
            return
        # Read after the sample: a commit follows the fsync of what it covers.
        processed = self.processed.refresh()
        self.commit_samples += 1
        for tp, meta in committed.items():
            if meta.offset > processed.get(tp.partition, -1) + 1:
                text = (
                    f"{time.time():.3f} partition {tp.partition} committed {meta.offset}, "
                    f"highest processed {processed.get(tp.partition, -1)}"
                )
                self.commit_violations.append(text)
                log(f"COMMIT AHEAD {text}")

    # ---- recovery ------------------------------------------------------------------------------

    async def sent_after(self, ms: int) -> float:
        """The monotonic time at which every partition had processed a record that the
        producer sent after ``ms`` (wall clock)."""
        while True:
            self.processed.refresh()
            newest = self.processed.newest
            if all(newest.get(p, 0) > ms for p in range(PARTITIONS)):
                return time.monotonic()
            await asyncio.sleep(0.1)

    async def flowing_past(self, targets: dict[int, int]) -> float:
        """The monotonic time at which every partition was processed past ``targets``."""
        while True:
            processed = self.processed.refresh()
            if all(processed.get(p, -1) > t for p, t in targets.items()):
                return time.monotonic()
            await asyncio.sleep(0.1)

    # ---- faults --------------------------------------------------------------------------------

    def next_kind(self) -> str:
        if not self._round:
            if not self._proxy_round:
                self._proxy_round = list(PROXY_FAULTS)
                self.rng.shuffle(self._proxy_round)
            # Popped from the end: a member first, a broker last (the slowest to come back).
            self._round = ["broker_kill", self._proxy_round.pop(), "member_kill"]
        return self._round.pop()

    async def fault(self, kind: str) -> None:
        rng = self.rng
        began, wall = time.monotonic(), time.time()
        watch = asyncio.create_task(self.sent_after(int(wall * 1000)))
        node = rng.choice(self.cluster.node_ids)
        if kind == "broker_kill":
            down = rng.uniform(2, 8)
            detail = f"node {node}, down {down:.1f} s"
            log(f"fault {kind}: {detail}")
            await asyncio.to_thread(self.cluster.kill, node)
            await asyncio.sleep(down)
            await asyncio.to_thread(self.cluster.restart_node, node)
        elif kind == "member_kill":
            slot = rng.randrange(MEMBERS)
            victim = self.members[slot]
            assert victim is not None
            pause = rng.uniform(0, 3)
            detail = f"{victim.name}, restarted after {pause:.1f} s"
            log(f"fault {kind}: {detail}")
            victim.kill()
            self.killed.add(victim.name)
            await asyncio.sleep(pause)
            self.start_member(slot)
        elif kind == "protocol_switch":
            detail = f"every member stopped, {self.protocols[1]} members started"
            log(f"{kind}: {detail}")
            await self.stop_members()
            self.protocol = self.protocols[1]
            for slot in range(MEMBERS):
                self.start_member(slot)
        else:
            proxy = self.cluster.proxy(node)
            hold = 0.0
            if kind == "latency":
                ms, hold = rng.uniform(50, 400), rng.uniform(5, 15)
                detail = f"node {node}, {ms:.0f} ms (+ {ms / 4:.0f} jitter) for {hold:.1f} s"
                proxy.delay(ms, ms / 4)
            elif kind == "black_hole":
                hold = rng.uniform(2, 8)
                detail = f"node {node} for {hold:.1f} s"
                proxy.black_hole()
            elif kind == "cut":
                after = rng.choice([None, rng.randrange(10, 50_000)])
                hold = 1.0
                where = "now" if after is None else f"after {after} bytes of answers"
                detail = f"node {node}, every connection, {where}"
                proxy.cut(after)
            else:
                hold = rng.uniform(2, 8)
                detail = f"node {node}: connections cut, new ones refused for {hold:.1f} s"
                proxy.refuse()
                proxy.cut()
            log(f"fault {kind}: {detail}")
            await asyncio.sleep(hold)
            proxy.heal()
        healed = time.monotonic()
        try:
            recovered: float | None = await asyncio.wait_for(watch, self.args.recover_timeout)
        except asyncio.TimeoutError:
            recovered = None
            self.processed.refresh()
            stuck = sorted(
                p for p in range(PARTITIONS) if self.processed.newest.get(p, 0) <= wall * 1000
            )
            self.problems.append(
                f"{kind} ({detail}) at {wall:.3f}: not recovered within "
                f"{self.args.recover_timeout:.0f} s after the heal; partitions {stuck} have "
                "processed nothing sent since"
            )
        record = {
            "kind": kind,
            "detail": detail,
            "start": wall,
            "protocol": self.protocol,
            "held_s": healed - began,
            "recovered_s": None if recovered is None else recovered - began,
            "after_heal_s": None if recovered is None else max(0.0, recovered - healed),
        }
        self.faults.append(record)
        log(
            f"  recovered in {record['recovered_s']:.1f} s"
            if recovered is not None
            else "  NOT RECOVERED"
        )

    # ---- the run -------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        await self.cluster.acreate_topic(
            self.topic,
            partitions=PARTITIONS,
            replication_factor=3,
            configs={"min.insync.replicas": "2"},
        )
        self.start_producer()
        for slot in range(MEMBERS):
            self.start_member(slot)
        tasks = [
            asyncio.create_task(self.watch_children()),
            asyncio.create_task(self.sample_rss()),
            asyncio.create_task(self.sample_commits()),
        ]
        try:
            await self.soak()
            await self.finish()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for child in [self.producer, *self.members]:
                if child is not None and child.alive():
                    child.kill()
        return await self.verdict()

    async def soak(self) -> None:
        args = self.args
        try:
            await asyncio.wait_for(self.flowing_past({p: -1 for p in range(PARTITIONS)}), 120)
        except asyncio.TimeoutError:
            self.problems.append("the group did not consume every partition within 120 s")
            return
        began = time.monotonic()
        deadline = began + args.minutes * 60
        switch_at = began + args.minutes * 30 if len(self.protocols) > 1 else None
        log(f"soak: {args.minutes} min, group {self.group} ({self.protocol}), topic {self.topic}")
        while not self.producer_crashed:
            await asyncio.sleep(self.rng.uniform(*args.gap))
            now = time.monotonic()
            if now >= deadline:
                break
            if switch_at is not None and now >= switch_at:
                switch_at = None
                self._round.clear()
                await self.fault("protocol_switch")
                continue
            await self.fault(self.next_kind())

    async def finish(self) -> None:
        self.cluster.heal()
        assert self.producer is not None
        log("stopping the producer")
        if not await self.producer.stop(180):
            self.problems.append(f"the producer did not stop cleanly:\n{self.producer.tail()}")
        acked = self.acked.refresh()
        log("draining")
        try:
            await asyncio.wait_for(
                self.flowing_past({p: o - 1 for p, o in acked.items()}), self.args.drain_timeout
            )
        except asyncio.TimeoutError:
            processed = self.processed.refresh()
            self.problems.append(
                f"not drained within {self.args.drain_timeout:.0f} s: processed "
                f"{dict(sorted(processed.items()))}, acknowledged {dict(sorted(acked.items()))}"
            )
        await asyncio.sleep(1)  # a last commit
        async with AIOKafkaAdminClient(
            bootstrap_servers=self.cluster.plaintext_bootstrap_servers
        ) as admin:
            await self.sample_commits_once(admin)
            log("stopping the members")
            await self.stop_members()
            await self.sample_commits_once(admin)
            final = await admin.list_consumer_group_offsets(self.group)
        self.final_committed = {tp.partition: m.offset for tp, m in final.items()}

    async def verdict(self) -> dict[str, Any]:
        args = self.args
        log("reading the topic back")
        topic = await read_topic(self.cluster.plaintext_bootstrap_servers, self.topic)
        log("verifying")
        verdict = Verdict()
        acks = read_acks(self.workdir / "acks.log")
        verdict.acknowledged = acks.count
        verdict.send_failures = sum(len(s) for s in acks.failed.values())
        verify_processing(
            acks, list((self.workdir / "members").glob("*.log")), self.killed, verdict
        )
        verify_producer(acks, topic, verdict)
        ends = {p: offsets[-1] + 1 if offsets else 0 for p, (offsets, _) in topic.items()}
        behind = {
            p: (self.final_committed.get(p), end)
            for p, end in ends.items()
            if self.final_committed.get(p, -1) != end
        }
        problems = list(self.problems)
        if verdict.lost:
            problems.append(f"{verdict.lost} acknowledged records lost: {verdict.lost_examples}")
        if verdict.unexplained:
            problems.append(
                f"{verdict.unexplained} unexplained duplicates: {verdict.unexplained_examples}"
            )
        if verdict.send_failures:
            problems.append(
                f"{verdict.send_failures} sends failed: the producer did not ride out the faults"
            )
        if verdict.producer_errors:
            problems.append(
                f"{verdict.producer_errors} producer errors: {verdict.producer_examples}"
            )
        if self.commit_violations:
            problems.append(f"committed offsets ahead: {self.commit_violations[:10]}")
        if self.crashes:
            problems.append(f"crashes: {self.crashes}")
        if behind:
            problems.append(f"final commits short of the end (committed, end): {behind}")
        sent = 0
        if self.producer is not None:
            with contextlib.suppress(Exception):
                sent = json.loads(self.producer.tail(1))["sent"]
        return {
            "minutes": args.minutes,
            "seed": args.seed,
            "rate": args.rate,
            "protocols": "/".join(self.protocols),
            "kafka_version": self.cluster.version,
            "topic": self.topic,
            "group": self.group,
            "workdir": str(self.workdir),
            "sent": sent,
            "verdict": verdict.as_dict(),
            "faults": self.faults,
            "recover_timeout_s": args.recover_timeout,
            "commit_samples": self.commit_samples,
            "commit_sample_errors": self.commit_sample_errors,
            "commit_violations": self.commit_violations,
            "crashes": self.crashes,
            "killed": sorted(self.killed),
            "final_committed": self.final_committed,
            "rss": self.rss_figures(),
            "problems": problems,
            "passed": not problems,
        }

    def rss_figures(self) -> dict[str, Any]:
        slots: dict[str, list[Child]] = {}
        for child in self.incarnations:
            slots.setdefault(child.name.split("-")[0], []).append(child)
        if self.producer is not None:
            slots["producer"] = [self.producer]
        out: dict[str, Any] = {}
        for slot, children in slots.items():
            longest = max(children, key=lambda c: (c.rss[-1][0] - c.rss[0][0]) if c.rss else -1.0)
            life = (longest.rss[-1][0] - longest.rss[0][0]) if longest.rss else 0.0
            out[slot] = {
                "incarnations": len(children),
                "longest": longest.name,
                "minutes": life / 60,
                "first_mb": longest.rss[0][1] if longest.rss else None,
                "last_mb": longest.rss[-1][1] if longest.rss else None,
                "slope_mb_per_h": slope_per_hour(longest.rss, min(120.0, life / 4)),
                "samples": [(round(t, 1), round(mb, 1)) for t, mb in longest.rss],
            }
        return out


async def read_topic(bootstrap: str, topic: str) -> dict[int, tuple[array[int], array[int]]]:
    """Every record of ``topic``: per partition, offsets and sequence numbers in offset
    order."""
    consumer: AIOKafkaConsumer[bytes, bytes] = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        out = {p: (array("q"), array("q")) for p in range(PARTITIONS)}
        remaining = {tp for tp in tps if ends[tp] > 0}
        deadline = time.monotonic() + 600
        while remaining and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=1000, max_records=50_000)
            for tp, records in batch.items():
                offsets, seqs = out[tp.partition]
                for record in records:
                    if record.offset >= ends[tp]:
                        remaining.discard(tp)
                        break
                    offsets.append(record.offset)
                    seqs.append(decode_value(record.value)[2])
                if offsets and offsets[-1] >= ends[tp] - 1:
                    remaining.discard(tp)
        if remaining:
            raise RuntimeError(f"the topic could not be read back: {sorted(remaining)} unfinished")
        return out
    finally:
        await consumer.stop()


def main(args: Any) -> int:
    """Run the soak of ``args`` (benches/soak.py's options); 0 when it passed."""
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="ferrokafka-soak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"soak files in {workdir}")
    return asyncio.run(_main(args, workdir))


async def _main(args: Any, workdir: Path) -> int:
    cluster = KafkaCluster(
        3,
        faults=True,
        jvm_options=QUICK_START_JVM_OPTIONS,
        config={"log.retention.ms": "-1"},
        # A killed node recovers its logs before it serves again; beside other work on two
        # cores that has taken longer than the default two minutes.
        start_timeout=240,
    )
    await asyncio.to_thread(cluster.start)
    try:
        figures = await Soak(args, cluster, workdir).run()
    finally:
        cluster.heal()
        await asyncio.to_thread(cluster.stop)
    print(table(figures), flush=True)
    out = Path(args.out) if args.out else workdir / "soak.json"
    out.write_text(json.dumps(figures, indent=1))
    log(f"figures in {out}")
    return 0 if figures["passed"] else 1
