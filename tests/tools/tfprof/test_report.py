"""`tfprof report`: the HTML page of a trace's summary, opened in headless Chromium.

The browser tests drive Debian's `chromium` through `chromedriver` with selenium (the `test`
extra); they check the rendered DOM against a trace of known shape, that the page logs no console
error and fetches nothing, and save a screenshot (also to build/report-screenshot.png for people
to look at). They skip, saying why, only when chromium, chromedriver or selenium is missing;
scripts/install-deps.sh installs the first two, `pip install ".[test]"` the third.
"""

from __future__ import annotations

import html.parser
import json
import os
import pathlib
import signal
import stat
import struct
import subprocess
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from conftest import ROOT, build_dir, run_tfprof
import tfprof_trace_builder
from tfprof_trace_builder import MS, TfprofTrace

CHROMIUM = pathlib.Path(os.environ.get("TFPROF_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = pathlib.Path(os.environ.get("TFPROF_CHROMEDRIVER", "/usr/bin/chromedriver"))
WINDOW_WIDTH = 1280

# Names that need escaping, as real kernel names do.
GEMM = "void gemm<float, 128>(float const*, float*)"
RELU = "elementwise<&relu, 'f32'>"
STEPS = 5


def input_bound_trace(path: pathlib.Path, steps: int = STEPS) -> pathlib.Path:
    """Each 100 ms step: the host waits in IteratorGetNext for 40 ms with the GPU idle, then
    train_step launches GEMM (38 ms) and RELU (12 ms) and copies 100 MB in 5 ms: the GPU is idle
    45% of each step, 40% of it waiting for input."""
    trace = tfprof_trace_builder.input_bound_trace(steps, kernels=((GEMM, 38), (RELU, 12)))
    return trace.write(path)


def cpu_only_trace(path: pathlib.Path) -> pathlib.Path:
    trace = TfprofTrace().thread(1, "MainThread")
    for index in range(3):
        b = index * 10 * MS
        trace.step(index, b, b + 10 * MS)
        trace.span("forward", b, b + 9 * MS)
    return trace.write(path)


class _Tags(html.parser.HTMLParser):
    """Every start tag with its attributes, for checks that need no browser."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: List[Tuple[str, Dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Any]]) -> None:
        self.tags.append((tag, {key: value or "" for key, value in attrs}))


def parse_tags(page: str) -> List[Tuple[str, Dict[str, str]]]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


def report(exe: pathlib.Path, *args: object, env: Optional[dict] = None,
           check: Optional[int] = 0) -> subprocess.CompletedProcess:
    """Runs `tfprof report ARGS` (paths as they are); see conftest.run_tfprof."""
    return run_tfprof(exe, "report", *[str(arg) for arg in args], env=env, check=check)


def png_size(path: pathlib.Path) -> Tuple[int, int, int]:
    """(width, height, bytes of image data) of a PNG file."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    idat, at = 0, 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        if data[at + 4:at + 8] == b"IDAT":
            idat += length
        at += 12 + length
    return width, height, idat


# ---- the command line, no browser needed ----------------------------------------------------


def test_help(tfprof_exe: pathlib.Path) -> None:
    result = report(tfprof_exe, "--help")
    assert result.stdout.startswith("usage: tfprof report")
    assert "Exit status" in result.stdout
    assert result.stderr == ""
    listed = run_tfprof(tfprof_exe, "--help").stdout
    assert "\n  report " in listed


@pytest.mark.parametrize("args, message", [
    ([], "no trace file given"),
    (["--bogus", "t.json"], "unknown option '--bogus'"),
    (["a.json", "b.json"], "one trace at a time"),
    (["t.json", "-o"], "-o needs a path"),
    (["--top", "many", "t.json"], "--top needs a count"),
])
def test_usage_errors_exit_2(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path,
                             args: List[str], message: str) -> None:
    result = report(tfprof_exe, *args, check=2)
    assert message in result.stderr
    assert "tfprof report --help" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_missing_and_bad_input_exit_1_naming_the_file(tfprof_exe: pathlib.Path,
                                                      tmp_path: pathlib.Path) -> None:
    out = tmp_path / "report.html"
    missing = tmp_path / "missing.json"
    result = report(tfprof_exe, missing, "-o", out, check=1)
    assert str(missing) in result.stderr
    garbage = tmp_path / "notes.txt"
    garbage.write_text("hello, not a trace\n")
    result = report(tfprof_exe, garbage, "-o", out, check=1)
    assert result.stderr.startswith(f"tfprof report: {garbage}")
    # Nothing is left behind: no page, no temporary file.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_unwritable_output_exits_3(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path) -> None:
    trace = input_bound_trace(tmp_path / "trace.json")
    nowhere = tmp_path / "no" / "such" / "report.html"
    result = report(tfprof_exe, trace, "-o", nowhere, check=3)
    assert str(nowhere) in result.stderr and "No such file or directory" in result.stderr
    result = report(tfprof_exe, trace, "-o", tmp_path, check=3)
    assert "is a directory" in result.stderr
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        result = report(tfprof_exe, trace, "-o", locked / "r.html", check=3)
        assert "Permission denied" in result.stderr
    result = report(tfprof_exe, trace, "-o", trace, check=2)
    assert "is the trace itself" in result.stderr


def test_writes_quietly_and_atomically(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path) -> None:
    trace = input_bound_trace(tmp_path / "trace.json")
    out = tmp_path / "report.html"
    out.write_text("old")
    result = report(tfprof_exe, trace, "-o", out)
    # Not a terminal: no progress, no chatter.
    assert result.stdout == "" and result.stderr == ""
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "trace.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask  # as any new file, not 0600
    # The same on standard output, and under the default name in the current directory.
    assert report(tfprof_exe, trace, "-o", "-").stdout == page
    forced = report(tfprof_exe, trace, f"--output={tmp_path / 'x.html'}",
                    env={"TFPROF_PROGRESS": "1"})
    assert "wrote" in forced.stderr
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    result = subprocess_in(workdir, tfprof_exe, "report", str(trace))
    assert result.returncode == 0, result.stderr
    assert (workdir / "trace.html").read_text() == page


def subprocess_in(cwd: pathlib.Path, exe: pathlib.Path, *args: str) -> Any:
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGKILL])
def test_interrupted_run_leaves_nothing(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path,
                                        ending: int) -> None:
    # A FIFO that nobody writes keeps the command reading, after it made the page's file: an
    # unnamed one (O_TMPFILE) in the output's directory, so even SIGKILL leaves nothing.
    fifo = tmp_path / "never.json"
    os.mkfifo(fifo)
    process = subprocess.Popen([str(tfprof_exe), "report", str(fifo), "-o",
                                str(tmp_path / "r.html")], stderr=subprocess.PIPE)

    def page_file_open() -> bool:
        for fd in pathlib.Path(f"/proc/{process.pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith(str(tmp_path)) and target != str(fifo):
                return True
        return False

    try:
        deadline = time.monotonic() + 30
        while not page_file_open():
            assert time.monotonic() < deadline, "the page's file was never opened"
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            time.sleep(0.02)
        process.send_signal(ending)
        assert process.wait(timeout=30) == -ending
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["never.json"]


def test_page_is_self_contained(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path) -> None:
    trace = input_bound_trace(tmp_path / "trace.json")
    page = report(tfprof_exe, trace, "-o", "-").stdout
    for tag, attrs in parse_tags(page):
        for name in ("src", "href", "action", "data", "poster", "srcset"):
            value = attrs.get(name, "")
            assert not value or value.startswith(("#", "data:")), (tag, name, value)
        assert tag not in ("iframe", "object", "embed", "img", "video", "audio"), tag
    for needle in ("http://", "https://", "//cdn", "url(", "@import", "@font-face"):
        assert needle not in page, needle
    # Names are escaped: the kernel's '<' never opens a tag.
    assert "gemm&lt;float, 128&gt;" in page and "gemm<float" not in page


def test_salvaged_trace_says_so(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path) -> None:
    trace = input_bound_trace(tmp_path / "trace.json")
    damaged = tmp_path / "damaged.json"
    text = trace.read_text()
    at = text.index(",", int(len(text) * 0.7)) + 1  # no JSON value starts with '@'
    damaged.write_text(text[:at] + "@@@" + text[at:])
    report(tfprof_exe, damaged, "-o", tmp_path / "r.html", check=1)
    result = report(tfprof_exe, "--salvage", damaged, "-o", tmp_path / "r.html")
    assert str(damaged) in result.stderr
    assert 'id="damage"' in (tmp_path / "r.html").read_text()


def test_cut_trace_is_reported_to_its_last_whole_step(tfprof_exe: pathlib.Path,
                                                      tmp_path: pathlib.Path) -> None:
    trace = input_bound_trace(tmp_path / "trace.json")
    cut = tmp_path / "cut.json"
    text = trace.read_text()
    cut.write_text(text[:int(len(text) * 0.7)])
    result = report(tfprof_exe, cut, "-o", tmp_path / "r.html")
    assert f"tfprof report: warning: {cut}: the file ends at byte {int(len(text) * 0.7)}" in result.stderr
    page = (tmp_path / "r.html").read_text()
    assert 'id="cut"' in page and "recovered to its last whole step" in page


def test_long_trace_draws_at_most_500_bars(tfprof_exe: pathlib.Path,
                                           tmp_path: pathlib.Path) -> None:
    trace = TfprofTrace().thread(1, "MainThread")
    for index in range(1201):
        b = index * 2 * MS
        trace.step(index, b, b + 2 * MS)
        trace.span("IteratorGetNext", b, b + MS)
        trace.kernel("k", b + MS, b + 2 * MS, correlation=index + 1)
    trace.write(tmp_path / "long.json")
    page = report(tfprof_exe, tmp_path / "long.json", "-o", "-").stdout
    bars = [attrs for tag, attrs in parse_tags(page)
            if tag == "g" and "step-bar" in attrs.get("class", "").split()]
    assert len(bars) == 401  # groups of 3 consecutive steps
    assert all("step-group" in bar["class"] for bar in bars)
    assert 'id="step-chart-note"' in page and "1,201 steps" in page


# ---- in the browser -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (it is in the test extra: pip install '.[test]')")
    for exe, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(exe, os.X_OK):
            pytest.skip(f"{exe} is missing: install Debian's {package} (scripts/install-deps.sh)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     "--force-device-scale-factor=1", f"--window-size={WINDOW_WIDTH},900",
                     "--disable-extensions", "--no-first-run"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                              options=options)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: Any, page: pathlib.Path) -> None:
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get_log("performance")
    driver.get(page.resolve().as_uri())
    assert driver.execute_script("return document.readyState") == "complete"


