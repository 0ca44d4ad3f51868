"""aiokafka's import path of the group coordinators (``aiokafka.consumer.group_coordinator``):
the members of ``ferrokafka.consumer.group`` under aiokafka's names."""

from .group import ClassicMember as GroupCoordinator
from .group import GroupMember as BaseCoordinator
from .group import NoGroupMember as NoGroupCoordinator
from .group import OffsetsCoordinator

__all__ = ["BaseCoordinator", "GroupCoordinator", "NoGroupCoordinator", "OffsetsCoordinator"]
