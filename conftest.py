"""Repository-wide pytest setup: the plugin of :mod:`triton_ext.testing` (isolated caches and
environment before Triton is imported; every module ends with no pass enabled and Triton's stages
hook empty, so the suite's order does not matter)."""

import os
import shutil
import subprocess
import tempfile

# Importing triton_ext (which loading the plugin does) enables what TRITON_EXT_ENABLE names.
os.environ.pop("TRITON_EXT_ENABLE", None)

# The C++ the suite builds in scratch trees (tests/cpp, tests/cli: copies of infra/ and scaffolded
# extensions, about 30 s each) goes through ccache when it is installed: CMake takes the launcher
# from the environment, and with the temporary folder as ccache's base dir the same sources at
# the same place in two scratch trees hit. Compiles that fail are never cached, so a broken
# extension still fails its build. A launcher set by the caller wins.
# ccache that cannot write its cache fails every compile, so it is used only when it can.


def _ccache_usable() -> bool:
    exe = shutil.which("ccache")
    if exe is None:
        return False
    try:
        cache_dir = subprocess.run([exe, "-k", "cache_dir"], capture_output=True, text=True,
                                   timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    if not cache_dir:
        return False
    try:
        os.makedirs(cache_dir, exist_ok=True)
    except OSError:
        return False
    return os.access(cache_dir, os.W_OK)


if "CMAKE_CXX_COMPILER_LAUNCHER" not in os.environ and _ccache_usable():
    os.environ["CMAKE_CXX_COMPILER_LAUNCHER"] = "ccache"
    os.environ.setdefault("CCACHE_BASEDIR", os.path.realpath(tempfile.gettempdir()))

pytest_plugins = ["triton_ext.testing.plugin"]

#: Files whose module fixtures take minutes (the real-world sweep, the sanitizer corpus): first, so
#: that with several pytest workers (tools/test.sh) they start at once instead of ending the run.
LONG_FIRST = ("tests/realworld/test_realworld_passes.py", "tests/realworld/test_sanitizer_corpus.py")


def pytest_collection_modifyitems(session: "pytest.Session", config: "pytest.Config",
                                  items: "list[pytest.Item]") -> None:
    def rank(item: "pytest.Item") -> int:
        path = item.nodeid.split("::", 1)[0]
        return LONG_FIRST.index(path) if path in LONG_FIRST else len(LONG_FIRST)

    items.sort(key=rank)  # stable: the rest keeps its order
