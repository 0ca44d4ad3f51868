"""The benchmark harness: ferrokafka beside every peer client, on one local broker,
the same data, each client in its own process, rounds alternating between clients.

Modules: ``datasets`` (what is written and what a reader must see), ``tally`` (the per-record
accounting every Python client does), ``consumers``, ``producers`` and ``groups`` (the Python
clients, run in child processes by ``child``), ``java`` (the Java programs and Kafka's tools),
``spark_reads`` (W8's SparkSession and its readers, in one child process), ``shares`` (W9's
share-group members, in one child process per run), ``transactions`` (W12's transactional
clients, in one child process per run), ``runner`` (a child process with a stall watchdog),
``workloads`` (W1-W12), ``report`` (Markdown and JSON), ``charts`` (PNG),
``machine`` (what ran it) and ``cli`` (the command: ``benches/harness.py``).
"""
