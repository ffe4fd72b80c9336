"""``python -m triton_ext`` is the ``triton-ext`` command."""

from __future__ import annotations

import sys

from .dev.cli import main

sys.exit(main())
