"""One runtime per process: ctypes and C extensions join Python's session; packaging facts;
the stubs match the module."""

import ctypes
import importlib
import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import textwrap

import tfprof
from trace_file import encloses, only, read_trace

HERE = pathlib.Path(__file__).parent
SOURCE_ROOT = HERE.parents[2]


def header_version():
    header = (SOURCE_ROOT / "include" / "tfprof" / "tfprof.h").read_text()
    parts = [re.search(rf"#define TFPROF_VERSION_{part} (\d+)", header).group(1) for part in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def test_version_comes_from_the_c_header():
    assert tfprof.__version__ == header_version()
    assert importlib.metadata.version("tfprof") == header_version()
    assert tfprof._native.version_number() == tfprof._native.HEADER_VERSION


def test_the_package_carries_the_library_and_header_it_uses():
    package_dir = pathlib.Path(tfprof.__file__).parent
    library = pathlib.Path(tfprof.library_path())
    assert library.parent == package_dir and library.name == "libtfprof.so.0"
    assert (pathlib.Path(tfprof.get_include()) / "tfprof" / "tfprof.h").is_file()
    readelf = subprocess.run(["readelf", "-d", tfprof._native.__file__], capture_output=True, text=True, check=True).stdout
    assert re.search(r"RUNPATH.*\[\$ORIGIN\]", readelf)
    assert "libtfprof.so.0" in readelf
    assert set(tfprof.__all__) <= set(dir(tfprof))


def test_ctypes_calls_into_libtfprof_land_in_the_python_trace(tmp_path):
    library = ctypes.CDLL(tfprof.library_path())
    library.prof_span_begin.argtypes = [ctypes.c_char_p]
    path = tmp_path / "ctypes.json"
    with tfprof.trace(path):
        assert library.prof_is_running() == 1
        with tfprof.span("python_op"):
            library.prof_span_begin(b"ctypes_op")
            library.prof_span_end()
    spans = read_trace(path).spans()
    assert encloses(only(spans, "python_op"), only(spans, "ctypes_op"))


def test_a_c_extension_built_against_the_wheel_records_into_the_same_trace(tmp_path):
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    library_dir = os.path.dirname(tfprof.library_path())
    output = tmp_path / f"tfprof_test_c_extension{suffix}"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-O2", "-Wall", "-Werror", str(HERE / "c_extension.c"), "-o", str(output),
         f"-I{sysconfig.get_paths()['include']}", f"-I{tfprof.get_include()}",
         f"-L{library_dir}", "-l:libtfprof.so.0", f"-Wl,-rpath,{library_dir}"],
        check=True,
    )
    sys.path.insert(0, str(tmp_path))
    try:
        extension = importlib.import_module("tfprof_test_c_extension")
    finally:
        sys.path.remove(str(tmp_path))
    extension.run_op()  # no session: nothing recorded, nothing breaks
    path = tmp_path / "c_extension.json"
    with tfprof.trace(path):
        with tfprof.span("python_caller"):
            extension.run_op()
    parsed = read_trace(path)
    spans = parsed.spans()
    assert parsed.span_names() == ["c_extension_kernel", "c_extension_op", "python_caller"]
    assert encloses(only(spans, "python_caller"), only(spans, "c_extension_op"))
    assert encloses(only(spans, "c_extension_op"), only(spans, "c_extension_kernel"))


def run_python(code, cwd):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_a_trace_left_running_is_written_at_interpreter_exit(tmp_path):
    result = run_python(
        """
        import tfprof
        tfprof.trace("at_exit.json").start()
        with tfprof.span("unfinished_business"):
            pass
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert read_trace(tmp_path / "at_exit.json").span_names() == ["unfinished_business"]


def test_decorated_functions_survive_multiprocessing(tmp_path):
    result = run_python(
        f"""
        import multiprocessing, sys
        sys.path.insert(0, {str(HERE)!r})
        import decorated_module
        if __name__ == "__main__":
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                print(pool.map(decorated_module.square, [1, 2, 3]))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[1, 4, 9]"


def test_the_stubs_match_the_module_and_the_api_type_checks(tmp_path):
    # libtfprof_preload.so sits in the package for LD_PRELOAD; stubtest takes any .so for a module.
    allowed = ["tfprof.libtfprof_preload"]
    if sys.version_info < (3, 10):
        # Python 3.9's stubtest takes the typing names a module imports (Any, Mapping...) for
        # types of its own, and reads 3.9's text signature of a tp_descr_get slot, whose owner
        # has no default there although the slot takes one argument as well as two.
        allowed += [r"tfprof\..*\.(Any|Callable|Iterable|Iterator|Mapping|Optional|Sequence)",
                    r"tfprof\._native\.SpanFunction\.__get__"]
    allowlist = tmp_path / "allowlist.txt"
    allowlist.write_text("\n".join(allowed) + "\n")
    stubtest = subprocess.run([sys.executable, "-m", "mypy.stubtest", "tfprof", "--allowlist", str(allowlist)],
                              capture_output=True, text=True, cwd=tmp_path)
    assert stubtest.returncode == 0, stubtest.stdout + stubtest.stderr
    targets = [["-p", "tfprof"], [str(HERE / "typing_usage.py")]]
    import mypy.version
    if int(mypy.version.__version__.split(".")[0]) < 2:
        # mypy 1 (the last for Python 3.9) types a class by its instances whatever its __new__
        # returns, so `@tfprof.span` without a name is typed as a span there (docs/python.md).
        targets.pop()
    for target in targets:
        mypy = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", *target],
            capture_output=True, text=True, cwd=tmp_path,
        )
        assert mypy.returncode == 0, mypy.stdout + mypy.stderr
