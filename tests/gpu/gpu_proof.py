"""The GPU proof the kit runs (build/gpu-kit/run.sh; docs/gpu.md): every GPU path of tfprof checked
on a real GPU, from a kit built elsewhere, with nothing but the machine's own Python and (for the
PyTorch stages) PyTorch.

Stages, in order (--stages/--skip choose; preflight always runs):
  preflight  the kit's programs load (no library missing but the CUDA driver), CUPTI is found, the
             kit's wheel is installed for this Python (for another Python the extension is built
             here against the kit's libtfprof.so) and traces a CPU loop, `tfprof run` and
             `tfprof summary` work
  tests      the CUDA example's trace checked against what it launched, as JSON and as .pb
  preload    the same example unmodified: LD_PRELOAD, `tfprof run`, CUDA_INJECTION64_PATH
  torch      a PyTorch training loop traced by tfprof and, in another process, by torch.profiler:
             kernels by name, per-kernel durations, step times
  autorun    the same loop unmodified under `tfprof run` (the PyTorch integration): kernels by name
             and count equal to torch.profiler's, each under the module and step that launched it
  nvtx       `tfprof run` on the same loop with emit_nvtx(): NVTX ranges as ops, kernels under them,
             `tfprof summary` of it (and HTA's breakdown where HTA can be imported)
  bench      the time tfprof adds per kernel launch, alone (C++) and against torch.profiler
  soak       minutes of kernels at a high rate: kernels in the trace + dropped = launched
Writes into --out: gpu-proof.txt (the one-page summary), gpu-proof.json (every figure),
gpu-proof.log (every command and its output), nvtx-summary.txt and traces.tar.gz (small traces).
Exits 0 when every stage run passed, 1 when one failed, 77 when there is no usable GPU (the
summary says what is missing; preflight has run all the same).
"""
import argparse
import collections
import datetime
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import traceback
import zipfile

import check_kit
from gpu_device import SKIP_EXIT_CODE, no_device_reason

STAGES = ("preflight", "tests", "preload", "torch", "autorun", "capture", "nvtx", "bench", "soak")
TORCH_STEPS = 20
NVTX_STEPS = 10
# Per-kernel durations of the two tracers agree within this (relative) or within 1 us.
DURATION_TOLERANCE = 0.02
DURATION_FLOOR_US = 1.0
# Libraries the kit's programs may need from the machine: the CUDA driver (only with a GPU).
DRIVER_LIBRARIES = ("libcuda.so.1",)
LOG_LIMIT = 256 * 1024  # characters of one command's output kept in gpu-proof.log


class StageFailed(Exception):
    """A stage's check did not hold; the message says what."""


class StageSkipped(Exception):
    """A stage could not run here; the message says why."""


class Proof:
    def __init__(self, kit, out, work):
        self.kit, self.out, self.work = kit, out, work
        os.makedirs(out, exist_ok=True)
        os.makedirs(work, exist_ok=True)
        self.log_file = open(os.path.join(out, "gpu-proof.log"), "w", encoding="utf-8")
        self.results = []  # (stage, status, lines)
        self.figures = {}
        self.keep = []  # small files for traces.tar.gz
        self.binding = "not built"
        self.site = os.path.join(work, "site")
        # The interpreter's own folder first: a venv's cmake, ninja and pybind11 live there.
        self.env = dict(os.environ)
        self.env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable),
                                            self.env.get("PATH", "/usr/bin:/bin")])
        self.env["PYTHONUNBUFFERED"] = "1"
        self.c_program_env = dict(self.env)  # CUPTI for programs without Python (see find_cupti)

    # ---- output ---------------------------------------------------------------------------------
    def say(self, text):
        print(text, flush=True)
        self.log_file.write(text + "\n")
        self.log_file.flush()

    def path(self, *parts):
        return os.path.join(self.kit, *parts)

    def run(self, command, timeout, env=None, check=True, cwd=None):
        """Runs a command, logs it with its output; raises StageFailed on a non-zero exit when
        `check`."""
        self.say("$ " + " ".join(command))
        begin = time.monotonic()
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                    env=env or self.env, cwd=cwd, errors="replace")
        except subprocess.TimeoutExpired as expired:
            partial = b"".join(o for o in (expired.stdout, expired.stderr) if isinstance(o, bytes))
            self.log_file.write(f"(timed out after {timeout} s)\n"
                                f"{partial.decode(errors='replace')[-LOG_LIMIT:]}\n")
            raise StageFailed(f"{os.path.basename(command[0])} ran over {timeout} s")
        except OSError as error:
            raise StageFailed(f"cannot run {command[0]}: {error}")
        output = result.stdout + result.stderr
        if len(output) > LOG_LIMIT:  # the log comes back from the device within 16 MiB
            output = output[:LOG_LIMIT // 2] + "\n[... cut ...]\n" + output[-LOG_LIMIT // 2:]
        self.log_file.write(output + f"(exit {result.returncode}, {time.monotonic() - begin:.1f} s)\n")
        self.log_file.flush()
        if check and result.returncode != 0:
            tail = (result.stdout + result.stderr).strip().splitlines()[-5:]
            raise StageFailed(f"{os.path.basename(command[0])} exited {result.returncode}: "
                              + " | ".join(tail))
        return result

    def checker(self, script, *args, timeout=600, env=None):
        """Runs one of the kit's checkers; returns its PASS line, raises on FAIL or SKIP."""
        result = self.run([sys.executable, self.path("checks", script), *args], timeout,
                          env=env, check=False)
        lines = result.stdout.strip().splitlines()
        verdicts = [l for l in lines if l.startswith(("PASS: ", "FAIL: ", "SKIP: "))]
        last = verdicts[-1] if verdicts else f"no verdict (exit {result.returncode})"
        if result.returncode == SKIP_EXIT_CODE:
            raise StageSkipped(last[len("SKIP: "):])
        if result.returncode != 0 or not last.startswith("PASS: "):
            raise StageFailed(last.removeprefix("FAIL: ") + _stderr_tail(result))
        results = [json.loads(l[len("RESULT: "):]) for l in lines if l.startswith("RESULT: ")]
        return last[len("PASS: "):], (results[-1] if results else None)


def _stderr_tail(result):
    tail = result.stderr.strip().splitlines()[-3:]
    return (" (stderr: " + " | ".join(tail) + ")") if tail else ""


# ---- what machine this is ---------------------------------------------------------------------------

def describe_machine(proof):
    info = {"host": platform.node(), "kernel": platform.release(),
            "python": platform.python_version(), "python_executable": sys.executable}
    smi = shutil.which("nvidia-smi", path=proof.env["PATH"])
    if smi:
        query = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total",
                                "--format=csv,noheader"], capture_output=True, text=True)
        info["gpus"] = [l.strip() for l in query.stdout.splitlines() if l.strip()]
        header = subprocess.run([smi], capture_output=True, text=True).stdout
        match = re.search(r"CUDA Version: ([0-9.]+)", header)
        info["driver_cuda"] = match[1] if match else "unknown"
    else:
        info["gpus"] = []
        info["driver_cuda"] = "no nvidia-smi"
    try:
        import torch  # noqa: F401  (only its version; the stages run it in child processes)
        info["torch"] = f"{torch.__version__} (CUDA {torch.version.cuda})"
    except Exception as error:  # any failure to import is "no torch" here
        info["torch"] = f"not importable ({type(error).__name__}: {error})"
    kit_info = os.path.join(proof.kit, "kit.json")
    if os.path.exists(kit_info):
        with open(kit_info, encoding="utf-8") as file:
            info["kit"] = json.load(file)
    return info


