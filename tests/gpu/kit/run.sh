#!/usr/bin/env bash
# tfprof's GPU proof, in one command, on a machine with an NVIDIA GPU: nothing is built here. The
# Python package is the kit's wheel (wheels/, for Python 3.12), installed without network; for
# another Python the extension is built here (this machine's pybind11, CMake and compiler, against
# the kit's libtfprof.so). Everything else was built where the kit was made (scripts/gpu-kit.sh).
#
# Usage: run.sh [--stages LIST] [--skip LIST] [--soak-seconds N] [--soak-rate K] [--deadline S]
#   stages: preflight (always), tests, preload, torch, nvtx, bench, soak (checks/gpu_proof.py);
#   --deadline: no stage starts after S seconds (a device call is cut off at 10 minutes)
#   OUT     where gpu-proof.txt (the summary), gpu-proof.json, gpu-proof.log and small traces go
#           (default: ./gpu-proof-out)
#   WORK    scratch space for traces (default: a folder under ${TMPDIR:-/tmp})
#   PYTHON  the interpreter (default: python3 on PATH, the one with PyTorch on the lent machines)
# Exits 0 when every stage passed, 1 when one failed, 77 when there is no usable GPU here (it
# says what is missing, after checking what can be checked without one).
set -uo pipefail
kit=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${OUT:-$PWD/gpu-proof-out}
work=${WORK:-${TMPDIR:-/tmp}/tfprof-gpu-proof}

python=${PYTHON:-}
if [ -z "$python" ]; then
  for candidate in python3 python; do
    if command -v "$candidate" >/dev/null 2>&1; then
      python=$(command -v "$candidate")
      break
    fi
  done
fi
if [ -z "$python" ]; then
  # Without Python nothing can be checked; say first whether a GPU is here at all.
  driver=""
  for ldconfig in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do
    if command -v "$ldconfig" >/dev/null 2>&1 && "$ldconfig" -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
      driver=yes
    fi
  done
  if [ -z "$driver" ] && [ ! -e /proc/driver/nvidia/version ]; then
    echo "run.sh: no GPU here: no NVIDIA driver (libcuda.so.1 is not in the loader's cache and" \
      "/proc/driver/nvidia is absent); also no python3 on PATH, which the proof needs" >&2
    exit 77
  fi
  echo "run.sh: no python3 on PATH (set PYTHON=...): the proof's checks are Python" >&2
  exit 1
fi
mkdir -p "$out" "$work"
exec "$python" "$kit/checks/gpu_proof.py" --kit "$kit" --out "$out" --work "$work" "$@"
