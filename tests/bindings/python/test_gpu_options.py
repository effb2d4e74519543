"""GPU tracing from Python where no GPU can be traced (no NVIDIA driver here): ``cuda="on"``
raises with the reason, ``cuda="auto"`` traces the host and says why the GPU was not traced."""

import ctypes
import json

import pytest

import tfprof
from tfprof import _options



def _has_cuda_driver() -> bool:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


NO_DRIVER = not _has_cuda_driver()


@pytest.mark.skipif(not NO_DRIVER, reason="a CUDA driver is present: the GPU may really be traced")
def test_cuda_on_without_a_driver_raises_naming_the_cause(tmp_path):
    with pytest.raises(RuntimeError, match=r"cuda=on: no CUDA driver"):
        tfprof.trace(tmp_path / "t.json", cuda="on").start()
    assert not tfprof.is_running()
    assert not (tmp_path / "t.json").exists()


@pytest.mark.skipif(not NO_DRIVER, reason="a CUDA driver is present: the GPU may really be traced")
def test_cuda_auto_without_a_driver_traces_the_host_and_records_why(tmp_path):
    path = tmp_path / "t.json"
    with tfprof.trace(path, cuda="auto") as session:
        with tfprof.span("step_work"):
            pass
        stats = session.stats
    assert stats is not None
    assert stats.gpu_state == "unavailable"
    assert stats.gpu_records == 0
    trace = json.loads(path.read_text())
    assert trace["tfprof"]["gpu"]["state"] == "unavailable"
    assert "no CUDA driver" in trace["tfprof"]["gpu"]["reason"]
    assert [e["name"] for e in trace["traceEvents"] if e["ph"] == "X"] == ["step_work"]


def test_cuda_off_is_reported_as_off(tmp_path):
    with tfprof.trace(tmp_path / "t.json", cuda="off") as session:
        stats = session.stats
    assert stats is not None and stats.gpu_state == "off"


def test_pip_installed_cupti_is_offered_to_the_library(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "nvidia" / "cu13" / "lib").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    assert _options.with_cupti_search({})["cupti_search"].split(":")[0] == str(site)
    # A CUPTI the caller chose, or GPU tracing turned off, is left alone.
    assert "cupti_search" not in _options.with_cupti_search({"cupti_path": "/x/libcupti.so"})
    assert "cupti_search" not in _options.with_cupti_search({"cuda": "off"})
