"""Reading exported Chrome traces in tests: rows, spans, nesting."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List


@dataclass
class ParsedTrace:
    raw: Dict[str, Any]
    events: List[Dict[str, Any]] = field(default_factory=list)

    def with_phase(self, phase: str) -> List[Dict[str, Any]]:
        return [event for event in self.events if event["ph"] == phase]

    def spans(self, category: str = "user_annotation") -> List[Dict[str, Any]]:
        return [event for event in self.with_phase("X") if event.get("cat") == category]

    def span_names(self) -> List[str]:
        return sorted(event["name"] for event in self.spans())

    def steps(self) -> List[Dict[str, Any]]:
        return sorted(self.spans("step"), key=lambda event: event["ts"])

    def thread_names(self) -> Dict[int, str]:
        return {
            event["tid"]: event["args"]["name"]
            for event in self.with_phase("M")
            if event["name"] == "thread_name"
        }

    def row_of(self, thread_name: str) -> List[Dict[str, Any]]:
        """The spans on the row named `thread_name` (exactly one such row must exist)."""
        tids = [tid for tid, name in self.thread_names().items() if name == thread_name]
        assert len(tids) == 1, f"rows named {thread_name!r}: {tids} in {self.thread_names()}"
        return [event for event in self.spans() if event["tid"] == tids[0]]

    def recorded_event_count(self) -> int:
        """Events as the runtime counts them: a span or step is a begin and an end."""
        return 2 * len(self.with_phase("X")) + len(self.with_phase("i")) + len(self.with_phase("C"))


def read_trace(path: Any) -> ParsedTrace:
    path = str(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as file:  # type: ignore[operator]
        raw = json.load(file)
    return ParsedTrace(raw=raw, events=raw["traceEvents"])


def interval_ns(event: Dict[str, Any]) -> tuple[int, int]:
    begin = round(event["ts"] * 1000)
    return begin, begin + round(event["dur"] * 1000)


def encloses(outer: Dict[str, Any], inner: Dict[str, Any]) -> bool:
    outer_begin, outer_end = interval_ns(outer)
    inner_begin, inner_end = interval_ns(inner)
    return outer["tid"] == inner["tid"] and outer_begin <= inner_begin and inner_end <= outer_end


def only(events: List[Dict[str, Any]], name: str) -> Dict[str, Any]:
    matches = [event for event in events if event["name"] == name]
    assert len(matches) == 1, f"expected one {name!r}, found {len(matches)}"
    return matches[0]
