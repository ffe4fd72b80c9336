"""The corpus shares the reliability suite's setup (per-test cleanup, tallies)."""

from tests.reliability.reliability_conftest import *  # noqa: F401,F403
