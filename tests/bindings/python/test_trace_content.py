"""What a Python trace contains: names, nesting, steps, thread rows, counts."""

import json
import threading

import pytest

import tfprof
from trace_file import encloses, interval_ns, only, read_trace


def test_nested_spans_are_recorded_with_their_names_and_nest(tmp_path):
    path = tmp_path / "nested.json"
    with tfprof.trace(path) as trace:
        with tfprof.span("forward"):
            with tfprof.span("conv1"):
                pass
            with tfprof.span("conv2"):
                with tfprof.span("relu"):
                    pass
        with tfprof.span("backward"):
            pass
    assert trace.path == str(path)
    parsed = read_trace(path)
    spans = parsed.spans()
    assert parsed.span_names() == ["backward", "conv1", "conv2", "forward", "relu"]
    forward, conv1, conv2, relu, backward = (only(spans, name) for name in ("forward", "conv1", "conv2", "relu", "backward"))
    assert encloses(forward, conv1) and encloses(forward, conv2) and encloses(conv2, relu)
    assert not encloses(forward, backward)
    assert interval_ns(conv1)[1] <= interval_ns(conv2)[0]
    assert interval_ns(forward)[1] <= interval_ns(backward)[0]
    assert all("incomplete" not in span.get("args", {}) for span in spans)


def test_steps_get_their_own_row_and_events_carry_their_step(tmp_path):
    path = tmp_path / "steps.json"
    with tfprof.trace(path):
        for number in range(3):
            with tfprof.step(number):
                with tfprof.span(f"op{number}"):
                    pass
        with tfprof.span("after_steps"):
            pass
    parsed = read_trace(path)
    steps = parsed.steps()
    assert [step["name"] for step in steps] == ["step 0", "step 1", "step 2"]
    assert [step["args"]["step"] for step in steps] == [0, 1, 2]
    assert parsed.thread_names()[steps[0]["tid"]] == "Steps"
    for number, step in enumerate(steps):
        op = only(parsed.spans(), f"op{number}")
        assert op["args"]["step"] == number
        begin, end = interval_ns(step)
        assert begin <= interval_ns(op)[0] and interval_ns(op)[1] <= end
    assert "step" not in only(parsed.spans(), "after_steps").get("args", {})


def test_rows_are_named_after_python_thread_names(tmp_path):
    path = tmp_path / "threads.json"
    started_before = threading.Event()
    go = threading.Event()

    def early_worker():
        started_before.set()
        go.wait()
        with tfprof.span("early_work"):
            pass

    early = threading.Thread(target=early_worker, name="started-before-trace")
    early.start()
    started_before.wait()
    with tfprof.trace(path):
        go.set()
        early.join()

        def loader(index):
            for batch in range(5):
                with tfprof.span("decode"):
                    with tfprof.span(f"augment{index}"):
                        pass

        workers = [threading.Thread(target=loader, args=(index,), name=f"loader-{index}") for index in range(3)]
        for worker in workers:
            worker.start()
        with tfprof.span("main_work"):
            for worker in workers:
                worker.join()
    parsed = read_trace(path)
    assert [span["name"] for span in parsed.row_of("started-before-trace")] == ["early_work"]
    assert [span["name"] for span in parsed.row_of("MainThread")] == ["main_work"]
    for index in range(3):
        row = parsed.row_of(f"loader-{index}")
        assert sorted(span["name"] for span in row) == ["augment%d" % index] * 5 + ["decode"] * 5
        for augment in (span for span in row if span["name"].startswith("augment")):
            assert any(encloses(decode, augment) for decode in row if decode["name"] == "decode")


def test_a_renamed_thread_gets_its_new_name_in_the_next_session(tmp_path):
    thread = threading.current_thread()
    original = thread.name
    try:
        for name in ("first-name", "second-name"):
            thread.name = name
            with tfprof.trace(tmp_path / f"{name}.json"):
                with tfprof.span("work"):
                    pass
            assert len(read_trace(tmp_path / f"{name}.json").row_of(name)) == 1
    finally:
        thread.name = original