def find_cupti(proof):
    """libcupti candidates: the CUDA toolkit's, and the nvidia-cuda-cupti pip package's. tfprof
    searches both itself; programs without Python see the pip package only through a venv, so when
    the toolkit has none, they are pointed at the pip package's (TFPROF_CUPTI_PATH)."""
    roots = [proof.env.get("CUDA_HOME"), proof.env.get("CUDA_PATH"), "/usr/local/cuda"]
    roots += sorted(glob.glob("/usr/local/cuda-*"))
    toolkit = []
    for root in filter(None, roots):
        for sub in ("lib64", "lib", "extras/CUPTI/lib64", "targets/x86_64-linux/lib"):
            toolkit += sorted(glob.glob(os.path.join(root, sub, "libcupti.so*")))
    pip = []
    for entry in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_cupti/lib", "nvidia/cu12/lib"):
            pip += sorted(glob.glob(os.path.join(entry, sub, "libcupti.so*")))
    toolkit = sorted({os.path.realpath(p) for p in toolkit})
    pip = sorted({os.path.realpath(p) for p in pip})
    if not toolkit and pip:
        proof.c_program_env["TFPROF_CUPTI_PATH"] = pip[0]
    return {"toolkit": toolkit, "pip": pip,
            "for_c_programs": proof.c_program_env.get("TFPROF_CUPTI_PATH", "tfprof's own search")}


# ---- preflight ---------------------------------------------------------------------------------------

def check_libraries_resolve(proof):
    """Every ELF file of the kit finds every library it needs here (the CUDA driver excepted, which
    only a GPU machine has)."""
    ldd = shutil.which("ldd", path=proof.env["PATH"])
    if ldd is None:
        return "ldd not found: not checked"
    files = list(check_kit.elf_files(proof.kit))
    missing = []
    for path in files:
        result = subprocess.run([ldd, path], capture_output=True, text=True)
        for line in result.stdout.splitlines():
            if "not found" in line and line.split()[0] not in DRIVER_LIBRARIES:
                missing.append(f"{os.path.basename(path)}: {line.strip()}")
    if missing:
        raise StageFailed("libraries missing: " + "; ".join(missing))
    return f"{len(files)} ELF files, every library found"


def kit_library(proof):
    """The kit's libtfprof.so.MAJOR.MINOR.PATCH (lib/ holds its soname links too)."""
    return os.path.realpath(glob.glob(proof.path("lib", "libtfprof.so.*"))[0])


def install_python_wheel(proof):
    """The kit's wheel for this interpreter installed into work/site without network (pip
    --no-index --target); nothing is built. Raises StageSkipped when the kit has no wheel for this
    Python or pip refuses it (its glibc tag), so that the caller builds the extension instead."""
    tag = "cp%d%d" % sys.version_info[:2]
    wheels = sorted(glob.glob(proof.path("wheels", "*.whl")))
    matching = [w for w in wheels if f"-{tag}-{tag}-" in os.path.basename(w)]
    if not matching:
        names = ", ".join(os.path.basename(w) for w in wheels) or "none"
        raise StageSkipped(f"the kit has no wheel for {tag} (its wheels: {names})")
    wheel = matching[-1]
    name = os.path.basename(wheel)
    shutil.rmtree(proof.site, ignore_errors=True)
    env = dict(proof.env, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True,
                      env=env).returncode != 0:
        # A venv made by uv has no pip. A wheel is a zip of the package: unpacked as pip would,
        # once its glibc tag (manylinux_2_M: glibc 2.M or newer) is checked here.
        needed = re.search(r"manylinux_(\d+)_(\d+)_", name)
        libc, libc_version = platform.libc_ver()
        have = tuple(int(p) for p in re.findall(r"\d+", libc_version)[:2])
        if needed and (libc != "glibc" or have < (int(needed[1]), int(needed[2]))):
            raise StageSkipped(f"{name} needs glibc {needed[1]}.{needed[2]}, this machine has "
                               f"{libc or 'another C library'} {libc_version}")
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.infolist():
                path = archive.extract(member, proof.site)
                mode = member.external_attr >> 16
                if mode & 0o777:  # _bin/tfprof stays executable
                    os.chmod(path, mode & 0o777)
        return f"{name} unpacked (no pip for {sys.executable})"
    result = proof.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                        "--target", proof.site, wheel], 300, env=env, check=False)
    if result.returncode != 0:
        shutil.rmtree(proof.site, ignore_errors=True)
        tail = (result.stdout + result.stderr).strip().splitlines()[-1:]
        raise StageSkipped(f"pip did not install {name}: {' '.join(tail)}")
    return f"{name} installed by pip --no-index"


