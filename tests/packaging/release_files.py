"""Where the packaging tests find the release's files, and the version they must carry."""
import os
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
# What scripts/build-wheels.sh made: scripts/test.sh builds into build/dist.
DIST = pathlib.Path(os.environ.get("TFPROF_DIST_DIR", ROOT / "build" / "dist"))


def tfprof_version():
    """X.Y.Z from the header, the version's one source."""
    header = (ROOT / "include" / "tfprof" / "tfprof.h").read_text()
    return ".".join(re.search(rf"#define TFPROF_VERSION_{part} (\d+)", header).group(1)
                    for part in ("MAJOR", "MINOR", "PATCH"))
