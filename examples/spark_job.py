"""A PySpark batch job that counts a topic's records per key and writes the counts to Kafka.

What it shows: ``ferrokafka.spark.read_kafka`` reads the topic (from its start to its end now)
into a DataFrame in Spark's Kafka schema: the driver plans offset ranges, the executors' Python
workers fetch them with ferrokafka, and no byte goes through the JVM's Kafka client. The job
counts records per key with ordinary DataFrame operations, prints the counts, and, with
``--output-topic``, writes them back to Kafka through ``format("ferrokafka")`` (key: the key,
value: the count as text).

Needs PySpark and Java 17+ (``pip install 'ferrokafka[spark]'``). Spark's Python workers run
``PYSPARK_PYTHON``; this script points it at its own interpreter unless it is set. Run it in
local mode (two cores)::

    python examples/spark_job.py --bootstrap-server localhost:9092 --topic clicks \\
        --output-topic clicks-per-key
"""

from __future__ import annotations

import argparse
import os
import sys

from ferrokafka.spark import read_kafka, register
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def start_spark(master: str) -> SparkSession:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.master(master)
        .appName("ferrokafka-example")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )


def main(args: argparse.Namespace) -> None:
    spark = start_spark(args.master)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        records = read_kafka(
            spark,
            {
                "kafka.bootstrap.servers": args.bootstrap_server,
                "subscribe": args.topic,
                "startingOffsets": "earliest",
                "endingOffsets": "latest",
            },
        )
        counts = (
            records.select(F.col("key").cast("string").alias("key"))
            .groupBy("key")
            .count()
            .orderBy("key")
            .cache()
        )
        for row in counts.collect():
            print(f"key={row['key']} count={row['count']}", flush=True)
        if args.output_topic:
            register(spark)  # makes format("ferrokafka") available
            (
                counts.select(F.col("key"), F.col("count").cast("string").alias("value"))
                .write.format("ferrokafka")
                .option("kafka.bootstrap.servers", args.bootstrap_server)
                .option("topic", args.output_topic)
                .mode("append")
                .save()
            )
            print(f"wrote {counts.count()} counts to {args.output_topic}", flush=True)
    finally:
        spark.stop()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap-server", default="localhost:9092")
    parser.add_argument("--topic", default="clicks")
    parser.add_argument("--output-topic", help="write the counts here too")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    return parser.parse_args()


if __name__ == "__main__":
    main(parse_args())