def build_python_binding(proof):
    """For a Python the kit has no wheel for: the extension built with this machine's Python,
    pybind11 and compiler against the kit's libtfprof.so, and the package laid out as the wheel
    lays it out, in work/site/tfprof."""
    cmake = shutil.which("cmake", path=proof.env["PATH"])
    if cmake is None:
        raise StageSkipped("no cmake on PATH")
    pybind11 = subprocess.run([sys.executable, "-m", "pybind11", "--cmakedir"], capture_output=True,
                              text=True)
    if pybind11.returncode != 0:
        raise StageSkipped(f"pybind11 is not installed for {sys.executable}")
    build = os.path.join(proof.work, "python-build")
    configure = [cmake, "-S", proof.path("python"), "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                 f"-DCMAKE_PREFIX_PATH={proof.kit}", f"-Dpybind11_DIR={pybind11.stdout.strip()}",
                 f"-DPython_EXECUTABLE={sys.executable}"]
    if shutil.which("ninja", path=proof.env["PATH"]) and not os.path.exists(
            os.path.join(build, "Makefile")):
        configure += ["-G", "Ninja"]
    proof.run(configure, 300)
    proof.run([cmake, "--build", build, "-j", str(os.cpu_count() or 2)], 600)
    built = glob.glob(os.path.join(build, "tfprof", "_native*.so"))
    if not built:
        raise StageFailed(f"the build made no _native*.so in {build}/tfprof")

    package = os.path.join(proof.site, "tfprof")
    shutil.rmtree(proof.site, ignore_errors=True)
    shutil.copytree(proof.path("python", "tfprof"), package)
    shutil.copy2(built[0], package)
    library = kit_library(proof)
    major = os.path.basename(library).split(".so.")[1].split(".")[0]
    shutil.copy2(library, os.path.join(package, f"libtfprof.so.{major}"))
    shutil.copy2(proof.path("lib", "libtfprof_preload.so"), package)
    os.makedirs(os.path.join(package, "_bin"))
    shutil.copy2(proof.path("bin", "tfprof"), os.path.join(package, "_bin"))
    shutil.copytree(proof.path("include"), os.path.join(package, "include"))


def kit_json_version(proof):
    """kit.json's version, or None."""
    try:
        with open(proof.path("kit.json"), encoding="utf-8") as file:
            return json.load(file).get("version")
    except (OSError, ValueError):
        return None


def python_smoke(proof):
    """The package imported from the site folder uses the libtfprof.so.0 it carries (the wheel's,
    or the kit's copied in) and traces a CPU loop."""
    trace = os.path.join(proof.work, "preflight", "python_smoke.json")
    code = (
        "import json, sys, tfprof\n"
        "assert tfprof.library_path().startswith(sys.argv[2]), tfprof.library_path()\n"
        "with tfprof.trace(sys.argv[1], cuda='off'):\n"
        "    for n in range(3):\n"
        "        with tfprof.step(n), tfprof.span('kit smoke'):\n"
        "            sum(range(10000))\n"
        "events = json.load(open(sys.argv[1]))['traceEvents']\n"
        "print(tfprof.__version__, sum(e.get('name') == 'kit smoke' for e in events))\n")
    result = proof.run([sys.executable, "-c", code, trace, proof.site], 120,
                       env=dict(proof.env, PYTHONPATH=proof.site))
    version, spans = result.stdout.split()
    if spans != "3":
        raise StageFailed(f"the Python smoke trace has {spans} 'kit smoke' spans, expected 3")
    return version, trace


def preflight(proof, build_binding=True):
    lines = []
    os.makedirs(os.path.join(proof.work, "preflight"), exist_ok=True)
    proof.run([proof.path("bin", "tfprof"), "--version"], 30)
    lines.append(check_libraries_resolve(proof))
    if shutil.which("readelf", path=proof.env["PATH"]):
        proof.run([sys.executable, proof.path("checks", "check_kit.py"), proof.kit], 120)
        lines.append("check_kit.py: self-contained (libraries needed, RUNPATHs, hidden symbols; "
                     "the wheel's too)")
    cupti = find_cupti(proof)
    proof.figures["cupti"] = cupti
    lines.append(f"CUPTI: toolkit {cupti['toolkit'] or 'none'}; pip {cupti['pip'] or 'none'}")
    # The wheel first: the GPU machines' Python is the one it is built for, and nothing is built
    # here then. The extension's build is the fallback for another Python, ctypes the last resort.
    no_wheel = None
    try:
        if not build_binding:
            raise StageSkipped("no chosen stage runs Python under tfprof")
        try:
            how = install_python_wheel(proof)
            proof.binding = "python package (the kit's wheel)"
        except (StageSkipped, StageFailed) as error:  # no wheel for it, or pip failed (timeout)
            no_wheel = error
            build_python_binding(proof)
            how = f"{error}: extension built here against the kit"
            proof.binding = "python package (built here)"
        version, smoke_trace = python_smoke(proof)
        kit_version = kit_json_version(proof)
        if kit_version and version != kit_version:
            raise StageFailed(f"the Python package is tfprof {version}, the kit {kit_version}")
        proof.env["PYTHONPATH"] = proof.site
        lines.append(f"Python package for {sys.executable}: {how}; tfprof {version} traced a "
                     "CPU loop")
    except (StageSkipped, StageFailed) as error:
        reason = f"{no_wheel}; {error}" if no_wheel else str(error)
        proof.binding = f"ctypes ({reason})"
        smoke_trace = None
        lines.append(f"Python package not installed ({reason}): PyTorch stages would use ctypes")
    proof.env["TFPROF_LIBRARY"] = kit_library(proof)
    run_trace = os.path.join(proof.work, "preflight", "tfprof_run.json")
    proof.run([proof.path("bin", "tfprof"), "run", "-o", run_trace, "--", sys.executable, "-c",
               "pass"], 60)
    with open(run_trace, encoding="utf-8") as file:
        header = json.load(file).get("tfprof", {})
    if sys.executable not in " ".join(header.get("command_line", [])):
        raise StageFailed(f"`tfprof run`'s trace names another command: {header.get('command_line')}")
    lines.append("`tfprof run` wrote a trace of a Python process")
    if smoke_trace:
        summary = proof.run([proof.path("bin", "tfprof"), "summary", "--json", smoke_trace], 60)
        steps = json.loads(summary.stdout)["traces"][0]["steps"]
        if len(steps) != 3:
            raise StageFailed(f"`tfprof summary` found {len(steps)} steps in the smoke trace, not 3")
        lines.append("`tfprof summary` read it back: 3 steps")
    return lines


