"""One frozen, checked configuration per client, built from aiokafka's keyword arguments.

``ConnectionConfig`` holds what every client shares; ``ConsumerConfig``, ``ProducerConfig``,
``AdminConfig`` and ``ShareConsumerConfig`` add each client's own options. Their field
docstrings are the option reference (meaning, unit, default, the Java client's name).
"""

from .admin import AdminConfig
from .connection import ConnectionConfig
from .consumer import ConsumerConfig
from .producer import ProducerConfig
from .share_consumer import ShareConsumerConfig

__all__ = [
    "AdminConfig",
    "ConnectionConfig",
    "ConsumerConfig",
    "ProducerConfig",
    "ShareConsumerConfig",
]