def console_errors(driver: Any) -> List[Dict[str, Any]]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def rendered(exe: pathlib.Path, trace: pathlib.Path, page: pathlib.Path, driver: Any) -> Any:
    """Writes the report of `trace` to `page` and opens it: no script may have logged an error.
    Returns the page's script runner."""
    report(exe, trace, "-o", page)
    open_page(driver, page)
    assert console_errors(driver) == []
    return driver.execute_script


def requested_urls(driver: Any) -> List[str]:
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_report_renders_in_chromium(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path,
                                    browser: Any) -> None:
    trace = input_bound_trace(tmp_path / "trace.json")
    page = tmp_path / "report.html"
    # No console errors (a blocked fetch or a script error would be one), nothing fetched but the
    # page itself.
    js = rendered(tfprof_exe, trace, page, browser)
    assert js("return performance.getEntriesByType('resource').length") == 0
    assert set(requested_urls(browser)) <= {page.resolve().as_uri()}
    assert js("return document.querySelectorAll('[src]').length") == 0

    assert js("return document.title") == "tfprof report: trace.json"
    assert str(trace) in js("return document.querySelector('#overview .file').textContent")

    # The diagnosis is first and says input-bound, with the op and what to do.
    diagnosis = js("""
        const section = document.getElementById('diagnosis');
        const first = section.querySelector('article.finding');
        return {top: section.getBoundingClientRect().top,
                stepsTop: document.getElementById('step-time').getBoundingClientRect().top,
                kind: first.dataset.kind, text: section.innerText,
                tips: first.querySelectorAll('ul.recommendations li').length};""")
    assert diagnosis["top"] < diagnosis["stepsTop"]
    assert diagnosis["kind"] == "input_bound"
    assert "input-bound" in diagnosis["text"].lower()
    assert "IteratorGetNext" in diagnosis["text"]
    assert diagnosis["tips"] >= 1

    # One stacked bar per step, drawn; input wait is 40% of each bar's height.
    bars = js("""
        return Array.from(document.querySelectorAll('#step-chart g.step-bar')).map(bar => {
          const height = key => {
            const rect = bar.querySelector('rect.seg-' + key);
            return rect ? rect.getBoundingClientRect().height : 0;
          };
          const parts = ['gpu_compute', 'communication', 'memcpy', 'input_wait', 'host_compute', 'idle'];
          return {step: bar.dataset.step, title: bar.querySelector('title').textContent,
                  input: height('input_wait'),
                  total: parts.reduce((sum, key) => sum + height(key), 0)};
        });""")
    assert [bar["step"] for bar in bars] == [str(n) for n in range(1, STEPS + 1)]
    for bar in bars:
        assert bar["total"] > 50, bar
        assert bar["input"] / bar["total"] == pytest.approx(0.40, abs=0.02), bar
        heading = bar["title"].splitlines()[0]  # "step 3: 100 ms" or "step 3 (python): 100 ms"
        assert heading.startswith(f"step {bar['step']}") and heading.endswith(": 100 ms"), heading
        assert "Input wait 40.0 ms (40.0%)" in bar["title"]
    legend = js("return Array.from(document.querySelectorAll('#step-legend li'))"
                ".map(li => li.dataset.key)")
    assert legend == ["gpu_compute", "communication", "memcpy", "input_wait", "host_compute", "idle"]
    rows = js("return document.querySelectorAll('#step-table tbody tr').length")
    assert rows == STEPS

    # GPU utilisation over time: a drawn line on device 0, with the mean marked.
    chart = js("""
        const figure = document.querySelector('#gpu-utilization figure.util-chart');
        const line = figure.querySelector('path.util-line');
        return {device: figure.dataset.device, length: line.getTotalLength(),
                width: line.getBoundingClientRect().width,
                points: (line.getAttribute('d').match(/[HV]/g) || []).length,
                caption: figure.querySelector('figcaption').textContent};""")
    assert chart["device"] == "0"
    assert chart["width"] > 600 and chart["length"] > chart["width"]
    assert chart["points"] >= 20
    assert "GPU 0" in chart["caption"]
    assert js("return document.getElementById('no-gpu')") is None

    # The top kernels, names as the trace spells them.
    kernels = js("return Array.from(document.querySelectorAll('#top-kernels tbody tr'))"
                 ".map(tr => tr.cells[0].textContent)")
    assert kernels == [GEMM, RELU]
    ops = js("return Array.from(document.querySelectorAll('#top-ops-self tbody tr'))"
             ".map(tr => tr.cells[0].textContent)")
    assert "IteratorGetNext" in ops
    for section in ("streams", "idle-gaps", "copies", "losses"):
        assert js(f"return document.getElementById('{section}').offsetHeight") > 0, section
    assert "HtoD" in js("return document.getElementById('copy-table').innerText")

    # The tables sort (the page's only script): steps by number, descending then ascending.
    js("document.querySelector('#step-table thead th').click()")
    assert js("return document.querySelector('#step-table tbody tr').dataset.step") == "5"
    js("document.querySelector('#step-table thead th').click()")
    assert js("return document.querySelector('#step-table tbody tr').dataset.step") == "1"
    assert console_errors(browser) == []

    # A screenshot of the whole page, for people; the PNG has the window's size and content.
    height = js("return document.documentElement.scrollHeight")
    browser.set_window_size(WINDOW_WIDTH, height)
    viewport = js("return [window.innerWidth * devicePixelRatio,"
                  " window.innerHeight * devicePixelRatio]")
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot))
    width, shot_height, image_bytes = png_size(shot)
    assert [width, shot_height] == viewport
    assert width == WINDOW_WIDTH and shot_height >= 1500
    assert image_bytes > 30_000  # a blank page compresses to a few kB
    for_people = ROOT / "build" / "report-screenshot.png"
    for_people.parent.mkdir(exist_ok=True)
    for_people.write_bytes(shot.read_bytes())
    browser.set_window_size(WINDOW_WIDTH, 900)


