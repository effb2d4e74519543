"""What scripts/build-wheels.sh makes for a release: one manylinux wheel for each CPython 3.9-3.13
and the sdist, in TFPROF_DIST_DIR (default build/dist, where scripts/test.sh builds them).

Each wheel is installed with its test extra into a clean virtual environment of its own Python and
passes the whole Python suite there (tests/bindings/python, about a minute each).
"""
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from release_files import DIST, ROOT, tfprof_version  # noqa: E402

PYTHONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]




def tag_of(version):
    return "cp" + version.replace(".", "")


def interpreter_of(version):
    """CPython X.Y as scripts/build-wheels.sh finds it: on PATH, else pyenv's newest X.Y."""
    pyenv = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(glob.glob(f"{pyenv}/versions/{version}.*/bin/python{version}"),
                         key=lambda path: [int(n) for n in re.findall(r"\d+", path.split("/")[-3])],
                         reverse=True)
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == version:
            return candidate
    return None


@pytest.fixture(scope="module")
def dist():
    if not list(DIST.glob("tfprof-*")):
        pytest.skip(f"nothing in {DIST} (scripts/build-wheels.sh -o {DIST} builds it)")
    return DIST


def the_wheel(dist, version):
    tag = tag_of(version)
    wheels = sorted(dist.glob(f"tfprof-{tfprof_version()}-{tag}-{tag}-*.whl"))
    assert len(wheels) == 1, f"{tag}: {[w.name for w in wheels]} in {dist}"
    return wheels[0]


def test_one_manylinux_wheel_per_python_and_the_sdist(dist):
    version = tfprof_version()
    names = sorted(p.name for p in dist.glob("tfprof-*"))
    expected_wheels = {tag_of(v) for v in PYTHONS}
    found = {}
    for name in names:
        wheel = re.fullmatch(rf"tfprof-{re.escape(version)}-(cp3\d+)-(cp3\d+)-(\S+)\.whl", name)
        if wheel:
            assert wheel.group(1) == wheel.group(2), name
            # auditwheel repaired it: a manylinux policy, not the plain linux tag pip gives.
            assert re.fullmatch(r"manylinux_2_\d+_x86_64", wheel.group(3)), name
            found[wheel.group(1)] = name
    assert set(found) == expected_wheels, names
    assert f"tfprof-{version}.tar.gz" in names, names
    for name in found.values():
        size = (dist / name).stat().st_size
        assert 1 << 20 < size < 10 << 20, f"{name}: {size} bytes"
        with zipfile.ZipFile(dist / name) as archive:
            wheel_info = archive.read(f"tfprof-{version}.dist-info/WHEEL").decode()
            tag = name.split("-")[2]
            # The tag inside the wheel agrees with its name, and the extension is that Python's.
            assert re.search(rf"^Tag: {tag}-{tag}-manylinux_2_\d+_x86_64$", wheel_info, re.M), wheel_info
            # The metadata names the Pythons the release has wheels for, no more and no fewer.
            metadata = archive.read(f"tfprof-{version}.dist-info/METADATA").decode()
            named = re.findall(r"^Classifier: Programming Language :: Python :: (3\.\d+)$", metadata, re.M)
            assert named == PYTHONS, named
            extensions = [n for n in archive.namelist() if re.fullmatch(r"tfprof/_native\..*\.so", n)]
            assert extensions == [f"tfprof/_native.cpython-{tag[2:]}-x86_64-linux-gnu.so"], extensions


def test_every_wheel_carries_the_same_c_library(dist):
    """The C parts are built once: libtfprof, the preload library and the command are the same
    bytes in every wheel (auditwheel changes nothing in them: they need no external library)."""
    digests = {}
    for version in PYTHONS:
        with zipfile.ZipFile(the_wheel(dist, version)) as archive:
            digests[version] = tuple(archive.read(f"tfprof/{name}") for name in
                                     ("libtfprof.so.0", "libtfprof_preload.so", "_bin/tfprof"))
    first = digests[PYTHONS[0]]
    assert all(d == first for d in digests.values()), "the wheels' C parts differ"


@pytest.mark.parametrize("version", PYTHONS)
def test_the_wheel_in_a_clean_venv_passes_the_python_suite(dist, version, tmp_path):
    python = interpreter_of(version)
    if python is None:
        pytest.skip(f"no CPython {version} on this machine (PATH or pyenv)")
    wheel = the_wheel(dist, version)
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    venv_python = str(venv / "bin" / "python")
    install = subprocess.run([venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              f"{wheel}[test]"], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]

    # The installed package, not the source tree's, is what the suite imports.
    where = subprocess.run([venv_python, "-c", "import tfprof; print(tfprof.__version__, tfprof.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    installed_version, location = where.stdout.split()
    assert installed_version == tfprof_version()
    assert location.startswith(str(venv)), location

    # The suite from the source root, whose files it reads (README, examples, header); the
    # package it imports is the installed one: the root holds no `tfprof` package.
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TFPROF_")}
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    suite = subprocess.run([venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "tests/bindings/python"], capture_output=True, text=True, cwd=ROOT,
                           env=environment)
    summary = suite.stdout.strip().splitlines()[-1] if suite.stdout.strip() else ""
    print(f"CPython {version}: {summary}")
    assert suite.returncode == 0, suite.stdout[-6000:] + suite.stderr[-3000:]
    assert re.search(r"\d+ passed", summary) and "failed" not in summary, summary
