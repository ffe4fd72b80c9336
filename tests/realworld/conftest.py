"""The real-world corpus shares the reliability suite's setup (caches, tallies, cleanup)."""

from tests.reliability.reliability_conftest import *  # noqa: F401,F403
