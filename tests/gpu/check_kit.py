"""Checks that a GPU kit (scripts/gpu-kit.sh) is self-contained, as a bare GPU machine will meet it:

- every ELF file needs (DT_NEEDED) only the C/C++ runtime, glibc, zlib, the CUDA driver, runtime or
  CUPTI, or a library inside the kit;
- every RUNPATH/RPATH entry is $ORIGIN-relative and stays inside the kit, so the kit works from any
  folder (no path of the machine that built it);
- no Abseil or protobuf symbol is exported by a library: they are linked in, hidden;
- the whole kit is at most --max-mib MiB;
- in a GPU kit (a folder with kit.json): wheels/ holds exactly one wheel, the one kit.json names,
  of kit.json's version, for one CPython on manylinux x86_64; its ELF files are checked as above,
  their RUNPATHs staying inside the wheel.

Reads ELF files with `readelf` (binutils). Prints what it checked; exits 1 naming every problem.
Usage: check_kit.py KIT_DIR [--max-mib 24]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

# Libraries a kit program may take from the machine it runs on.
SYSTEM_LIBRARIES = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "ld-linux-x86-64.so.2", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1",
    "libcuda.so.1", "libcudart.so.13", "libcupti.so.13",
}
# Exported symbols that would mean a dependency leaked out instead of staying hidden.
LEAKED_SYMBOL = re.compile(r"absl|google.?protobuf|_ZN6google8protobuf|_ZN4absl")
# tfprof-VERSION-cpXY-cpXY-manylinux_2_M_x86_64.whl (auditwheel's tag: the oldest glibc it needs).
WHEEL_NAME = re.compile(r"tfprof-(?P<version>[0-9.]+)-(?P<python>cp3[0-9]+)-(?P=python)"
                        r"-manylinux_2_[0-9]+_x86_64\.whl")


def is_elf(path):
    with open(path, "rb") as file:
        return file.read(4) == b"\x7fELF"


def readelf(*args):
    return subprocess.run(["readelf", *args], capture_output=True, text=True, check=True).stdout


def dynamic_entries(path):
    needed, runpaths = [], []
    for line in readelf("-d", "-W", path).splitlines():
        match = re.search(r"\((NEEDED|RUNPATH|RPATH)\)\s+.*?\[(.*)\]", line)
        if match is None:
            continue
        (needed if match[1] == "NEEDED" else runpaths).append(match[2])
    return needed, runpaths


def exported_symbols(path):
    names = []
    for line in readelf("--dyn-syms", "-W", path).splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) >= 8 and fields[4] in ("GLOBAL", "WEAK") and fields[6] != "UND":
            names.append(fields[7])
    return names


def elf_files(root):
    """The ELF files below `root` (links left out: they name files counted once already)."""
    for folder, _, names in os.walk(root):
        for name in sorted(names):
            path = os.path.join(folder, name)
            if not os.path.islink(path) and is_elf(path):
                yield path


def check(kit, max_mib):
    problems, report = [], []
    kit = os.path.realpath(kit)
    total = 0
    kit_names = set()
    for folder, _, names in os.walk(kit):
        kit_names.update(names)
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
            elif not os.path.realpath(path).startswith(kit + os.sep):
                problems.append(f"{os.path.relpath(path, kit)}: a link out of the kit "
                                f"({os.path.realpath(path)})")
    files = sorted(elf_files(kit))

    for path in files:
        check_elf(path, kit, kit_names, problems, report)
    if not files:
        problems.append("no ELF file in the kit")
    mib = total / 2**20
    if mib > max_mib:
        problems.append(f"the kit is {mib:.1f} MiB, over {max_mib} MiB")
    report.append(f"{len(files)} ELF files, {mib:.1f} MiB in all")
    return problems, report


def check_elf(path, root, local_names, problems, report, shown_as=None):
    """One ELF file below `root`: what it needs is a system library or one of `local_names`, its
    RUNPATHs stay below `root`, it exports no Abseil or protobuf symbol."""
    relative = shown_as or os.path.relpath(path, root)
    needed, runpaths = dynamic_entries(path)
    for library in needed:
        if library not in SYSTEM_LIBRARIES and library not in local_names:
            problems.append(f"{relative} needs {library}, which is neither in the kit nor an "
                            "allowed system library")
    for runpath in runpaths:
        for entry in runpath.split(":"):
            if not entry.startswith("$ORIGIN"):
                problems.append(f"{relative}: RUNPATH entry {entry!r} is not $ORIGIN-relative")
                continue
            resolved = os.path.realpath(entry.replace("$ORIGIN", os.path.dirname(path), 1))
            if resolved != root and not resolved.startswith(root + os.sep):
                problems.append(f"{relative}: RUNPATH entry {entry!r} leads out of the kit")
    if path.endswith(".so") or ".so." in os.path.basename(path):
        leaked = [s for s in exported_symbols(path) if LEAKED_SYMBOL.search(s)]
        if leaked:
            problems.append(f"{relative} exports {len(leaked)} Abseil/protobuf symbols "
                            f"(e.g. {leaked[0]})")
    report.append(f"{relative}: needs {', '.join(needed) or 'nothing'}; "
                  f"RUNPATH {':'.join(runpaths) or 'none'}")


def check_wheel(kit):
    """A GPU kit's wheels/: the one wheel kit.json names, its ELF files checked unpacked (a RUNPATH
    must stay inside the installed package). Returns (problems, report) as check() does."""
    problems, report = [], []
    kit = os.path.realpath(kit)
    folder = os.path.join(kit, "wheels")
    wheels = sorted(n for n in os.listdir(folder) if n.endswith(".whl")) if os.path.isdir(folder) else []
    if len(wheels) != 1:
        problems.append(f"wheels/ holds {len(wheels)} wheels ({', '.join(wheels) or 'none'}), not one")
        return problems, report
    name = wheels[0]
    try:
        with open(os.path.join(kit, "kit.json"), encoding="utf-8") as file:
            info = json.load(file)
    except (OSError, ValueError) as error:
        problems.append(f"kit.json cannot be read ({error}): the wheel is not checked against it")
        info = {}
    match = WHEEL_NAME.fullmatch(name)
    if match is None:
        problems.append(f"wheels/{name} is not named tfprof-VERSION-cpXY-cpXY-manylinux_2_M_x86_64.whl")
    elif info and match["version"] != info.get("version"):
        problems.append(f"wheels/{name} is tfprof {match['version']}, the kit {info.get('version')}")
    if info and info.get("wheel") != name:
        problems.append(f"kit.json names the wheel {info.get('wheel')!r}, wheels/ holds {name}")
    with tempfile.TemporaryDirectory() as unpacked:
        try:
            with zipfile.ZipFile(os.path.join(folder, name)) as archive:
                archive.extractall(unpacked)
        except (OSError, zipfile.BadZipFile) as error:
            problems.append(f"wheels/{name} cannot be unpacked: {error}")
            return problems, report
        unpacked = os.path.realpath(unpacked)
        names = {n for _, _, files in os.walk(unpacked) for n in files}
        files = sorted(elf_files(unpacked))
        for path in files:
            check_elf(path, unpacked, names, problems, report,
                      shown_as=f"wheels/{name}:{os.path.relpath(path, unpacked)}")
        if not any(os.path.basename(p).startswith("_native.") for p in files):
            problems.append(f"wheels/{name} has no tfprof/_native extension")
        report.append(f"wheels/{name}: {len(files)} ELF files")
    return problems, report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kit")
    parser.add_argument("--max-mib", type=float, default=24)
    args = parser.parse_args()
    problems, report = check(args.kit, args.max_mib)
    if os.path.exists(os.path.join(args.kit, "kit.json")):  # a GPU kit, not an unpacked wheel
        wheel_problems, wheel_report = check_wheel(args.kit)
        problems += wheel_problems
        report += wheel_report
    print("\n".join(report))
    for problem in problems:
        print("PROBLEM: " + problem)
    if problems:
        return 1
    print("check_kit: self-contained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
