"""Checks that a GPU kit (scripts/gpu-kit.sh) is self-contained, as a bare GPU machine will meet it:

- every ELF file needs (DT_NEEDED) only the C/C++ runtime, glibc, zlib, the CUDA driver, runtime or
  CUPTI, or a library inside the kit;
- every RUNPATH/RPATH entry is $ORIGIN-relative and stays inside the kit, so the kit works from any
  folder (no path of the machine that built it);
- no Abseil or protobuf symbol is exported by a library: they are linked in, hidden;
- the whole kit is at most --max-mib MiB.

Reads ELF files with `readelf` (binutils). Prints what it checked; exits 1 naming every problem.
Usage: check_kit.py KIT_DIR [--max-mib 24]
"""
import argparse
import os
import re
import subprocess
import sys

# Libraries a kit program may take from the machine it runs on.
SYSTEM_LIBRARIES = {
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "ld-linux-x86-64.so.2", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1",
    "libcuda.so.1", "libcudart.so.13", "libcupti.so.13",
}
# Exported symbols that would mean a dependency leaked out instead of staying hidden.
LEAKED_SYMBOL = re.compile(r"absl|google.?protobuf|_ZN6google8protobuf|_ZN4absl")


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
        relative = os.path.relpath(path, kit)
        needed, runpaths = dynamic_entries(path)
        for library in needed:
            if library not in SYSTEM_LIBRARIES and library not in kit_names:
                problems.append(f"{relative} needs {library}, which is neither in the kit nor an "
                                "allowed system library")
        for runpath in runpaths:
            for entry in runpath.split(":"):
                if not entry.startswith("$ORIGIN"):
                    problems.append(f"{relative}: RUNPATH entry {entry!r} is not $ORIGIN-relative")
                    continue
                resolved = os.path.realpath(entry.replace("$ORIGIN", os.path.dirname(path), 1))
                if resolved != kit and not resolved.startswith(kit + os.sep):
                    problems.append(f"{relative}: RUNPATH entry {entry!r} leads out of the kit")
        if path.endswith(".so") or ".so." in os.path.basename(path):
            leaked = [s for s in exported_symbols(path) if LEAKED_SYMBOL.search(s)]
            if leaked:
                problems.append(f"{relative} exports {len(leaked)} Abseil/protobuf symbols "
                                f"(e.g. {leaked[0]})")
        report.append(f"{relative}: needs {', '.join(needed) or 'nothing'}; "
                      f"RUNPATH {':'.join(runpaths) or 'none'}")
    if not files:
        problems.append("no ELF file in the kit")
    mib = total / 2**20
    if mib > max_mib:
        problems.append(f"the kit is {mib:.1f} MiB, over {max_mib} MiB")
    report.append(f"{len(files)} ELF files, {mib:.1f} MiB in all")
    return problems, report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kit")
    parser.add_argument("--max-mib", type=float, default=24)
    args = parser.parse_args()
    problems, report = check(args.kit, args.max_mib)
    print("\n".join(report))
    for problem in problems:
        print("PROBLEM: " + problem)
    if problems:
        return 1
    print("check_kit: self-contained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
