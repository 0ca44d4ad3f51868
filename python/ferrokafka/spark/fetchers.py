"""The fetch functions for ``DataFrame.mapInArrow`` / ``mapInPandas``, the plan DataFrame they
run over, and ``read_kafka``, which puts the two together."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .options import FetchOptions, SourceOptions, parse_fetch_options, parse_source_options
from .planning import OffsetRange, plan_batch
from .reader import read_range
from .runtime import runtime
from .schema import PLAN_SCHEMA, spark_schema

__all__ = ["fetch_arrow", "fetch_pandas", "plan_dataframe", "plan_ranges", "read_kafka"]

FETCHERS = ("arrow", "pandas")


def _fetch_options(options: Mapping[str, Any] | FetchOptions) -> FetchOptions:
    return options if isinstance(options, FetchOptions) else parse_fetch_options(options)


def _ranges_of(plans: Iterator[Any]) -> Iterator[OffsetRange]:
    for plan in plans:
        columns = plan.to_pydict() if hasattr(plan, "to_pydict") else plan.to_dict("list")
        for row in zip(
            columns["topic"],
            columns["partition"],
            columns["fromOffset"],
            columns["untilOffset"],
            strict=True,
        ):
            yield OffsetRange(str(row[0]), int(row[1]), int(row[2]), int(row[3]))


def fetch_arrow(
    options: Mapping[str, Any] | FetchOptions,
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A function for ``plan.mapInArrow(f, schema)``: for every row of the plan (``topic``,
    ``partition``, ``fromOffset``, ``untilOffset``) it yields that range's records as
    ``pyarrow.RecordBatch``es in Spark's Kafka schema (``KAFKA_SCHEMA``, or
    ``KAFKA_SCHEMA_WITH_HEADERS`` with ``includeHeaders``), decoded in Rust. ``options`` are
    the read's options (``kafka.*``, ``includeHeaders``, ``failOnDataLoss``,
    ``kafkaConsumer.pollTimeoutMs``)."""
    fetch = _fetch_options(options)

    def fetch_ranges(plans: Iterator[Any]) -> Iterator[Any]:
        for rng in _ranges_of(plans):
            yield from read_range(fetch, rng)

    return fetch_ranges


def fetch_pandas(
    options: Mapping[str, Any] | FetchOptions,
) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """Like :func:`fetch_arrow`, for ``plan.mapInPandas(f, schema)``: yields
    ``pandas.DataFrame``s."""
    fetch = _fetch_options(options)

    def fetch_ranges(plans: Iterator[Any]) -> Iterator[Any]:
        for rng in _ranges_of(plans):
            for batch in read_range(fetch, rng):
                # Spark reads a pandas map column as dicts (a decoded JSON value's maps).
                yield batch.to_pandas(maps_as_pydicts="strict")

    return fetch_ranges


def plan_ranges(options: Mapping[str, Any] | SourceOptions) -> list[OffsetRange]:
    """The offset ranges (one per Spark task) of a batch read with these options, planned on
    the driver by Spark's rules."""
    parsed = (
        options
        if isinstance(options, SourceOptions)
        else parse_source_options(options, streaming=False)
    )
    rt = runtime()

    async def plan() -> list[OffsetRange]:
        consumer = await rt.consumer(parsed.client, parsed.ssl)
        return await plan_batch(consumer, parsed)

    with rt.lock:
        return rt.run(plan())


def plan_dataframe(spark: Any, ranges: Sequence[OffsetRange]) -> Any:
    """A DataFrame with one offset range per Spark partition (``topic``, ``partition``,
    ``fromOffset``, ``untilOffset``), to run :func:`fetch_arrow` or :func:`fetch_pandas` over.
    Built from ``spark.range`` so that partition ``i`` holds exactly range ``i``."""
    from pyspark.sql import functions as F

    if not ranges:
        return spark.createDataFrame([], PLAN_SCHEMA)
    table = F.array(
        *(
            F.struct(
                F.lit(r.topic).alias("topic"),
                F.lit(r.partition).cast("int").alias("partition"),
                F.lit(r.from_offset).cast("bigint").alias("fromOffset"),
                F.lit(r.until_offset).cast("bigint").alias("untilOffset"),
            )
            for r in ranges
        )
    )
    n = len(ranges)
    return (
        spark.range(0, n, 1, n)
        .select(F.element_at(table, (F.col("id") + 1).cast("int")).alias("range"))
        .select("range.*")
    )


def read_kafka(
    spark: Any,
    options: Mapping[str, Any] | None = None,
    /,
    *,
    fetcher: str = "arrow",
    **more: Any,
) -> Any:
    """A DataFrame of a Kafka read, with the options of ``spark.read.format("kafka")``
    (given as a dict, as keywords, or both): planned on the driver, fetched on the executors
    through ``mapInArrow`` (``fetcher="arrow"``, the default) or ``mapInPandas``
    (``fetcher="pandas"``)."""
    if fetcher not in FETCHERS:
        raise ValueError(f"fetcher must be one of {', '.join(FETCHERS)}, got {fetcher!r}")
    parsed = parse_source_options({**(options or {}), **more}, streaming=False)
    plan = plan_dataframe(spark, plan_ranges(parsed))
    schema = spark_schema(parsed.include_headers, parsed.key_format, parsed.value_format)
    if fetcher == "arrow":
        return plan.mapInArrow(fetch_arrow(parsed.fetch), schema)
    return plan.mapInPandas(fetch_pandas(parsed.fetch), schema)
