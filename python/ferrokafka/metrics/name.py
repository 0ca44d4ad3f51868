"""The key of one metric: the Java client's ``MetricName`` (name, group, tags)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class MetricName:
    """One metric's identity, as the Java client names it: ``name`` (``records-consumed-rate``),
    ``group`` (``consumer-fetch-manager-metrics``) and ``tags`` (``client-id``, and per node,
    topic or partition ``node-id``, ``topic``, ``partition``), tags as sorted (key, value) pairs
    so that the name is hashable. ``MetricName.of(name, group, client_id="c")`` spells the tags
    as keywords (underscores become dashes)."""

    name: str
    group: str
    tags: tuple[tuple[str, str], ...] = field(default=())

    @classmethod
    def of(cls, name: str, group: str, **tags: object) -> MetricName:
        return cls(
            name, group, tuple(sorted((k.replace("_", "-"), str(v)) for k, v in tags.items()))
        )

    def tag(self, key: str) -> str | None:
        """The value of tag ``key`` (``"client-id"``, ``"node-id"``, ...), or None."""
        for k, v in self.tags:
            if k == key:
                return v
        return None

    @property
    def tag_dict(self) -> dict[str, str]:
        return dict(self.tags)

    def __str__(self) -> str:
        """``group:name{k=v,...}``: the flat key of :func:`flatten`."""
        inner = ",".join(f"{k}={v}" for k, v in self.tags)
        return f"{self.group}:{self.name}" + (f"{{{inner}}}" if inner else "")
