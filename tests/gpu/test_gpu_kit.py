"""The GPU kit (scripts/gpu-kit.sh) as a bare GPU machine will meet it, proven here without a GPU:
copied to a fresh folder and run from another one with an empty environment, it needs nothing of
the machine that built it, installs its wheel for Python 3.12 (with pip, or unpacked where there is
no pip) and builds the Python extension for another Python, checks what needs no GPU and exits 77
naming what is missing. The proof's own checks (the soak's
accounting, the comparison with torch.profiler's kernels) run here on traces written from real
CUPTI records (tests/support/synthetic_gpu_trace).

Needs TFPROF_KIT_DIR (default build/gpu-kit) and TFPROF_BUILD_DIR (a build with
tests/synthetic_gpu_trace and the tfprof command); scripts/test.sh sets both.
"""
import copy
import glob
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

import check_gpu_soak
import check_kit
import gpu_proof
from gpu_device import no_device_reason

ROOT = pathlib.Path(__file__).resolve().parents[2]
KIT = pathlib.Path(os.environ.get("TFPROF_KIT_DIR", ROOT / "build" / "gpu-kit"))
BUILD = pathlib.Path(os.environ.get("TFPROF_BUILD_DIR", ROOT / "build" / "test-release"))
BARE_PATH = "/usr/bin:/bin"
WHEEL_PYTHON = "3.12"  # the GPU machines' Python, the one the kit carries a wheel for

if not (KIT / "run.sh").exists():
    pytest.skip(f"no GPU kit at {KIT} (scripts/gpu-kit.sh makes it)", allow_module_level=True)



@pytest.fixture()
def kit_copy(tmp_path):
    """The kit copied elsewhere, as the device tool carries it; symbolic links kept."""
    target = tmp_path / "carried" / "gpu-kit"
    shutil.copytree(KIT, target, symlinks=True)
    return target