# ---- the CUDA example ------------------------------------------------------------------------------

def example_args(proof, work):
    return ["--example", proof.path("bin", "gpu_training_loop"),
            "--dump-step-stats", proof.path("bin", "tfprof_dump_step_stats"), "--work-dir", work]


def stage_tests(proof):
    lines = []
    for fmt in ("json", "pb"):
        work = os.path.join(proof.work, f"example_{fmt}")
        verdict, _ = proof.checker("check_gpu_trace.py", "--format", fmt,
                                   *example_args(proof, work), env=proof.c_program_env)
        lines.append(f"{fmt}: {verdict}")
        if fmt == "json":
            proof.keep.append(os.path.join(work, "gpu_training_loop.json"))
    return lines


def stage_preload(proof):
    lines = []
    failures = []
    # Injection last: the driver loads the library inside cuInit, the least proven of the three.
    for launcher in ("ld_preload", "tfprof_run", "injection"):
        work = os.path.join(proof.work, f"example_{launcher}")
        try:
            verdict, _ = proof.checker(
                "check_gpu_trace.py", "--format", "json", *example_args(proof, work),
                "--launcher", launcher, "--preload", proof.path("lib", "libtfprof_preload.so"),
                "--tfprof", proof.path("bin", "tfprof"), "--timeout", "90",
                timeout=150, env=proof.c_program_env)
            lines.append(f"{launcher}: {verdict}")
        except (StageFailed, StageSkipped) as error:
            failures.append(f"{launcher}: {error}")
    if failures:
        raise StageFailed("; ".join(failures) + (" | passed: " + "; ".join(lines) if lines else ""))
    return lines


# ---- PyTorch ---------------------------------------------------------------------------------------

def require_torch(proof):
    result = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
                            capture_output=True, text=True, env=proof.env)
    if result.returncode != 0:
        raise StageSkipped(f"torch cannot be imported by {sys.executable}")
    if result.stdout.strip() != "True":
        raise StageSkipped("torch sees no CUDA device")


def run_torch_loop(proof, tracer, steps, trace=None, prefix=(), env=None):
    work = os.path.join(proof.work, "torch")
    os.makedirs(work, exist_ok=True)
    result_path = os.path.join(work, f"{tracer}_result.json")
    command = [*prefix, sys.executable, proof.path("checks", "torch_training_loop.py"),
               "--tracer", tracer, "--steps", str(steps), "--result", result_path]
    if trace:
        command += ["--trace", trace]
    proof.run(command, 240, env=env)
    with open(result_path, encoding="utf-8") as file:
        return json.load(file)


def load_events(path):
    with open(path, encoding="utf-8") as file:
        trace = json.load(file)
    return trace, trace["traceEvents"] if isinstance(trace, dict) else trace


def kernels_by_name(events):
    durations = collections.defaultdict(list)
    for event in events:
        if event.get("ph") == "X" and event.get("cat") == "kernel":
            durations[event["name"]].append(float(event.get("dur", 0)))
    return durations


def step_durations_ms(events, pattern):
    found = {}
    for event in events:
        if event.get("ph") == "X":
            match = re.fullmatch(pattern, event.get("name", ""))
            if match and event.get("cat") not in ("gpu_user_annotation",):
                found[int(match[1])] = float(event["dur"]) / 1e3
    return [found[n] for n in sorted(found)]


def count_differences(tfprof_kernels, torch_kernels):
    """{kernel name: (count in tfprof's trace, count in torch.profiler's)} where they differ."""
    counts_tfprof = {name: len(d) for name, d in tfprof_kernels.items()}
    counts_torch = {name: len(d) for name, d in torch_kernels.items()}
    return {name[:100]: (counts_tfprof.get(name, 0), counts_torch.get(name, 0))
            for name in set(counts_tfprof) | set(counts_torch)
            if counts_tfprof.get(name, 0) != counts_torch.get(name, 0)}


def compare_kernels(tfprof_kernels, torch_kernels):
    """Kernels by name: the same counts, and medians within the tolerance; raises on a
    difference, returns the figures."""
    differ = count_differences(tfprof_kernels, torch_kernels)
    if differ:
        raise StageFailed(f"kernel counts differ (tfprof, torch.profiler): {differ}")
    counts_tfprof = {name: len(d) for name, d in tfprof_kernels.items()}
    worst = (0.0, "")
    outside = []
    for name in counts_tfprof:
        ours, theirs = statistics.median(tfprof_kernels[name]), statistics.median(torch_kernels[name])
        allowed = max(DURATION_TOLERANCE * theirs, DURATION_FLOOR_US)
        gap = abs(ours - theirs)
        if gap > allowed:
            outside.append(f"{name[:60]}: {ours:.2f} vs {theirs:.2f} us")
        relative = gap / theirs if theirs > 0 else 0.0
        if relative > worst[0]:
            worst = (relative, name)
    return {"kernels": sum(counts_tfprof.values()), "kernel_names": len(counts_tfprof),
            "worst_median_gap": round(worst[0], 4), "worst_kernel": worst[1][:80],
            "outside_tolerance": outside}