def test_cpu_only_report_renders(tfprof_exe: pathlib.Path, tmp_path: pathlib.Path,
                                 browser: Any) -> None:
    js = rendered(tfprof_exe, cpu_only_trace(tmp_path / "cpu.json"), tmp_path / "cpu.html", browser)
    assert "no gpu activity in this trace" in js(
        "return document.getElementById('no-gpu').textContent").lower()
    assert js("return document.querySelectorAll('#step-chart g.step-bar').length") == 3
    assert js("return document.querySelectorAll('path.util-line').length") == 0


def test_example_with_slow_input_renders_input_bound(tfprof_exe: pathlib.Path,
                                                     tmp_path: pathlib.Path,
                                                     browser: Any) -> None:
    # The C example traced for real, its input pipeline made slower than a step.
    example = build_dir() / "examples" / "training_loop"
    if not example.exists():
        pytest.fail(f"{example} is missing: build the examples")
    trace = tmp_path / "slow.json"
    subprocess.run([str(example), "--slow-input", str(trace), "30"], check=True,
                   capture_output=True, timeout=120)
    js = rendered(tfprof_exe, trace, tmp_path / "slow.html", browser)
    finding = js("""
        const first = document.querySelector('#diagnosis article.finding');
        return {kind: first.dataset.kind, title: first.querySelector('h3').textContent};""")
    assert finding["kind"] == "input_bound"
    assert finding["title"].startswith("Input-bound")
    assert js("return document.querySelectorAll('#step-chart g.step-bar').length") == 30
    share = js("return document.querySelector('#step-legend li[data-key=input_wait] b')"
               ".textContent")
    assert float(share.rstrip("%")) > 40, share