def run_kit(kit, cwd, *args, python=None):
    env = {"PATH": BARE_PATH, "WORK": str(cwd / "work")}
    if python:
        env["PYTHON"] = python
    return subprocess.run(["bash", str(kit / "run.sh"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def proof_results(out):
    with open(out / "gpu-proof.json", encoding="utf-8") as file:
        report = json.load(file)
    return report, {stage["stage"]: stage for stage in report["stages"]}


def test_kit_is_self_contained():
    problems, report = check_kit.check(str(KIT), 60)
    assert problems == [], "\n".join(problems)
    for name in ("bin/tfprof", "bin/gpu_training_loop", "bin/bench_gpu_launch", "bin/gpu_soak",
                 "bin/tfprof_dump_step_stats", "lib/libtfprof_preload.so", "include/tfprof/tfprof.h",
                 "lib/cmake/tfprof/tfprofConfig.cmake", "python/CMakeLists.txt",
                 "python/tfprof/__init__.py", "checks/gpu_proof.py", "checks/bench_gpu_launch.py",
                 "kit.json"):
        assert (KIT / name).exists(), name
    assert any(line.startswith("lib/libtfprof.so.") for line in report)
    info = json.loads((KIT / "kit.json").read_text())
    assert info["build_type"] == "RelWithDebInfo" and info["cuda_architectures"]
    # One wheel, for CPython 3.12 and the kit's version, its ELF files checked like the kit's.
    assert [p.name for p in (KIT / "wheels").iterdir()] == [info["wheel"]]
    assert re.fullmatch(rf"tfprof-{re.escape(info['version'])}-cp312-cp312-manylinux_2_\d+_x86_64\.whl",
                        info["wheel"]), info["wheel"]
    wheel_problems, wheel_report = check_kit.check_wheel(str(KIT))
    assert wheel_problems == [], "\n".join(wheel_problems)
    in_wheel = sorted(line.split(":")[1] for line in wheel_report if line.count(":") >= 2)
    assert in_wheel == ["tfprof/_bin/tfprof", "tfprof/_native.cpython-312-x86_64-linux-gnu.so",
                        "tfprof/libtfprof.so.0", "tfprof/libtfprof_preload.so"], in_wheel


def test_check_kit_finds_a_leak(tmp_path, kit_copy):
    """The checker itself fails on a kit that needs a library of the building machine."""
    shutil.copy("/usr/bin/python3", kit_copy / "bin" / "needs_libpython")
    problems, _ = check_kit.check(str(kit_copy), 60)
    assert problems  # python3 is dynamically linked against libraries outside the allowed set
    problems, _ = check_kit.check(str(kit_copy), 1)
    assert any("MiB" in p for p in problems)


def test_check_kit_checks_the_wheel(kit_copy):
    """An ELF file inside the wheel is checked as the kit's are; a second wheel, or one of another
    version than kit.json's, is a problem."""
    wheel = next((kit_copy / "wheels").iterdir())
    leaky = kit_copy / "leaky.whl"
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(leaky, "w") as target:
        for member in source.infolist():
            target.writestr(member, source.read(member))
        target.write("/usr/bin/python3", "tfprof/_bin/needs_libpython")
    shutil.move(leaky, wheel)
    problems, _ = check_kit.check_wheel(str(kit_copy))
    assert [p for p in problems if "needs_libpython needs" in p and p.startswith("wheels/")], problems

    shutil.copy(wheel, kit_copy / "wheels" / wheel.name.replace("cp312", "cp311"))
    problems, _ = check_kit.check_wheel(str(kit_copy))
    assert any("wheels/ holds 2 wheels" in p for p in problems), problems

    (kit_copy / "wheels" / wheel.name.replace("cp312", "cp311")).unlink()
    older = wheel.with_name(re.sub(r"tfprof-[0-9.]+-", "tfprof-0.0.1-", wheel.name))
    wheel.rename(older)
    problems, _ = check_kit.check_wheel(str(kit_copy))
    assert any("is tfprof 0.0.1, the kit" in p for p in problems), problems
    assert any("kit.json names the wheel" in p for p in problems), problems


@pytest.mark.skipif(no_device_reason() is None, reason="this machine has a GPU: run.sh would run")
def test_bare_environment_without_gpu_exits_77_saying_why(tmp_path, kit_copy):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_kit(kit_copy, elsewhere)
    assert result.returncode == 77, result.stdout + result.stderr
    out = elsewhere / "gpu-proof-out"
    text = (out / "gpu-proof.txt").read_text()
    assert "NO GPU: no CUDA driver" in text
    report, stages = proof_results(out)
    assert stages["preflight"]["status"] == "PASS", stages["preflight"]
    assert "every library found" in " ".join(stages["preflight"]["lines"])
    assert [s for s in gpu_proof.STAGES[1:] if stages[s]["status"] != "SKIP"] == []
    assert report["machine"]["kit"]["commit"]
    assert (out / "gpu-proof.log").stat().st_size > 0


def python_for_the_wheel():
    """A CPython 3.12 here: on PATH or pyenv's."""
    candidates = [shutil.which(f"python{WHEEL_PYTHON}")]
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(f"{root}/versions/{WHEEL_PYTHON}.*/bin/python{WHEEL_PYTHON}"),
                         reverse=True)
    for candidate in filter(None, candidates):  # a pyenv shim may be on PATH but not work
        version = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True)
        if version.stdout.strip() == WHEEL_PYTHON:
            return candidate
    pytest.skip(f"no CPython {WHEEL_PYTHON} here (python{WHEEL_PYTHON} on PATH or pyenv's)")


def check_installed_from_the_wheel(elsewhere, how):
    """The preflight installed the kit's wheel (nothing built), imported the package from
    work/site, where the wheel's own libtfprof.so.0 is what it loaded, and traced a CPU loop."""
    report, stages = proof_results(elsewhere / "gpu-proof-out")
    assert report["binding"] == "python package (the kit's wheel)", stages["preflight"]
    lines = " ".join(stages["preflight"]["lines"])
    wheel = json.loads((KIT / "kit.json").read_text())["wheel"]
    assert f"{wheel} {how}" in lines, lines
    assert "traced a CPU loop" in lines and "read it back: 3 steps" in lines
    package = elsewhere / "work" / "site" / "tfprof"
    assert [p.name for p in package.glob("_native*.so")] == ["_native.cpython-312-x86_64-linux-gnu.so"]
    assert (package / "libtfprof.so.0").exists()
    assert os.access(package / "_bin" / "tfprof", os.X_OK)
    assert not (elsewhere / "work" / "python-build").exists()  # nothing was built


@pytest.mark.skipif(no_device_reason() is None, reason="this machine has a GPU: run.sh would run")
def test_wheel_installed_with_pip_for_python_312(tmp_path, kit_copy):
    """The GPU machines' Python: preflight installs the kit's wheel with pip --no-index (a stage
    that runs Python under tfprof is chosen, so preflight installs the package)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_kit(kit_copy, elsewhere, "--stages", "torch", python=python_for_the_wheel())
    assert result.returncode == 77, result.stdout + result.stderr
    check_installed_from_the_wheel(elsewhere, "installed by pip --no-index")


@pytest.mark.skipif(no_device_reason() is None, reason="this machine has a GPU: run.sh would run")
def test_wheel_unpacked_for_a_python_without_pip(tmp_path, kit_copy):
    """A venv without pip (as uv makes them): the wheel is unpacked, its program kept executable."""
    venv = tmp_path / "no-pip-venv"
    subprocess.run([python_for_the_wheel(), "-m", "venv", "--without-pip", str(venv)], check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_kit(kit_copy, elsewhere, "--stages", "torch", python=str(venv / "bin" / "python"))
    assert result.returncode == 77, result.stdout + result.stderr
    check_installed_from_the_wheel(elsewhere, "unpacked (no pip for")


@pytest.mark.skipif(no_device_reason() is None, reason="this machine has a GPU: run.sh would run")
def test_extension_built_for_a_python_without_a_wheel(tmp_path, kit_copy):
    """With a Python the kit has no wheel for and pybind11 (this test's, unless it is 3.12),
    preflight builds the extension against the kit's libtfprof.so, imports the package from the
    kit's layout and traces a CPU loop."""
    pytest.importorskip("pybind11")
    tag = "cp%d%d" % sys.version_info[:2]
    if tag == "cp" + WHEEL_PYTHON.replace(".", ""):
        pytest.skip(f"this Python is {WHEEL_PYTHON}, the kit's wheel's")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_kit(kit_copy, elsewhere, "--stages", "torch", python=sys.executable)
    assert result.returncode == 77, result.stdout + result.stderr
    report, stages = proof_results(elsewhere / "gpu-proof-out")
    assert report["binding"] == "python package (built here)", stages["preflight"]
    lines = " ".join(stages["preflight"]["lines"])
    assert f"the kit has no wheel for {tag}" in lines, lines
    assert "traced a CPU loop" in lines and "read it back: 3 steps" in lines
    built = list((elsewhere / "work" / "site" / "tfprof").glob("_native*.so"))
    assert len(built) == 1
    runpath = subprocess.run(["readelf", "-d", str(built[0])], capture_output=True, text=True).stdout
    assert "[$ORIGIN]" in runpath


# ---- the proof's checks on traces of real CUPTI records ---------------------------------------------

def synthetic_trace(tmp_path, extension):
    program = BUILD / "tests" / "synthetic_gpu_trace"
    if not program.exists():
        pytest.skip(f"{program} was not built (no CUPTI headers)")
    path = tmp_path / f"synthetic.{extension}"
    subprocess.run([str(program), str(path)], check=True)
    return path


def summary_of(path):
    result = subprocess.run([str(BUILD / "tfprof"), "summary", "--json", str(path)],
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)["traces"][0]


SOAK = {"launched": 5, "executed": 5, "steps": 3, "gpu_state": 3, "gpu_records_dropped": 0}


def test_soak_accounting_reads_the_streamed_tfrecord(tmp_path):
    """synthetic_gpu_trace's 5 kernels in 3 steps, written as the soak writes (.tfrecord), counted
    once each although StepStats lists a kernel under stream:all and its stream."""
    trace = summary_of(synthetic_trace(tmp_path, "tfrecord"))
    assert trace["kernel_count"] == 5
    assert check_gpu_soak.account(SOAK, trace) == "all 5 kernels in the trace, none dropped"
    # A kernel that starts after its step's end is in no step, but in the trace all the same.
    late = copy.deepcopy(trace)
    late["steps"][0]["kernels"] -= 1
    assert check_gpu_soak.account(SOAK, late) == "all 5 kernels in the trace, none dropped"
    for change, message in (({"launched": 6, "executed": 6}, "6 launched, none dropped"),
                            ({"executed": 4}, "the device ran 4 kernels of 5"),
                            ({"steps": 4}, "the trace has 3 steps"),
                            ({"gpu_state": 2}, "not active"),
                            ({"gpu_records_dropped": 1}, "the trace says 0 GPU records")):
        with pytest.raises(check_gpu_soak.AccountingError, match=message):
            check_gpu_soak.account(dict(SOAK, **change), trace)
    # Drops (of unknown kind) may account for kernels missing from the trace, never for more.
    dropped_trace = copy.deepcopy(trace)
    dropped_trace["losses"]["gpu_records_dropped"] = 2
    soak = dict(SOAK, launched=7, executed=7, gpu_records_dropped=2)
    assert "2 records dropped" in check_gpu_soak.account(soak, dropped_trace)
    with pytest.raises(check_gpu_soak.AccountingError, match="do not account"):
        check_gpu_soak.account(dict(soak, launched=8, executed=8), dropped_trace)


def test_kernel_comparison_with_torch_profiler(tmp_path):
    """The torch stage's comparison on tfprof's Chrome trace of real CUPTI records: the same trace
    passes, a missing kernel or a duration 5% (and over 1 us) off fails, 1% off passes."""
    with open(synthetic_trace(tmp_path, "json"), encoding="utf-8") as file:
        events = json.load(file)["traceEvents"]
    kernels = gpu_proof.kernels_by_name(events)
    assert {name: len(d) for name, d in kernels.items()} == {
        "gemm(float const*, float const*, float*, int)": 3, "relu(float*, int)": 2}
    figures = gpu_proof.compare_kernels(kernels, kernels)
    assert figures["kernels"] == 5 and figures["outside_tolerance"] == []

    def scaled(factor):
        return {name: [d * factor for d in durations] for name, durations in kernels.items()}
    assert gpu_proof.compare_kernels(scaled(1.01), kernels)["outside_tolerance"] == []
    # 5% is 1.5 us of gemm's 30 us median, but under the 1 us floor for relu's 15 us.
    outside = gpu_proof.compare_kernels(scaled(1.05), kernels)["outside_tolerance"]
    assert [line.split(":")[0] for line in outside] == ["gemm(float const*, float const*, float*, int)"]
    fewer = dict(kernels, **{"relu(float*, int)": kernels["relu(float*, int)"][:1]})
    with pytest.raises(gpu_proof.StageFailed, match="kernel counts differ"):
        gpu_proof.compare_kernels(fewer, kernels)
    assert gpu_proof.step_durations_ms(events, r"step (\d+)") == [0.1, 0.1, 0.1]


def test_step_times_from_a_pytorch_profiler_trace():
    with open(ROOT / "tests" / "fuzz" / "corpus" / "pytorch_trace.json", encoding="utf-8") as file:
        events = json.load(file)["traceEvents"]
    assert gpu_proof.step_durations_ms(events, r"ProfilerStep#(\d+)") == [0.9005]
    assert sum(len(d) for d in gpu_proof.kernels_by_name(events).values()) == 1


# ---- a minimal Debian root: no -dev package, no Python, no driver --------------------------------------

MINIMAL_ROOT = ROOT / "build" / "debootstrap-bookworm-minbase"


@pytest.fixture(scope="module")
def minimal_root():
    """A `debootstrap --variant=minbase` Debian 12 (made once, kept in build/), with /proc."""
    if os.geteuid() != 0 or shutil.which("debootstrap") is None or shutil.which("chroot") is None:
        pytest.skip("needs root and debootstrap (scripts/install-deps.sh installs it)")
    if not (MINIMAL_ROOT / "usr" / "bin" / "bash").exists():
        shutil.rmtree(MINIMAL_ROOT, ignore_errors=True)
        subprocess.run(["debootstrap", "--variant=minbase", "bookworm", str(MINIMAL_ROOT),
                        "http://deb.debian.org/debian"], check=True, capture_output=True, timeout=900)
    subprocess.run(["mount", "-t", "proc", "proc", str(MINIMAL_ROOT / "proc")], check=True)
    try:
        yield MINIMAL_ROOT
    finally:
        subprocess.run(["umount", str(MINIMAL_ROOT / "proc")], check=False)


def in_root(root, script):
    return subprocess.run(["chroot", str(root), "/usr/bin/env", "-i", f"PATH={BARE_PATH}",
                           "/bin/bash", "-c", script], capture_output=True, text=True, timeout=300)


def test_kit_in_a_minimal_debian_root(tmp_path, minimal_root):
    kit = minimal_root / "opt" / "gpu-kit"
    shutil.rmtree(kit, ignore_errors=True)
    shutil.copytree(KIT, kit, symlinks=True)
    shutil.copy(synthetic_trace(tmp_path, "json"), minimal_root / "tmp" / "synthetic.json")
    assert in_root(minimal_root, "command -v python3 || echo none").stdout.strip() == "none"

    # Every library of every program resolves, but the driver's.
    listed = in_root(minimal_root, "for f in /opt/gpu-kit/bin/* /opt/gpu-kit/lib/*.so*; do "
                     "/lib64/ld-linux-x86-64.so.2 --list $f 2>&1 | sed \"s|^|$f: |\"; done")
    missing = [l for l in listed.stdout.splitlines() if "not found" in l or "cannot open" in l]
    assert missing and all("libcuda.so.1" in l and "gpu_training_loop" in l for l in missing), missing

    summary = in_root(minimal_root, "/opt/gpu-kit/bin/tfprof summary --json /tmp/synthetic.json")
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout)["traces"][0]["kernel_count"] == 5
    traced = in_root(minimal_root, "cd /tmp && /opt/gpu-kit/bin/tfprof run -o /tmp/true.json -- "
                     "/bin/true && cat /tmp/true.json")
    assert traced.returncode == 0, traced.stderr
    assert json.loads(traced.stdout)["tfprof"]["command_line"] == ["/bin/true"]

    proof = in_root(minimal_root, "cd /tmp && bash /opt/gpu-kit/run.sh")
    assert proof.returncode == 77, proof.stdout + proof.stderr
    assert "no GPU here: no NVIDIA driver" in proof.stderr and "no python3" in proof.stderr