def test_set_thread_name_overrides_the_threading_name_for_the_session(tmp_path):
    path = tmp_path / "named.json"

    def worker():
        tfprof.set_thread_name("custom row")
        with tfprof.span("work"):
            pass

    with tfprof.trace(path):
        thread = threading.Thread(target=worker, name="threading-name")
        thread.start()
        thread.join()
    parsed = read_trace(path)
    assert "threading-name" not in parsed.thread_names().values()
    assert [span["name"] for span in parsed.row_of("custom row")] == ["work"]


def test_an_exception_closes_the_span_and_propagates_unchanged(tmp_path):
    path = tmp_path / "exception.json"
    error = KeyError("missing batch")
    with tfprof.trace(path):
        with tfprof.span("outer"):
            with pytest.raises(KeyError) as raised:
                with tfprof.span("fails"):
                    with tfprof.span("inner"):
                        raise error
            assert raised.value is error
            with tfprof.span("sibling"):
                pass
    parsed = read_trace(path)
    spans = parsed.spans()
    outer, fails, inner, sibling = (only(spans, name) for name in ("outer", "fails", "inner", "sibling"))
    assert encloses(outer, fails) and encloses(fails, inner) and encloses(outer, sibling)
    assert not encloses(fails, sibling)
    assert all("incomplete" not in span.get("args", {}) for span in spans)
    assert parsed.raw["tfprof"]["unmatched_span_ends"] == 0


def test_instants_and_counters(tmp_path):
    path = tmp_path / "marks.json"
    with tfprof.trace(path):
        tfprof.instant("checkpoint saved")
        for depth in (1, 4, 2.5):
            tfprof.counter("queue_depth", depth)
    parsed = read_trace(path)
    assert [event["name"] for event in parsed.with_phase("i")] == ["checkpoint saved"]
    counters = parsed.with_phase("C")
    assert [event["name"] for event in counters] == ["queue_depth"] * 3
    assert [event["args"]["value"] for event in counters] == [1, 4, 2.5]


def test_counter_values_json_cannot_spell_are_kept_and_read_back(tmp_path):
    path = tmp_path / "nonfinite.json"
    values = [float("nan"), float("inf"), float("-inf"), 0.5]
    with tfprof.trace(path):
        for value in values:
            tfprof.counter("loss", value)
    # Standard JSON (Python's parser, strict about NaN literals here): the strings JavaScript and
    # Python use for these values.
    raw = json.loads(path.read_text(), parse_constant=lambda name: pytest.fail(f"bare {name}"))
    written = [event["args"]["value"] for event in raw["traceEvents"] if event.get("ph") == "C"]
    assert written == ["NaN", "Infinity", "-Infinity", 0.5]
    # tfprof's reader takes them back as the values: converted, they are written the same way.
    copy = tmp_path / "copy.json"
    tfprof.convert(path, copy)
    again = json.loads(copy.read_text())
    assert [event["args"]["value"] for event in again["traceEvents"] if event.get("ph") == "C"] == written


def test_names_keep_any_unicode(tmp_path):
    path = tmp_path / "unicode.json"
    names = ["données/chargement", "加载批次", "emoji 🚀", 'quote " and \\ backslash']
    with tfprof.trace(path):
        for name in names:
            with tfprof.span(name):
                pass
    assert read_trace(path).span_names() == sorted(names)


def test_stats_match_what_the_file_holds(tmp_path):
    path = tmp_path / "stats.json"
    with tfprof.trace(path) as trace:
        with tfprof.step(7):
            for _ in range(10):
                with tfprof.span("op"):
                    tfprof.instant("tick")
            tfprof.counter("loss", 0.5)
        running = trace.stats
        assert running.running
    stats = trace.stats
    parsed = read_trace(path)
    assert not stats.running
    assert stats.events_recorded == 2 + 10 * 3 + 1 == parsed.recorded_event_count()
    assert stats.events_dropped == 0 == parsed.raw["dropped_events"]
    assert stats.events_recorded == parsed.raw["tfprof"]["events_recorded"]
    assert stats.threads == 1
    assert stats.names_interned == 3  # op, tick, loss


