"""Tallies of what the reliability suite tried and what held, written as JSON.

Tests call :func:`record` once per attempt (a kernel compiled under a pass set, a fuzzed
registry document, a malformed plugin loaded, a concurrent compile checked). At the end of
the pytest session each section that recorded something is written to
``<out>/<section>.json``, where ``<out>`` is ``$TRITON_EXT_RELIABILITY_OUT`` or
``<build dir>/reliability``. ``tests/reliability/reliability_table.py`` turns those files into the
README table (``tests/reliability/RESULTS.md``).
"""

from __future__ import annotations

import json
import os
import platform
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Tally", "record", "note", "output_dir", "write_all", "SECTIONS"]

# Section key -> title shown in the table, in table order.
SECTIONS: dict[str, str] = {
    "corpus": "Corpus kernels compiled through cubin (cuda:90), verifier on",
    "registry_fuzz": "registry.yaml fuzzing (hypothesis)",
    "malformed_plugins": "Malformed plugins",
    "failing_pass_cache": "Failing passes and the kernel cache",
    "concurrency": "Concurrent compiles while passes are enabled and disabled",
    "gpu": "Corpus on the GPU: outputs with each pass vs. without",
}


@dataclass
class Tally:
    """One row: what was tried, how often it held, and notes on what did not."""

    section: str
    check: str
    tried: int = 0
    held: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    skip_reasons: list[str] = field(default_factory=list)


_lock = threading.Lock()
_tallies: dict[tuple[str, str], Tally] = {}
_meta: dict[str, dict[str, Any]] = {}


def _tally(section: str, check: str) -> Tally:
    if section not in SECTIONS:
        raise KeyError(f"unknown reliability section {section!r}; expected one of {', '.join(SECTIONS)}")
    key = (section, check)
    if key not in _tallies:
        _tallies[key] = Tally(section, check)
    return _tallies[key]


def record(section: str, check: str, held: bool, failure: str | None = None) -> bool:
    """Count one attempt of ``check``; keep a short note when it did not hold. Returns ``held``."""
    with _lock:
        tally = _tally(section, check)
        tally.tried += 1
        if held:
            tally.held += 1
        elif failure and len(tally.failures) < 20:
            tally.failures.append(failure[:500])
    return held


def skip(section: str, check: str, reason: str) -> None:
    """Count an attempt that could not be made (plugin not built, ...)."""
    with _lock:
        tally = _tally(section, check)
        tally.skipped += 1
        if reason not in tally.skip_reasons and len(tally.skip_reasons) < 20:
            tally.skip_reasons.append(reason)


def note(section: str, **values: Any) -> None:
    """Attach metadata to a section (passes discovered, examples per property, ...)."""
    with _lock:
        _meta.setdefault(section, {}).update(values)


def output_dir() -> Path:
    env = os.environ.get("TRITON_EXT_RELIABILITY_OUT")
    if env:
        return Path(env)
    from triton_ext import settings

    return Path(settings.build_dir) / "reliability"


def write_all(directory: Path | None = None) -> list[Path]:
    """Write one JSON file per section recorded in this process; return the paths."""
    directory = directory or output_dir()
    with _lock:
        # Only sections that counted something: a --collect-only run must not overwrite results.
        sections = sorted({t.section for t in _tallies.values()})
        if not sections:
            return []
        try:
            import triton

            triton_version = triton.__version__
        except Exception:  # pragma: no cover - triton is a dependency
            triton_version = "unknown"
        written = []
        directory.mkdir(parents=True, exist_ok=True)
        for section in sections:
            doc = {
                "section": section,
                "title": SECTIONS[section],
                "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "environment": {"triton": triton_version, "python": platform.python_version(),
                                "machine": platform.machine(), "cpus": os.cpu_count()},
                "meta": _meta.get(section, {}),
                "checks": [asdict(t) for t in _tallies.values() if t.section == section],
            }
            path = directory / f"{section}.json"
            tmp = path.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(doc, indent=2) + "\n")
            os.replace(tmp, path)
            written.append(path)
        return written