def compare_op_device_time(summary, torch_ops):
    """tfprof's GPU time by op (`tfprof summary --json` of torch.profiler's own trace) against
    torch.profiler's key_averages() of the same run: each op's self GPU time (the kernels
    launched directly in it) within DURATION_TOLERANCE or 1 us per call. Totals are reported, not
    checked: key_averages() adds a name's time again for each nested call of the same name,
    tfprof counts a kernel once per name. Returns the figures; raises on a difference."""
    rows = {row["name"]: row for row in summary.get("gpu_time_by_op", [])}
    if not rows:
        raise StageFailed("`tfprof summary --json` of torch.profiler's trace has no gpu_time_by_op")
    outside, compared, worst = [], 0, (0.0, "")
    for name, (calls, self_us, total_us) in sorted(torch_ops.items()):
        if name.startswith("ProfilerStep#"):
            continue  # steps, not ops, in tfprof's model
        ours_us = rows.get(name, {}).get("gpu_self_ns", 0) / 1e3
        compared += 1
        gap = abs(ours_us - self_us)
        if gap > max(DURATION_TOLERANCE * self_us, DURATION_FLOOR_US * max(calls, 1)):
            outside.append(f"{name[:50]}: self {ours_us:.1f} vs {self_us:.1f} us")
        if self_us > 0 and gap / self_us > worst[0]:
            worst = (gap / self_us, name)
    top = max(torch_ops.items(), key=lambda item: item[1][2], default=(None, None))
    figures = {"ops_compared": compared, "worst_self_gap": round(worst[0], 4),
               "worst_op": worst[1][:80], "outside_tolerance": outside[:10]}
    if top[0] is not None:
        figures["top_op"] = {"name": top[0][:80], "torch_total_us": top[1][2],
                             "tfprof_total_us": rows.get(top[0], {}).get("gpu_total_ns", 0) / 1e3}
    if outside:
        raise StageFailed("GPU time by op differs from torch.profiler's key_averages(): "
                          + "; ".join(outside[:5]))
    return figures


def keep_compressed(proof, path):
    """Adds a gzip copy of `path` to what traces.tar.gz brings back."""
    subprocess.run(["gzip", "-kf", path], check=False)
    if os.path.exists(path + ".gz"):
        proof.keep.append(path + ".gz")


def stage_torch(proof):
    require_torch(proof)
    work = os.path.join(proof.work, "torch")
    traces = {tracer: os.path.join(work, f"{tracer}.json") for tracer in ("tfprof", "torch")}
    untraced = run_torch_loop(proof, "none", TORCH_STEPS)
    ours = run_torch_loop(proof, "tfprof", TORCH_STEPS, traces["tfprof"])
    theirs = run_torch_loop(proof, "torch", TORCH_STEPS, traces["torch"])
    for path in traces.values():
        keep_compressed(proof, path)
    tfprof_trace, tfprof_events = load_events(traces["tfprof"])
    _, torch_events = load_events(traces["torch"])
    gpu = tfprof_trace.get("tfprof", {}).get("gpu", {})
    tfprof_kernels, torch_kernels = kernels_by_name(tfprof_events), kernels_by_name(torch_events)
    tfprof_steps = step_durations_ms(tfprof_events, r"step (\d+)")
    torch_steps = step_durations_ms(torch_events, r"ProfilerStep#(\d+)")
    figures = {"binding": ours["binding"], "cupti": gpu.get("cupti"), "gpu_state": gpu.get("state"),
               "records_dropped": gpu.get("records_dropped"),
               "kernels": {"tfprof": sum(map(len, tfprof_kernels.values())),
                           "torch.profiler": sum(map(len, torch_kernels.values()))},
               "count_differences": count_differences(tfprof_kernels, torch_kernels),
               "step_ms_median": {
                   "untraced (wall)": statistics.median(untraced["step_ms"]),
                   "tfprof (wall)": statistics.median(ours["step_ms"]),
                   "torch.profiler (wall)": statistics.median(theirs["step_ms"]),
                   "tfprof timeline": statistics.median(tfprof_steps) if tfprof_steps else None,
                   "torch.profiler timeline": statistics.median(torch_steps) if torch_steps else None}}
    proof.figures["torch"] = figures
    if gpu.get("state") != "active":
        raise StageFailed(f"tfprof's GPU state is {gpu.get('state')!r}: {gpu.get('reason', '')}")
    comparison = compare_kernels(tfprof_kernels, torch_kernels)
    figures.update(comparison)
    if len(tfprof_steps) != TORCH_STEPS or len(torch_steps) != TORCH_STEPS:
        raise StageFailed(f"{len(tfprof_steps)} steps in tfprof's timeline, {len(torch_steps)} in "
                          f"torch.profiler's, of {TORCH_STEPS}")
    if comparison["outside_tolerance"]:
        raise StageFailed("per-kernel median durations differ beyond 2% or 1 us: "
                          + "; ".join(comparison["outside_tolerance"][:5]))
    summary = proof.run([proof.path("bin", "tfprof"), "summary", "--json", "--top", "100000",
                         traces["torch"]], 300)
    by_op = compare_op_device_time(json.loads(summary.stdout)["traces"][0],
                                   theirs.get("op_device_us") or {})
    figures["gpu_time_by_op"] = by_op
    steps = figures["step_ms_median"]
    return [f"GPU time by op equals key_averages()' self device time for {by_op['ops_compared']} "
            f"ops (worst gap {by_op['worst_self_gap']:.1%}: {by_op['worst_op'][:40]})",
            f"{comparison['kernels']} kernels of {comparison['kernel_names']} names, the same "
            f"counts as torch.profiler; median durations within {comparison['worst_median_gap']:.1%} "
            f"(worst: {comparison['worst_kernel'][:50]})",
            "median step ms: " + ", ".join(f"{k} {v:.2f}" for k, v in steps.items() if v is not None),
            f"binding: {ours['binding']}; libcupti {gpu.get('cupti')}"]


