"""Each wheel is self-contained: its ELF files need only what every manylinux system has (glibc,
the C/C++ runtime, zlib) or files inside the wheel; Abseil and the protobuf runtime are linked in
with their symbols hidden; `auditwheel show` names the manylinux policy it meets and no external
library it would have to graft in.

Inspects the wheels scripts/build-wheels.sh made in TFPROF_DIST_DIR (default build/dist), else the
one scripts/python-env.sh built into build/wheelhouse/venv/, or the one TFPROF_WHEEL names. Needs
auditwheel (the test extra).
"""
import os
import pathlib
import re
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "gpu"))
import check_kit  # noqa: E402  (the GPU kit's checker of the same properties)


def wheels_to_check():
    if os.environ.get("TFPROF_WHEEL"):
        return [pathlib.Path(os.environ["TFPROF_WHEEL"])]
    dist = pathlib.Path(os.environ.get("TFPROF_DIST_DIR", ROOT / "build" / "dist"))
    return (sorted(dist.glob("tfprof-*.whl")) or
            sorted((ROOT / "build" / "wheelhouse" / "venv").glob("tfprof-*.whl"))[-1:])


@pytest.fixture(params=wheels_to_check() or [None], ids=lambda p: p.name.split("-")[2] if p else "none")
def wheel(request):
    if request.param is None:
        pytest.skip("no wheel in build/dist or build/wheelhouse/venv (scripts/build-wheels.sh builds them)")
    return request.param


def test_wheel_elf_files_need_nothing_outside_it(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path)
    package = tmp_path / "tfprof"
    names = {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()}
    for expected in ("libtfprof.so.0", "libtfprof_preload.so", "_bin/tfprof",
                     "include/tfprof/tfprof.h"):
        assert expected in names, sorted(names)
    assert any(re.fullmatch(r"_native\..*\.so", name) for name in names), sorted(names)
    problems, report = check_kit.check(str(package), 60)
    assert problems == [], "\n".join(problems + report)
    # The runtime itself: nothing of Abseil or protobuf among the libraries it needs.
    needed, _ = check_kit.dynamic_entries(str(package / "libtfprof.so.0"))
    assert not [n for n in needed if "absl" in n or "protobuf" in n], needed


def test_auditwheel_names_a_manylinux_policy(wheel):
    pytest.importorskip("auditwheel")
    result = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())  # auditwheel wraps its lines
    print(text)
    policy = re.search(r'consistent with the following platform tag: "(manylinux_2_\d+_x86_64)"', text)
    assert policy, text
    assert "external shared libraries are required" not in text or \
        re.search(r"external shared libraries are required by the wheel: \{\}", text), text
