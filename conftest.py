"""Repository-wide pytest setup: the plugin of :mod:`triton_ext.testing` (isolated caches and
environment before Triton is imported; every module ends with no pass enabled and Triton's stages
hook empty, so the suite's order does not matter)."""

import os

# Importing triton_ext (which loading the plugin does) enables what TRITON_EXT_ENABLE names.
os.environ.pop("TRITON_EXT_ENABLE", None)

pytest_plugins = ["triton_ext.testing.plugin"]
