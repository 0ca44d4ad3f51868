"""aiokafka's import paths of the consumer group's building blocks (``aiokafka.coordinator``):
``protocol`` and ``assignors`` re-export ``ferrokafka.consumer.group.subscription`` and
``ferrokafka.consumer.group.assignors``."""
