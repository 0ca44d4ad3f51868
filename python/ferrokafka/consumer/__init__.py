"""The consumer (aiokafka's ``aiokafka.consumer``)."""

from .consumer import AIOKafkaConsumer

__all__ = ["AIOKafkaConsumer"]