def stage_autorun(proof):
    """The loop with no tracer of its own under `tfprof run`: the PyTorch integration marks a step
    per optimizer step (the 3 untraced warm-up steps included, so steps 3.. are torch.profiler's 0..)
    and module spans; CUPTI attributes each kernel to the innermost one."""
    require_torch(proof)
    work = os.path.join(proof.work, "torch")
    trace = os.path.join(work, "autorun.json")
    torch_trace = os.path.join(work, "torch.json")
    if not os.path.exists(torch_trace):
        run_torch_loop(proof, "torch", TORCH_STEPS, torch_trace)
    run_torch_loop(proof, "none", TORCH_STEPS, env=proof.env, prefix=(
        proof.path("bin", "tfprof"), "run", "-o", trace, "--options", "cuda=on", "--"))
    tfprof_trace, events = load_events(trace)
    keep_compressed(proof, trace)
    _, torch_events = load_events(torch_trace)
    warmup = 3
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
               and isinstance(e.get("args", {}).get("step"), int) and e["args"]["step"] >= warmup]
    by_name = collections.defaultdict(list)
    for kernel in kernels:
        by_name[kernel["name"]].append(float(kernel.get("dur", 0)))
    steps = step_durations_ms(events, r"step (\d+)")
    attributed = [k for k in kernels if k["args"].get("op")]
    in_modules = [k for k in kernels if str(k["args"].get("op", "")).startswith("Sequential")]
    # Backward kernels come from torch's autograd thread: under the pass's span there, and under
    # the leaf layer's own backward op's span where it made them.
    in_backward = [k for k in kernels if str(k["args"].get("op", "")) == "backward"
                   or str(k["args"].get("op", "")).endswith(" (backward)")]
    in_layer_backward = [k for k in in_backward if k["args"]["op"] != "backward"]
    figures = {"gpu_state": tfprof_trace.get("tfprof", {}).get("gpu", {}).get("state"),
               "steps": len(steps), "kernels": len(kernels), "attributed": len(attributed),
               "under_modules": len(in_modules), "under_backward": len(in_backward),
               "under_layer_backward": len(in_layer_backward),
               "count_differences": count_differences(by_name, kernels_by_name(torch_events))}
    proof.figures["autorun"] = figures
    if figures["gpu_state"] != "active":
        raise StageFailed(f"GPU tracing was {figures['gpu_state']!r} under `tfprof run`")
    if len(steps) != TORCH_STEPS + warmup:
        raise StageFailed(f"{len(steps)} steps from the optimizer, expected {TORCH_STEPS + warmup}")
    if figures["count_differences"]:
        raise StageFailed(f"kernel counts differ from torch.profiler's (tfprof, torch.profiler): "
                          f"{figures['count_differences']}")
    if len(attributed) < 0.9 * len(kernels) or not in_modules or not in_layer_backward:
        raise StageFailed(f"{len(attributed)} of {len(kernels)} kernels under a span, "
                          f"{len(in_modules)} under a module, {len(in_backward)} under the backward "
                          f"pass ({len(in_layer_backward)} under a layer's backward op)")
    return [f"{len(kernels)} kernels in steps {warmup}..{TORCH_STEPS + warmup - 1}, the same counts as "
            f"torch.profiler; {len(attributed)} under a span, {len(in_modules)} under a module "
            f"({len(in_layer_backward)} of them in a layer's backward op), {len(in_backward)} under "
            f"the backward pass; {len(steps)} steps from the optimizer"]


def stage_capture(proof):
    """The loop with no tracer under `tfprof run --on-demand`, captured twice while it runs
    (`tfprof capture PID --steps 3`): each capture holds 3 whole steps and their kernels, GPU
    tracing active; CUPTI is subscribed by each capture's session only."""
    require_torch(proof)
    work = os.path.join(proof.work, "capture")
    os.makedirs(work, exist_ok=True)
    tfprof = proof.path("bin", "tfprof")
    command = [tfprof, "run", "--on-demand", "--options", "cuda=on", "--", sys.executable,
               proof.path("checks", "torch_training_loop.py"), "--tracer", "none",
               "--steps", "100000", "--result", os.path.join(work, "result.json")]
    proof.say("$ " + " ".join(command) + " &")
    log = open(os.path.join(work, "loop.log"), "w", encoding="utf-8")
    process = subprocess.Popen(command, env=proof.env, stdout=log, stderr=subprocess.STDOUT)
    figures = []
    try:
        endpoint = f"@tfprof-capture/{process.pid}"
        deadline = time.monotonic() + 180
        while process.poll() is None and time.monotonic() < deadline:
            with open("/proc/net/unix", encoding="utf-8") as table:
                if endpoint in table.read():
                    break
            time.sleep(0.2)
        else:
            raise StageFailed(f"the loop under `tfprof run --on-demand` never listened ({endpoint})")
        for number in range(2):
            out = os.path.join(work, f"capture{number}.json")
            proof.run([tfprof, "capture", str(process.pid), "--steps", "3", "--step-wait", "120",
                       "-o", out], 300)
            trace, events = load_events(out)
            steps = step_durations_ms(events, r"step (\d+)")
            kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
            in_steps = [k for k in kernels if isinstance(k.get("args", {}).get("step"), int)]
            state = trace.get("tfprof", {}).get("gpu", {}).get("state")
            figures.append({"steps": len(steps), "kernels": len(kernels),
                            "kernels_in_steps": len(in_steps), "gpu_state": state})
            keep_compressed(proof, out)
            if state != "active":
                raise StageFailed(f"capture {number}: GPU tracing was {state!r}")
            if len(steps) != 3:
                raise StageFailed(f"capture {number}: {len(steps)} steps, expected 3")
            if not kernels or len(in_steps) < 0.9 * len(kernels):
                raise StageFailed(f"capture {number}: {len(in_steps)} of {len(kernels)} kernels in "
                                  "its steps")
    finally:
        proof.figures["capture"] = figures
        process.kill()
        process.wait()
        log.close()
    return [f"2 captures of the running loop: " + "; ".join(
        f"{f['steps']} steps, {f['kernels']} kernels ({f['kernels_in_steps']} in steps)"
        for f in figures)]