def test_dropped_events_are_counted_exactly_and_reported_in_the_file(tmp_path):
    path = tmp_path / "drops.json"
    with tfprof.trace(path, buffer_events=16, flush_interval_ms=0) as trace:
        for _ in range(100):
            tfprof.instant("tick")
    stats = trace.stats
    parsed = read_trace(path)
    assert stats.events_recorded + stats.events_dropped == 100
    assert stats.events_recorded == 16 == len(parsed.with_phase("i"))
    assert stats.events_dropped == 84 == parsed.raw["dropped_events"]


def test_start_and_stop_without_with_and_export_in_several_formats(tmp_path):
    trace = tfprof.trace()
    assert not trace.running
    trace.start()
    assert trace.running and tfprof.is_running()
    with tfprof.span("while_running"):
        pass
    trace.export(tmp_path / "partial.json")  # what was collected so far
    with tfprof.span("later"):
        pass
    trace.stop()
    assert not tfprof.is_running()
    trace.export(tmp_path / "full.json.gz")
    trace.export(str(tmp_path / "full.json"))
    assert read_trace(tmp_path / "partial.json").span_names() == ["while_running"]
    assert read_trace(tmp_path / "full.json.gz").span_names() == ["later", "while_running"]
    assert read_trace(tmp_path / "full.json").span_names() == ["later", "while_running"]


def test_spans_outside_a_trace_record_nothing_and_cost_no_errors(tmp_path):
    with tfprof.span("before"):
        tfprof.instant("before")
        tfprof.counter("before", 1)
        with tfprof.step(1):
            pass
    with tfprof.trace(tmp_path / "t.json") as trace:
        with tfprof.span("inside"):
            pass
    assert read_trace(tmp_path / "t.json").span_names() == ["inside"]
    assert trace.stats.unmatched_span_ends == 0


def test_output_option_is_an_alias_of_path(tmp_path):
    with tfprof.trace(output=tmp_path / "alias.json"):
        with tfprof.span("x"):
            pass
    assert read_trace(tmp_path / "alias.json").span_names() == ["x"]


def test_span_objects_are_stateless_and_reusable(tmp_path):
    path = tmp_path / "reuse.json"
    load = tfprof.span("load")
    assert load.name == "load" and repr(load) == "tfprof.span('load')"
    with tfprof.trace(path):
        with load:
            with load:
                pass
        thread = threading.Thread(target=lambda: load.__enter__() and load.__exit__(None, None, None), name="other")
        thread.start()
        thread.join()
    parsed = read_trace(path)
    assert parsed.span_names() == ["load", "load", "load"]
    assert len(parsed.row_of("other")) == 1


def test_an_explicit_thread_name_set_before_the_trace_lasts_across_sessions(tmp_path):
    def worker():
        tfprof.set_thread_name("named early")
        ready.set()
        go.wait()
        with tfprof.span("work"):
            pass

    ready, go = threading.Event(), threading.Event()
    thread = threading.Thread(target=worker, name="threading-name")
    thread.start()
    ready.wait()
    with tfprof.trace(tmp_path / "early.json"):
        go.set()
        thread.join()
    parsed = read_trace(tmp_path / "early.json")
    assert [span["name"] for span in parsed.row_of("named early")] == ["work"]
    assert "threading-name" not in parsed.thread_names().values()


def test_naming_failures_are_swallowed_but_keyboard_interrupt_propagates(tmp_path):
    def broken_source():
        raise ValueError("naming bug")

    def interrupted_source():
        raise KeyboardInterrupt

    try:
        tfprof._native._set_thread_name_source(broken_source)
        with tfprof.trace(tmp_path / "broken.json"):
            with tfprof.span("still_recorded"):
                pass
        assert read_trace(tmp_path / "broken.json").span_names() == ["still_recorded"]
        tfprof._native._set_thread_name_source(interrupted_source)
        with tfprof.trace(tmp_path / "interrupted.json"):
            with pytest.raises(KeyboardInterrupt):
                with tfprof.span("interrupted"):
                    pytest.fail("the span body must not run")
            with tfprof.span("after"):  # the thread counts as named now: no second interrupt
                pass
        assert read_trace(tmp_path / "interrupted.json").span_names() == ["after"]
    finally:
        tfprof._decorate.install()
