"""``start()``'s wait for subscribed topics that the broker is creating.

On a broker that creates topics on first use (``auto.create.topics.enable``, Kafka's default),
the consumer's Metadata requests for a subscribed topic that does not exist have it created:
aiokafka's ``start()`` waits until the topic is in the metadata, so its partitions are assigned
when ``start()`` returns. ferrokafka waits as well, but only where it will not wait in vain: for
a broker that says it creates topics (its ``auto.create.topics.enable``, read with
DescribeConfigs), and for topics the broker did not refuse otherwise (authorization, an invalid
name). A broker that does not say (DescribeConfigs refused, as an authorizer may) is not waited
for, and a topic still missing after ``request_timeout_ms`` does not fail ``start()`` (aiokafka's
raises): the consumer reads it once it exists.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import errors as Errors
from ..client import AIOKafkaClient
from ..protocol import Api
from ..waits import Flag, wait_event

if TYPE_CHECKING:
    from .._native import DescribeConfigsRequest

__all__ = ["broker_creates_topics", "wait_for_created_topics"]

log = logging.getLogger(__name__)

_BROKER_RESOURCE = 4
_AUTO_CREATE = "auto.create.topics.enable"
_BEING_CREATED = {
    0,  # missing from the response altogether
    Errors.UnknownTopicOrPartitionError.errno,  # KRaft brokers, until the topic exists
    Errors.LeaderNotAvailableError.errno,  # older brokers, while they create it
}


async def broker_creates_topics(client: AIOKafkaClient) -> bool | None:
    """The ``auto.create.topics.enable`` of a broker of the cluster (the least-loaded one,
    where Metadata requests go); None when it cannot be read."""
    node = client.least_loaded_node()
    if node < 0:  # a bootstrap node: its broker id is not known
        brokers = client.cluster.broker_ids()
        if not brokers:
            return None
        node = brokers[0]
    request: DescribeConfigsRequest = {
        "resources": [
            {
                "resource_type": _BROKER_RESOURCE,
                "resource_name": str(node),
                "configuration_keys": [_AUTO_CREATE],
            }
        ],
        "include_synonyms": False,
    }
    try:
        response = await client.send(node, Api.DESCRIBE_CONFIGS, request)
    except Errors.KafkaError as exc:
        log.debug("could not read %s of broker %s: %s", _AUTO_CREATE, node, exc)
        return None
    for result in response["results"]:
        if result["error_code"]:
            log.debug(
                "could not read %s of broker %s: %s",
                _AUTO_CREATE,
                node,
                Errors.for_code(result["error_code"]).__name__,
            )
            return None
        for entry in result["configs"]:
            value = entry["value"]
            if entry["name"] == _AUTO_CREATE and value is not None:
                return value.strip().lower() == "true"
    return None


async def wait_for_created_topics(
    client: AIOKafkaClient,
    topics: Iterable[str],
    *,
    timeout: float,
    interval: float,
    stopped: Flag,
) -> None:
    """Refresh the metadata until each of ``topics`` that the broker may be creating is in it,
    for up to ``timeout`` seconds (or until ``stopped`` is set). Returns at once if the client
    may not have topics created, or the broker does not say it creates them."""
    cluster = client.cluster
    wanted = frozenset(topics)

    def awaited() -> set[str]:
        return {
            t for t in cluster.missing_topics(wanted) if cluster.topic_error(t) in _BEING_CREATED
        }

    if not awaited() or not client.config.allow_auto_create_topics:
        return
    if not await broker_creates_topics(client):
        return
    deadline = time.monotonic() + timeout
    while True:
        await client.refresh_metadata()
        waiting = awaited()
        if not waiting:
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            log.warning(
                "topics %s are not in the cluster metadata %.0f s after start(), although the "
                "broker creates topics on first use; they are read once they exist",
                sorted(waiting),
                timeout,
            )
            return
        if await wait_event(stopped, min(interval, remaining)):
            return