def stage_nvtx(proof):
    require_torch(proof)
    trace = os.path.join(proof.work, "torch", "nvtx.json")
    # The preload starts its session before Python runs, so it cannot look on sys.path: name the
    # pip package's libcupti, the one torch loads, where there is one.
    env = dict(proof.env)
    if proof.figures["cupti"]["pip"]:
        env["TFPROF_CUPTI_PATH"] = proof.figures["cupti"]["pip"][0]
    run_torch_loop(proof, "nvtx", NVTX_STEPS, env=env, prefix=(
        proof.path("bin", "tfprof"), "run", "-o", trace, "--options", "cuda=on", "--"))
    tfprof_trace, events = load_events(trace)
    keep_compressed(proof, trace)
    spans = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    aten_spans = [e for e in spans if e["name"].startswith("aten::")]
    # The loop's steps only: its untraced warm-up runs under the preload too, outside emit_nvtx.
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
               and "step" in e.get("args", {})]
    under_aten = [k for k in kernels if str(k.get("args", {}).get("op", "")).startswith("aten::")]
    steps = step_durations_ms(events, r"step (\d+)")
    figures = {"aten_spans": len(aten_spans), "kernels": len(kernels),
               "kernels_under_aten_ops": len(under_aten), "steps": len(steps),
               "gpu_state": tfprof_trace.get("tfprof", {}).get("gpu", {}).get("state")}
    summary = proof.run([proof.path("bin", "tfprof"), "summary", trace], 300)
    with open(os.path.join(proof.out, "nvtx-summary.txt"), "w", encoding="utf-8") as file:
        file.write(summary.stdout)
    summary_json = json.loads(proof.run([proof.path("bin", "tfprof"), "summary", "--json", trace],
                                        300).stdout)["traces"][0]
    figures["summary_kernels"] = sum(s["kernels"] for s in summary_json["steps"])
    figures["summary_findings"] = [f["kind"] for f in summary_json["findings"]]
    figures["hta"] = hta_breakdown(proof, trace)
    proof.figures["nvtx"] = figures
    if figures["gpu_state"] != "active":
        raise StageFailed(f"GPU tracing was {figures['gpu_state']!r} under `tfprof run`")
    if not aten_spans:
        raise StageFailed("no aten:: NVTX range became a span")
    if not kernels or len(under_aten) < 0.9 * len(kernels):
        raise StageFailed(f"{len(under_aten)} of {len(kernels)} kernels are attributed to an "
                          "aten:: op (expected at least 90%)")
    if len(steps) != NVTX_STEPS:
        raise StageFailed(f"{len(steps)} steps from the 'step N' NVTX ranges, expected {NVTX_STEPS}")
    return [f"{len(aten_spans)} aten:: ranges as ops, {len(under_aten)} of {len(kernels)} kernels "
            f"under them, {len(steps)} steps; summary: {figures['summary_kernels']} kernels in steps, "
            f"findings {figures['summary_findings'] or 'none'}", f"HTA: {figures['hta']}"]


def hta_breakdown(proof, trace):
    """HTA's temporal breakdown of the trace, where HolisticTraceAnalysis can be imported."""
    code = ("import sys, shutil, tempfile, os\n"
            "from hta.trace_analysis import TraceAnalysis\n"
            "d = tempfile.mkdtemp(); shutil.copy(sys.argv[1], os.path.join(d, 'rank0.json'))\n"
            "print(TraceAnalysis(trace_dir=d).get_temporal_breakdown(visualize=False)"
            ".to_json(orient='records'))\n")
    result = subprocess.run([sys.executable, "-c", code, trace], capture_output=True, text=True,
                            env=proof.env, timeout=300)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["failed"])[-1]
        return "not run (" + ("HTA is not installed" if "No module named 'hta'" in last else last) + ")"
    return json.loads(result.stdout.strip().splitlines()[-1])


# ---- launch overhead and soak ----------------------------------------------------------------------

def stage_bench(proof):
    lines = []
    cpp = proof.run([proof.path("bin", "bench_gpu_launch"), "50000", "5",
                     os.path.join(proof.work, "bench_gpu_launch.json")], 180, env=proof.c_program_env)
    lines += [l.strip() for l in cpp.stdout.splitlines() if "us/launch" in l]
    proof.figures["bench_cpp"] = cpp.stdout.strip()
    require_torch(proof)
    python = proof.run([sys.executable, proof.path("checks", "bench_gpu_launch.py"), "--rounds", "3",
                        "--launches", "20000", "--work-dir", proof.work], 400, check=False)
    proof.figures["bench_torch"] = python.stdout.strip()
    lines += [l.strip() for l in python.stdout.splitlines()
              if l.strip().startswith(("tfprof ", "torch.profiler", "added time", "verdict"))]
    if python.returncode != 0:
        raise StageFailed("bench_gpu_launch.py: " + (lines[-1] if lines else _stderr_tail(python)))
    return lines


def stage_soak(proof, seconds, rate):
    verdict, figures = proof.checker(
        "check_gpu_soak.py", "--seconds", str(seconds), "--rate", str(rate),
        "--soak", proof.path("bin", "gpu_soak"), "--tfprof", proof.path("bin", "tfprof"),
        "--work-dir", os.path.join(proof.work, "soak"), timeout=seconds + 400,
        env=proof.c_program_env)
    proof.figures["soak"] = figures
    return [verdict]


