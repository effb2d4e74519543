"""Memory options from Python: keep= (the flight recorder), max_memory_mb, dump_on_slow_step as a
float, and the counters they add to Stats."""

import time

import tfprof
from trace_file import read_trace


def test_keep_last_steps_keeps_exactly_those_steps(tmp_path):
    path = tmp_path / "last2.json"
    with tfprof.trace(path, keep="last:2", flush_interval_ms=1) as session:
        for step in range(1, 6):
            with tfprof.step(step):
                with tfprof.span(f"op_{step}"):
                    pass
    stats = session.stats
    trace = read_trace(path)
    assert trace.span_names() == ["op_4", "op_5"]
    assert [event["args"]["step"] for event in trace.steps()] == [4, 5]
    assert stats.events_discarded == 3 * 4  # steps 1-3: a begin, an end and one span each
    assert trace.raw["tfprof"]["discarded_events"] == stats.events_discarded


def test_a_small_memory_limit_spills_and_loses_nothing(tmp_path):
    # .json.gz is written at stop (a .json streams during the run and may never need to spill).
    path = tmp_path / "spilled.json.gz"
    with tfprof.trace(path, max_memory_mb=1, flush_interval_ms=1) as session:
        for _ in range(60000):
            with tfprof.span("op"):
                pass
    stats = session.stats
    assert stats.spill_bytes > 0
    assert stats.memory_bytes <= 3 << 20
    assert stats.events_memory_dropped == 0
    assert len(read_trace(path).spans()) == stats.events_recorded // 2


def test_dump_on_slow_step_takes_a_float_and_writes_the_dump(tmp_path):
    path = tmp_path / "trace.json"
    with tfprof.trace(path, dump_on_slow_step=8.5, flush_interval_ms=1, warnings=False) as session:
        for step in range(1, 8):
            with tfprof.step(step):
                time.sleep(0.3 if step == 6 else 0.004)
        time.sleep(0.05)
    assert session.stats.slow_step_dumps >= 1
    dump = read_trace(tmp_path / "trace.slow-step-6.json")
    assert 6 in [event["args"]["step"] for event in dump.steps()]
