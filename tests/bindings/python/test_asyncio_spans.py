"""Spans held across `await`: asyncio tasks share a thread and interleave, so a span opened by
one task and closed after another task opened its own must still get its own duration. Spans
that overlap another task's are recorded as ranges ("b"/"e", closed by id); a task's spans that
nest without interleaving stay ordinary spans."""

import asyncio
import time

import tfprof
from trace_file import encloses, interval_ns, only, read_trace


def durations_ms(parsed):
    """name -> milliseconds, for spans ("X") and ranges ("b" + "e" with one id) alike."""
    result = {}
    for span in parsed.spans():
        result.setdefault(span["name"], []).append(span["dur"] / 1000)
    begins = {event["id"]: event for event in parsed.with_phase("b")}
    for end in parsed.with_phase("e"):
        begin = begins.pop(end["id"])
        assert "incomplete" not in end.get("args", {}), end
        result.setdefault(begin["name"], []).append((end["ts"] - begin["ts"]) / 1000)
    assert begins == {}, f"ranges never ended: {begins}"
    return result


def test_interleaved_tasks_keep_their_own_durations(tmp_path):
    async def hold(name, seconds):
        with tfprof.span(name):
            await asyncio.sleep(seconds)

    async def main():
        # Open in the order a, b, c; close in the order b, a, c: no nesting between them.
        await asyncio.gather(hold("a", 0.10), hold("b", 0.04), hold("c", 0.16))

    path = tmp_path / "tasks.json"
    with tfprof.trace(path):
        asyncio.run(main())
    durations = durations_ms(read_trace(path))
    for name, seconds in (("a", 0.10), ("b", 0.04), ("c", 0.16)):
        (measured,) = durations[name]
        # asyncio.sleep never wakes early; the scheduler may add a little.
        assert seconds * 1000 <= measured < seconds * 1000 + 40, (name, measured)


def test_a_tasks_own_nesting_survives_other_tasks_interleaving(tmp_path):
    async def task(prefix, pause):
        with tfprof.span(f"{prefix} outer"):
            await asyncio.sleep(pause)
            with tfprof.span(f"{prefix} inner"):
                await asyncio.sleep(pause)
            await asyncio.sleep(pause)

    async def main():
        await asyncio.gather(task("one", 0.02), task("two", 0.03))

    path = tmp_path / "nesting.json"
    with tfprof.trace(path):
        asyncio.run(main())
    parsed = read_trace(path)
    durations = durations_ms(parsed)
    for prefix, pause in (("one", 0.02), ("two", 0.03)):
        (outer,) = durations[f"{prefix} outer"]
        (inner,) = durations[f"{prefix} inner"]
        assert 3 * pause * 1000 <= outer < 3 * pause * 1000 + 50
        assert pause * 1000 <= inner < pause * 1000 + 30
        assert inner < outer


def test_synchronous_spans_and_non_overlapping_task_spans_stay_nested_spans(tmp_path):
    async def step(number):
        with tfprof.span(f"step work {number}"):  # no await inside: nothing interleaves
            time.sleep(0.001)
        await asyncio.sleep(0)

    async def main():
        for number in range(3):
            await step(number)

    path = tmp_path / "sync.json"
    with tfprof.trace(path):
        with tfprof.span("outer"):
            with tfprof.span("inner"):
                pass
        asyncio.run(main())
    parsed = read_trace(path)
    assert parsed.with_phase("b") == []  # nothing needed a range
    spans = parsed.spans()
    assert encloses(only(spans, "outer"), only(spans, "inner"))
    assert sorted(s["name"] for s in spans) == ["inner", "outer"] + [f"step work {n}" for n in range(3)]


def test_a_cancelled_task_closes_its_span_when_cancelled(tmp_path):
    async def sleeper():
        with tfprof.span("cancelled"):
            await asyncio.sleep(10)

    async def other():
        with tfprof.span("other"):
            await asyncio.sleep(0.05)

    async def main():
        victim = asyncio.ensure_future(sleeper())
        sibling = asyncio.ensure_future(other())
        await asyncio.sleep(0.02)
        victim.cancel()
        await asyncio.gather(victim, sibling, return_exceptions=True)

    path = tmp_path / "cancel.json"
    with tfprof.trace(path):
        asyncio.run(main())
    durations = durations_ms(read_trace(path))
    (cancelled,) = durations["cancelled"]
    (other,) = durations["other"]
    # main's 20 ms timer is armed before the victim's span opens (under ASan that gap was 0.4 ms),
    # so the span can be a little under 20 ms; what matters is that it closed at the cancel,
    # long before the 10 s sleep and before the sibling's 50 ms span.
    assert 10 <= cancelled < 45
    assert cancelled < other
    assert 50 <= other < 90
