"""Setup of tests/reliability: see ``reliability_conftest``."""

from tests.reliability.reliability_conftest import *  # noqa: F401,F403
