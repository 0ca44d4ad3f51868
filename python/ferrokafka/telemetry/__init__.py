"""OpenTelemetry for ferrokafka (the ``otel`` extra: ``pip install ferrokafka[otel]``).

- :func:`instrument` / :func:`uninstrument`: tracing spans for ``AIOKafkaProducer.send`` and
  ``AIOKafkaConsumer.getone``/``getmany``, with the conventions of
  ``opentelemetry-instrumentation-aiokafka`` (span names ``"<topic> send"`` and
  ``"<topic> receive"``, ``messaging.*`` attributes) and the trace context carried in record
  headers (injected on send, extracted on receive, with the global propagator).
- :class:`MetricsExporter`: every ``metrics()`` figure of the clients registered with it, as
  observable instruments named ``<group>.<name>`` (``consumer-fetch-manager-metrics.records-
  consumed-total``) with the tags as attributes.

Importing ``ferrokafka`` never imports OpenTelemetry; importing this module does.
"""

from .export import MetricsExporter
from .tracing import instrument, is_instrumented, uninstrument

__all__ = ["MetricsExporter", "instrument", "is_instrumented", "uninstrument"]
