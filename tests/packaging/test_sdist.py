"""The sdist (scripts/build-wheels.sh, in TFPROF_DIST_DIR, default build/dist) builds from source
where only CMake, a C++ compiler, zlib's headers and Python (with its headers) are installed.

The machine for that is a Debian 12 root made by debootstrap with build-essential, cmake,
zlib1g-dev, python3-dev and python3-venv (and ccache, a compiler cache only, so that CI does not compile the
same sources again on every run); nothing of Abseil, protobuf, protoc or pybind11. It is made once
per machine in ~/.cache/tfprof-envs (TFPROF_SDIST_ROOT names another place). There,
`pip install tfprof-X.Y.Z.tar.gz` in a clean venv builds everything from the sdist: Abseil and
protobuf from the tarballs it carries (no download), protoc from that source, the library, the
command, the preload library and the extension; pip fetches only the build backend from PyPI.
The installed package then records a trace and its command reads it back.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from release_files import DIST, ROOT, tfprof_version  # noqa: E402

BUILD_ROOT = pathlib.Path(os.environ.get(
    "TFPROF_SDIST_ROOT", os.path.expanduser("~/.cache/tfprof-envs/debian12-sdist-root")))
PACKAGES = ["build-essential", "cmake", "zlib1g-dev", "python3-dev", "python3-venv", "ccache",
            "ca-certificates"]
BARE_PATH = "/usr/bin:/bin"
HOST_CA_BUNDLE = os.environ.get("PIP_CERT") or "/etc/ssl/certs/ca-certificates.crt"




@pytest.fixture(scope="module")
def sdist():
    path = DIST / f"tfprof-{tfprof_version()}.tar.gz"
    if not path.exists():
        pytest.skip(f"no {path.name} in {DIST} (scripts/build-wheels.sh -o {DIST} builds it)")
    return path


def mounts_under(root):
    """The mount points inside root, deepest first (from /proc/mounts)."""
    prefix = os.path.realpath(root) + "/"
    with open("/proc/mounts", encoding="utf-8") as table:
        points = [line.split()[1].replace("\\040", " ") for line in table]
    return sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True)


def unmount_all(root):
    """Unmounts whatever is mounted in root (lazily: a process still inside cannot keep it), so
    that nothing of the host (its compiler cache) is reachable through root when it is removed."""
    for point in mounts_under(root):
        subprocess.run(["umount", "-l", point], check=False)
    left = mounts_under(root)
    assert not left, f"still mounted in {root}: {left}"


@pytest.fixture(scope="module")
def build_root():
    """The Debian 12 root with the build tools alone, made once (a failed attempt leaves nothing),
    with /proc, the network's resolver and the host's compiler cache mounted while tests run."""
    if os.geteuid() != 0 or shutil.which("debootstrap") is None or shutil.which("chroot") is None:
        pytest.skip("needs root and debootstrap (scripts/install-deps.sh installs it)")
    # Mounts an earlier run could not undo (a killed test) come off before anything is removed.
    for folder in (BUILD_ROOT, BUILD_ROOT.with_name(BUILD_ROOT.name + ".partial")):
        if folder.exists():
            unmount_all(folder)
    stamp = BUILD_ROOT / ".tfprof-packages"
    if not stamp.exists() or stamp.read_text() != ",".join(PACKAGES):
        partial = BUILD_ROOT.with_name(BUILD_ROOT.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        made = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
                               "bookworm", str(partial)], capture_output=True, text=True, timeout=1800)
        assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
        (partial / ".tfprof-packages").write_text(",".join(PACKAGES))
        shutil.rmtree(BUILD_ROOT, ignore_errors=True)
        partial.rename(BUILD_ROOT)
    shutil.copy("/etc/resolv.conf", BUILD_ROOT / "etc" / "resolv.conf")
    # The host's certificate authorities, which may include a proxy's that pip must trust here.
    if os.path.exists(HOST_CA_BUNDLE):
        shutil.copy(HOST_CA_BUNDLE, BUILD_ROOT / "etc" / "ssl" / "certs" / "host-ca-certificates.crt")
    try:
        subprocess.run(["mount", "-t", "proc", "proc", str(BUILD_ROOT / "proc")], check=True)
        host_cache = subprocess.run(["ccache", "-k", "cache_dir"], capture_output=True, text=True)
        if host_cache.returncode == 0 and os.path.isdir(host_cache.stdout.strip()):
            (BUILD_ROOT / "ccache").mkdir(exist_ok=True)
            subprocess.run(["mount", "--bind", host_cache.stdout.strip(), str(BUILD_ROOT / "ccache")],
                           check=True)
        yield BUILD_ROOT
    finally:
        unmount_all(BUILD_ROOT)


def in_root(root, script, timeout=300, **environment):
    settings = {"PATH": BARE_PATH, "HOME": "/root"}
    if (root / "etc" / "ssl" / "certs" / "host-ca-certificates.crt").exists():
        settings["PIP_CERT"] = "/etc/ssl/certs/host-ca-certificates.crt"
    variables = [f"{k}={v}" for k, v in {**settings, **environment}.items()]
    # A session of its own, so that a timeout ends pip and the compilers too, not bash alone.
    process = subprocess.Popen(["chroot", str(root), "/usr/bin/env", "-i", *variables, "/bin/bash",
                                "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def test_the_sdist_builds_from_source_with_cmake_a_compiler_and_zlib_alone(sdist, build_root, tmp_path):
    # What the root lacks: the libraries tfprof builds itself, protoc, pybind11.
    absent = in_root(build_root, "for p in libabsl-dev libprotobuf-dev protobuf-compiler pybind11-dev "
                     "python3-pybind11; do dpkg -s $p >/dev/null 2>&1 && echo installed: $p; done; "
                     "command -v protoc || true; ls /usr/include/absl /usr/include/google 2>/dev/null")
    assert absent.stdout.strip() == "", absent.stdout
    present = in_root(build_root, "cmake --version | head -1; c++ --version | head -1; "
                      "test -f /usr/include/zlib.h && echo zlib.h; python3 --version")
    assert "cmake version 3.25" in present.stdout and "zlib.h" in present.stdout, present.stdout

    shutil.rmtree(build_root / "tmp" / "sdist-check", ignore_errors=True)
    (build_root / "tmp" / "sdist-check").mkdir(parents=True)
    shutil.copy(sdist, build_root / "tmp" / "sdist-check" / sdist.name)
    cache = {}
    if (build_root / "ccache").is_dir() and os.listdir(build_root / "ccache"):
        # Paths under /tmp (pip's unpacked sdist) are hashed relative to the build folder, so
        # the objects of earlier runs (and of the wheels' build) are found again.
        cache = {"CMAKE_C_COMPILER_LAUNCHER": "ccache", "CMAKE_CXX_COMPILER_LAUNCHER": "ccache",
                 "CCACHE_DIR": "/ccache", "CCACHE_BASEDIR": "/tmp", "CCACHE_NOHASHDIR": "1"}
    install = in_root(
        build_root,
        "set -e; cd /tmp/sdist-check; python3 -m venv venv; "
        f"venv/bin/python -m pip install -v --disable-pip-version-check {sdist.name} > install.log 2>&1",
        timeout=2400, **cache)  # below the packaging suite's ctest limit
    log = (build_root / "tmp" / "sdist-check" / "install.log").read_text(errors="replace")
    assert install.returncode == 0, log[-6000:]
    assert "Successfully installed tfprof-" + tfprof_version() in log, log[-3000:]
    # protoc 3.21.12 built from the sdist's protobuf source; nothing downloaded by CMake.
    assert "building protoc 3.21.12 from source (no protoc is installed)" in log, log[-6000:]
    assert "Downloading http" not in log, [line for line in log.splitlines() if "Downloading http" in line]

    # The installed package records a trace; its command (the wheel's console script) reads it.
    traced = in_root(build_root, """cd /tmp/sdist-check && venv/bin/python -c '
import tfprof
with tfprof.trace("trace.json", cuda="off"):
    for n in range(3):
        with tfprof.step(n), tfprof.span("sdist smoke"):
            sum(range(10000))
print(tfprof.__version__, tfprof.library_path())
' && venv/bin/tfprof summary --json trace.json""")
    assert traced.returncode == 0, traced.stdout + traced.stderr
    first, rest = traced.stdout.split("\n", 1)
    version, library = first.split()
    assert version == tfprof_version()
    assert library.startswith("/tmp/sdist-check/venv/lib/python3"), library
    summary = json.loads(rest)["traces"][0]
    assert len(summary["steps"]) == 3, summary["steps"]
    trace = json.loads((build_root / "tmp" / "sdist-check" / "trace.json").read_text())
    assert sum(e.get("name") == "sdist smoke" for e in trace["traceEvents"]) == 3
