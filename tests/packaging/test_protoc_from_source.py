"""Building on a machine without Debian 12's protoc 3.21.12: CMake sees an installed protoc of
another version, builds protoc 3.21.12 from the same pinned protobuf source as the runtime
(cmake/Protobuf.cmake, tools/protoc_cpp), and that protoc generates exactly the code the pinned
protoc does, byte for byte, so the rest of the build is the same.

Needs TFPROF_BUILD_DIR: a tree configured with the installed protoc 3.21.12 and built (its
generated/ sources are the reference). The tree this test configures (build/protoc-from-source) is
kept between runs; only protoc and the generated files are built in it.
"""
import os
import pathlib
import stat
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCE = pathlib.Path(os.environ.get("TFPROF_BUILD_DIR", ROOT / "build" / "test-release"))
TREE = ROOT / "build" / "protoc-from-source"
GENERATED = pathlib.Path("generated") / "tfprof" / "tensorflow"


def test_another_protoc_version_builds_the_pinned_one_which_generates_the_same_code(tmp_path):
    reference_files = sorted((REFERENCE / GENERATED).glob("*.pb.*"))
    if not reference_files:
        pytest.skip(f"no generated sources in {REFERENCE} to compare with")
    cache = (REFERENCE / "CMakeCache.txt").read_text()
    assert "TFPROF_PROTOC_FROM_SOURCE:BOOL=OFF" in cache, "the reference tree must use the installed protoc"

    # A protoc of another version, as on a machine with a newer protobuf-compiler.
    other = tmp_path / "protoc"
    other.write_text("#!/bin/sh\necho 'libprotoc 25.1'\n")
    other.chmod(other.stat().st_mode | stat.S_IXUSR)
    configure = subprocess.run(
        ["cmake", "-S", str(ROOT), "-B", str(TREE), f"-DTFPROF_SYSTEM_PROTOC={other}",
         # Nothing here is run or timed: unoptimised, without debug information, builds fastest.
         "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_CXX_FLAGS_DEBUG=", "-DTFPROF_BUILD_TESTS=OFF",
         "-DTFPROF_BUILD_EXAMPLES=OFF", "-DTFPROF_BUILD_BENCHMARKS=OFF"],
        capture_output=True, text=True)
    assert configure.returncode == 0, configure.stderr
    assert (f"building protoc 3.21.12 from source ({other} is 'libprotoc 25.1', not libprotoc "
            "3.21.12)") in configure.stdout

    build = subprocess.run(["cmake", "--build", str(TREE), "-j", str(os.cpu_count() or 2),
                            "--target", "tfprof_protos"], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    version = subprocess.run([str(TREE / "tfprof_protoc"), "--version"], capture_output=True,
                             text=True)
    assert version.stdout.strip() == "libprotoc 3.21.12"

    generated = sorted((TREE / GENERATED).glob("*.pb.*"))
    assert [p.name for p in generated] == [p.name for p in reference_files]
    for ours, reference in zip(generated, reference_files):
        assert ours.read_bytes() == reference.read_bytes(), f"{ours.name} differs from {reference}"
