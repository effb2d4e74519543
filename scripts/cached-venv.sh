# shellcheck shell=bash
# Sourced by the scripts that make framework environments (python-env.sh with packages,
# hta-env.sh, xprof-env.sh). TensorFlow, PyTorch and JAX take 7.6 GB and minutes to install, and a
# CI run is a fresh clone: made in build/, they were downloaded and unpacked again on every run
# (a full disk once stopped CI in the middle of that install). So each environment is made once per
# machine in a cache folder, and build/<venv> is a link to it.
#
# An entry's name holds a hash of what decides its contents: the interpreter, its version, the
# install function's text and the key words the caller adds (the pinned packages). An entry whose install did not finish
# has no `.complete` mark: it is removed (with the disk it took) and made again. Making an entry
# removes the other entries of the same environment (older pins), so the cache holds one each.
# pip's own download cache is not used for these installs: it would keep a second copy of the
# wheels.
#   TFPROF_ENV_CACHE=DIR  the cache folder (default: ~/.cache/tfprof-envs)
#   TFPROF_ENV_CACHE=0    no cache: the environment is made in build/ (the old way)
#
# cached_venv VENV INSTALL_FUNCTION GB [KEY...]
#   Makes VENV (the interpreter's venv, pip upgraded) and calls `INSTALL_FUNCTION PYTHON` in it once
#   per cache entry; without the cache, or where VENV is already a real folder, on every call (the
#   installs are pinned, so a second one changes nothing). GB: the disk the install needs, checked
#   first so that a full disk is named before pip runs into it.
cached_venv() {
  local venv=$1 install=$2 need_gb=$3
  shift 3
  local cache=${TFPROF_ENV_CACHE:-$HOME/.cache/tfprof-envs}
  if [ "$cache" = 0 ] || { [ -d "$venv" ] && [ ! -L "$venv" ]; }; then
    if [ ! -x "$venv/bin/python" ]; then
      cached_venv_check_disk "$(dirname "$venv")" "$need_gb"
      echo "cached-venv: creating $venv" >&2
      python3 -m venv "$venv"
      "$venv/bin/python" -m pip install -q --upgrade pip >&2
    fi
    "$install" "$venv/bin/python"
    return
  fi
  local name key entry
  name=$(basename "$venv")
  key=$( { command -v python3; python3 -c 'import sys; print(sys.version)'; declare -f "$install"; echo "$@"; } |
    sha256sum | cut -c1-16)
  entry=$cache/$name-$key
  mkdir -p "$cache" "$(dirname "$venv")"
  (
    # One maker per environment at a time: a second CI run waits for the first one's install.
    flock 9
    if [ ! -e "$entry/.complete" ]; then
      rm -rf "$entry" "$cache/$name"-*
      cached_venv_check_disk "$cache" "$need_gb"
      echo "cached-venv: creating $entry (once per machine; build/ links to it)" >&2
      if ! { python3 -m venv "$entry" &&
             "$entry/bin/python" -m pip install -q --upgrade pip >&2 &&
             PIP_NO_CACHE_DIR=1 "$install" "$entry/bin/python"; }; then
        echo "cached-venv: installing $name failed; removing $entry" >&2
        rm -rf "$entry"
        exit 1
      fi
      touch "$entry/.complete"
    else
      echo "cached-venv: reusing $entry" >&2
    fi
  ) 9>"$cache/.lock-$name"
  ln -sfn "$entry" "$venv"
}

# Fails, naming the folder and both figures, where its disk has less than GB gigabytes free.
cached_venv_check_disk() {
  local dir=$1 need_gb=$2 free_kb
  mkdir -p "$dir"
  free_kb=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
  if [ "$free_kb" -lt $((need_gb * 1024 * 1024)) ]; then
    echo "cached-venv: $dir has $((free_kb / 1024 / 1024)) GB free; this environment needs about" \
      "$need_gb GB. Free some disk (old clones' build/ folders, ~/.cache) and run again." >&2
    exit 1
  fi
}