# Every real trace of the corpus (tests/data/real/), PyTorch's and TensorFlow's.
REAL_TRACES = sorted(p for p in (ROOT / "tests" / "data" / "real").rglob("*.json*"))


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name[:48])
def test_real_traces_render_with_the_summarys_figures(tfprof_exe: pathlib.Path,
                                                      tmp_path: pathlib.Path, browser: Any,
                                                      path: pathlib.Path) -> None:
    # The page of a trace nobody here wrote renders without a script error, and its header,
    # findings and step table say what `tfprof summary --json` says.
    (summary,) = json.loads(run_tfprof(tfprof_exe, "summary", "--json", str(path)).stdout)["traces"]
    js = rendered(tfprof_exe, path, tmp_path / "report.html", browser)
    tiles = js("""
        const out = {};
        for (const tile of document.querySelectorAll('#key-figures .tile')) {
          out[tile.querySelector('.k').textContent] = tile.querySelector('.v').textContent;
        }
        return out;""")
    kinds = js("return Array.from(document.querySelectorAll('#diagnosis article.finding'))"
               ".map(a => a.dataset.kind)")
    # Without findings the page has one "none" article: "Nothing stands out".
    assert kinds == ([finding["kind"] for finding in summary["findings"]] or ["none"])
    rows = js("return document.querySelectorAll('#step-table tbody tr').length")
    assert rows == len(summary["steps"])

    def percent(text: str) -> float:
        """A tile's percentage; "<0.1%" is taken as 0.05 (the tolerance covers it)."""
        return 0.05 if text == "<0.1%" else float(text.rstrip("%"))

    total = summary["step_total"]
    if summary["has_steps"] and summary["has_gpu"]:
        idle = 100 * total["gpu_idle_ns"] / total["duration_ns"]
        assert percent(tiles["GPU idle"]) == pytest.approx(idle, abs=0.051)
    if summary["has_gpu"]:
        devices = summary["devices"]
        busy = 100 * sum(d["busy_ns"] for d in devices) / sum(d["window_ns"] for d in devices)
        assert percent(tiles["GPU utilisation"]) == pytest.approx(busy, abs=0.051)
        assert tiles["Kernels"].replace(",", "") == str(summary["kernel_count"])


def test_a_merge_of_inputs_that_do_not_all_record_losses_says_so(tfprof_exe: pathlib.Path,
                                                                   tmp_path: pathlib.Path) -> None:
    # tfprof's trace states its losses (none); a PyTorch profiler trace does not: the merged
    # report's counts are the first input's, and the page says the other one records none.
    ours = input_bound_trace(tmp_path / "ours.json")
    theirs = ROOT / "tests/data/real/hta/triton_example/triton_example.json.gz"
    merged = tmp_path / "merged.json"
    run_tfprof(tfprof_exe, "merge", "--align", "start", "-o", str(merged), str(ours), str(theirs))
    page = tmp_path / "report.html"
    report(tfprof_exe, merged, "-o", page)
    text = page.read_text()
    assert 'id="unreported-inputs"' in text
    assert "1 merged input does not record them." in text
    assert "Nothing was lost in the inputs that record losses." in text
