"""Which folder may include which (architecture review 2, section 3.3), and #pragma once in every
header: the pipeline's layering holds only while something checks it. Prints each violation as
`file:line: from -> to (rule)`; exits 1 on one that known_violations.txt (beside this file: edges
waiting for their fix, a list that only shrinks) does not hold, or on a listed one that is gone.

Usage: python3 tests/layering/check_includes.py [SOURCE_ROOT]   (ctest: lint/layering)"""
import pathlib
import re
import sys

# What each folder may include besides itself: folders, single headers, or "runtime/common/*.h":
# the headers of runtime/common without a .cc (the preload links none of the runtime).
# formats/'s subfolders and gpu/cupti count as their parent.
ALLOWED = {
    "runtime/common": [],
    "runtime/model": ["runtime/common"],
    "runtime/storage": ["runtime/common"],
    # include/: the writers stamp prof_version_string() into their files.
    "runtime/formats": ["runtime/model", "runtime/common", "include"],
    "runtime/convert": ["runtime/formats", "runtime/model", "runtime/common"],
    "runtime/collector": ["runtime/storage", "runtime/common", "runtime/gpu/gpu_tracer.h",
                          "runtime/gpu/gpu_trace.h"],
    # gpu_kinds.h: the copy and memory kinds CUPTI records and the model share.
    "runtime/gpu": ["runtime/collector", "runtime/storage", "runtime/common",
                    "runtime/model/gpu_kinds.h"],
    # format.h: options.cc checks the format= option's value.
    "runtime/session": ["runtime/collector", "runtime/gpu", "runtime/storage", "runtime/common",
                        "runtime/formats/format.h"],
    "runtime/export": ["runtime/session", "runtime/gpu", "runtime/collector", "runtime/storage",
                       "runtime/model", "runtime/formats", "runtime/common"],
    # Capture on demand drives sessions from outside them (format.h: a capture's output is checked
    # as prof_start() checks it; gpu_names.h: the GPU state's name in the reply).
    "runtime/capture": ["runtime/session", "runtime/collector", "runtime/gpu", "runtime/storage",
                        "runtime/common", "runtime/formats/format.h", "runtime/model/gpu_names.h"],
    # capture_protocol.h: `tfprof capture` speaks the listening process's protocol.
    "tools": ["runtime/convert", "runtime/formats", "runtime/model", "runtime/common", "include",
              "runtime/capture/capture_protocol.h"],
    # internal_entry_points.h: the entry points libtfprof exports for the preload only.
    "bindings/preload": ["include", "runtime/common/*.h", "bindings/c/internal_entry_points.h"],
}
ANYTHING = re.compile(r"runtime/session/profiler(_drain)?\.(h|cc)|bindings/(c|python)/.*")  # the top
INCLUDE = re.compile(r'\s*#\s*include\s*[<"]([^">]+)[">]')


def folder(path):
    """The folder a source path or an #include's path belongs to; None: outside the project."""
    parts = path.split("/")
    if parts[0] in ("runtime", "bindings") and len(parts) > 2:
        return "/".join(parts[:2])
    if parts[0] == "tfprof":  # the public header, or messages generated from runtime/formats/proto
        return "runtime/formats" if path.endswith(".pb.h") else "include"
    return parts[0] if parts[0] in ("tools", "include") else None


def allowed(source, target, root):
    rules = ALLOWED.get(folder(source), [])
    header_only = (target.startswith("runtime/common/")
                   and not (root / target).with_suffix(".cc").exists())
    return (folder(target) in [None, folder(source)] + rules or target in rules
            or ANYTHING.fullmatch(source) or (header_only and "runtime/common/*.h" in rules))


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parents[2])
    known_file = pathlib.Path(__file__).with_name("known_violations.txt")
    known = {line for line in known_file.read_text().splitlines() if line and line[0] != "#"}
    seen, failures = set(), 0
    files = (file for top in ("runtime", "tools", "bindings") for file in (root / top).rglob("*"))
    for file in sorted(files):
        if file.suffix not in (".h", ".cc", ".c"):
            continue
        source, text = file.relative_to(root).as_posix(), file.read_text(errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            match = INCLUDE.match(line)
            if match and not allowed(source, match.group(1), root):
                edge = f"{source}: {folder(source)} -> {match.group(1)}"
                rules = ", ".join(ALLOWED.get(folder(source), [])) or "nothing else"
                print(f"{source}:{number}: {folder(source)} -> {match.group(1)} ({folder(source)} "
                      f"may include {rules}){' [known]' if edge in known else ''}")
                seen.add(edge)
                failures += edge not in known
        if file.suffix == ".h" and not re.search(r"^#pragma once$", text, re.M):
            print(f"{source}:1: no #pragma once (every header guards with it)")
            failures += 1
    for edge in sorted(known - seen):
        print(f"{known_file.name}: fixed, remove its line: {edge}")
    print(f"check_includes.py: {failures} new violations, {len(known & seen)} known")
    return 1 if failures or known - seen else 0


if __name__ == "__main__":
    sys.exit(main())