# ---- the summary ------------------------------------------------------------------------------------

def write_summary(proof, machine, no_gpu_reason, quiet=False):
    passed = sum(1 for _, status, _ in proof.results if status == "PASS")
    failed = sum(1 for _, status, _ in proof.results if status == "FAIL")
    skipped = sum(1 for _, status, _ in proof.results if status == "SKIP")
    kit = machine.get("kit", {})
    lines = [f"tfprof GPU proof, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
             f"kit: {kit.get('version', '?')} from commit {kit.get('commit', '?')}, built "
             f"{kit.get('built', '?')} with {kit.get('cuda_compiler', '?')}",
             f"machine: {machine['host']}, Linux {machine['kernel']}, Python {machine['python']}",
             "GPU: " + ("; ".join(machine["gpus"]) or "none listed by nvidia-smi"),
             f"CUDA the driver supports: {machine['driver_cuda']}; torch {machine['torch']}",
             f"tfprof from Python: {proof.binding}"]
    if no_gpu_reason:
        lines.append(f"NO GPU: {no_gpu_reason}")
    lines.append("")
    for stage, status, stage_lines in proof.results:
        lines.append(f"{stage:<10} {status}")
        lines += ["    " + line for line in stage_lines]
    lines.append("")
    lines.append(f"{passed} stages passed, {failed} failed, {skipped} skipped")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(proof.out, "gpu-proof.txt"), "w", encoding="utf-8") as file:
        file.write(text)
    with open(os.path.join(proof.out, "gpu-proof.json"), "w", encoding="utf-8") as file:
        json.dump({"machine": machine, "binding": proof.binding, "no_gpu": no_gpu_reason,
                   "stages": [{"stage": s, "status": st, "lines": l} for s, st, l in proof.results],
                   "figures": proof.figures}, file, indent=1, default=str)
    kept = [p for p in proof.keep if os.path.exists(p)]
    if kept and sum(os.path.getsize(p) for p in kept) < 12 * 2**20:
        with tarfile.open(os.path.join(proof.out, "traces.tar.gz"), "w:gz") as archive:
            for path in kept:
                archive.add(path, arcname=os.path.relpath(path, proof.work))
    if not quiet:
        print("\n" + text, end="")
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kit", required=True, help="the kit's folder")
    parser.add_argument("--out", required=True, help="where the summary, log and traces go")
    parser.add_argument("--work", required=True, help="scratch space (traces of minutes of kernels)")
    parser.add_argument("--stages", help=f"comma-separated, of {', '.join(STAGES)} (default all)")
    parser.add_argument("--skip", default="", help="comma-separated stages to leave out")
    parser.add_argument("--soak-seconds", type=int, default=300)
    parser.add_argument("--soak-rate", type=int, default=50000, help="kernels per second")
    parser.add_argument("--deadline", type=int, default=0,
                        help="seconds after which no further stage starts (0: none)")
    args = parser.parse_args()
    chosen = args.stages.split(",") if args.stages else list(STAGES)
    unknown = [s for s in chosen + [s for s in args.skip.split(",") if s] if s not in STAGES]
    if unknown:
        parser.error(f"unknown stage(s) {', '.join(unknown)}; stages: {', '.join(STAGES)}")
    chosen = ["preflight"] + [s for s in STAGES[1:] if s in chosen and s not in args.skip.split(",")]

    proof = Proof(os.path.abspath(args.kit), os.path.abspath(args.out), os.path.abspath(args.work))
    machine = describe_machine(proof)
    proof.say(f"gpu-proof: kit {proof.kit}, output {proof.out}, stages {', '.join(chosen)}")
    started = time.monotonic()
    stage_functions = {
        "preflight": lambda p: preflight(
            p, build_binding=bool({"torch", "autorun", "capture", "bench"} & set(chosen))),
        "tests": stage_tests, "preload": stage_preload, "torch": stage_torch,
        "autorun": stage_autorun, "capture": stage_capture, "nvtx": stage_nvtx,
        "bench": stage_bench, "soak": lambda p: stage_soak(p, args.soak_seconds, args.soak_rate)}
    no_gpu_reason = None
    for stage in chosen:
        if stage != "preflight" and no_gpu_reason is None:
            no_gpu_reason = no_device_reason() or ""
        if stage != "preflight" and no_gpu_reason:
            proof.results.append((stage, "SKIP", [f"no GPU: {no_gpu_reason}"]))
            continue
        if args.deadline and time.monotonic() - started > args.deadline:
            proof.results.append((stage, "SKIP", [f"not started: past --deadline {args.deadline} s"]))
            continue
        proof.say(f"=== gpu-proof: {stage}")
        begin = time.monotonic()
        try:
            lines = stage_functions[stage](proof)
            status = "PASS"
        except StageSkipped as skipped:
            status, lines = "SKIP", [str(skipped)]
        except StageFailed as failure:
            status, lines = "FAIL", [str(failure)]
        except Exception:  # a bug in a stage must not cost the other stages
            status, lines = "FAIL", ["unexpected error: " + traceback.format_exc().strip().splitlines()[-1]]
            proof.log_file.write(traceback.format_exc())
        lines.append(f"({time.monotonic() - begin:.0f} s)")
        proof.results.append((stage, status, lines))
        proof.say(f"=== gpu-proof: {stage} {status}: {lines[0]}")
        # After every stage: a run cut off by a time limit still leaves what it found.
        write_summary(proof, machine, no_gpu_reason or None, quiet=True)
    if no_gpu_reason is None:  # preflight alone: say all the same whether a GPU is here
        no_gpu_reason = no_device_reason() or ""
    failed = write_summary(proof, machine, no_gpu_reason)
    if failed:
        return 1
    return SKIP_EXIT_CODE if no_gpu_reason else 0

if __name__ == "__main__":
    sys.exit(main())
