"""A streaming query run as its own driver process by the Spark streaming tests, so that a test
can SIGKILL it mid-stream and start it again on the same checkpoint.

    python spark_stream_job.py BOOTSTRAP TOPIC OUT CHECKPOINT (run|available) MAX_OFFSETS [GROUP]

``run`` reads with a 200 ms processing-time trigger until killed; ``available`` reads what is
there (Trigger.AvailableNow) and exits. Rows go to a Parquet sink, whose commit log makes each
micro-batch appear exactly once. With GROUP, the source commits each micro-batch's end offsets
to that consumer group (``commitOffsetsToGroup``).

PySpark 4.0 and 4.1 run Trigger.AvailableNow as a single micro-batch for Python data sources
(SupportsTriggerAvailableNow came in 4.2), and MAX_OFFSETS bounds it; there ``available`` reads
with the processing-time trigger until no data is left (``processAllAvailable``) instead.
"""

from __future__ import annotations

import sys
import time

import pyspark
from ferrokafka.spark import register
from ferrokafka.testing.spark import spark_session


def main(
    bootstrap: str,
    topic: str,
    out: str,
    checkpoint: str,
    mode: str,
    limit: str,
    group: str | None = None,
) -> None:
    spark = spark_session("local[2]", app_name="ferrokafka-stream-job")
    register(spark)
    reader = (
        spark.readStream.format("ferrokafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", limit)
    )
    if group is not None:
        reader = reader.option("commitOffsetsToGroup", group)
    stream = (
        reader.load()
        .select("partition", "offset", "value")
        .writeStream.format("parquet")
        .option("path", out)
        .option("checkpointLocation", checkpoint)
    )
    if mode == "available" and _pyspark_version() < (4, 2):
        drain = stream.trigger(processingTime="200 milliseconds").start()
        drain.processAllAvailable()
        drain.stop()
        print("done", flush=True)
        return
    if mode == "available":
        stream.trigger(availableNow=True).start().awaitTermination()
        print("done", flush=True)
        return
    query = stream.trigger(processingTime="200 milliseconds").start()
    while query.isActive:
        progress = query.lastProgress
        if progress:
            print(f"batch {progress['batchId']} rows {progress['numInputRows']}", flush=True)
        time.sleep(0.2)
    raise SystemExit(f"the query stopped: {query.exception()}")


def _pyspark_version() -> tuple[int, int]:
    major, minor = pyspark.__version__.split(".")[:2]
    return int(major), int(minor)


if __name__ == "__main__":
    main(*sys.argv[1:8])
