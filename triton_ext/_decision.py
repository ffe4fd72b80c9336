"""What the transparent mode decided for one specialization of a kernel (:mod:`triton_ext._auto`):
the choice, every variant's timings, what was dropped and why; kept on disk and logged."""

from __future__ import annotations

import json
import logging
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

__all__ = ["Decision", "LAUNCH_BOUND_WHY"]


#: Why a launch-bound decision keeps no pass, as the log and ``triton-ext auto report`` say it.
LAUNCH_BOUND_WHY = "back to back a launch takes longer than the kernel runs"


@dataclass
class Decision:
    """What the transparent mode decided for one specialization of a kernel, and why."""

    kernel: str
    choice: str  # "" = no pass
    timings_ms: dict[str, float] = field(default_factory=dict)  # first rounds, median per variant
    applicable: list[str] = field(default_factory=list)
    confirm_ms: dict[str, float] = field(default_factory=dict)  # confirmation rounds, median per finalist
    spreads: dict[str, float] = field(default_factory=dict)  # (max - min) / median, first rounds
    refused: str | None = None
    first_launch_s: float = 0.0
    from_disk: bool = False
    error: str | None = None  # the timing failed (no pass kept, not recorded on disk)
    back_to_back_ms: dict[str, float] = field(default_factory=dict)  # per launch, finalists back to back
    compile_s: float = 0.0  # wall seconds compiling the candidate variants (concurrently)
    #: Wall seconds of each step after the compiles (``check``: the variants' outputs against the
    #: no-pass kernel's; ``rounds``; ``combination``: waiting for two winners' compile;
    #: ``confirm``; ``back_to_back``): where a first launch's time went.
    phases_s: dict[str, float] = field(default_factory=dict)
    same_as_stock: list[str] = field(default_factory=list)  # stopped before ptxas: LLVM IR of no pass
    specialization: str = ""  # sha256 prefix of the JIT's cache key (specialization and options)
    #: Variants dropped because their kernel cannot launch here (e.g. more shared memory than the
    #: GPU has, which Triton only finds when it loads the binary) or their passes crashed or hung
    #: in the isolated worker that compiled them, or (a warp count) it was still compiling when
    #: the first-launch budget ran out, with the reason.
    failed: dict[str, str] = field(default_factory=dict)
    #: Variants dropped because their launch left other outputs than the no-pass kernel's
    #: (:mod:`triton_ext._outputs`), with what differed.
    changed_outputs: dict[str, str] = field(default_factory=dict)
    #: Two passes' combination still compiling when the rounds after it had to start: the single
    #: winner holds, on disk too, and the next activation times the combination against it
    #: (:func:`time_combination`).
    late_combination: str | None = None
    #: The launch size the choice was timed at and holds for (:mod:`triton_ext._launch_size`);
    #: launches of the other size run the no-pass kernel.
    launch_size: str = ""
    #: No pass kept because launches back to back took longer than the kernel ran
    #: (:func:`triton_ext._choice.launch_bound`): a faster binary could not show there.
    launch_bound: bool = False

    @contextmanager
    def phase(self, step: str) -> Iterator[None]:
        """Add the wall time of the ``with`` block, however it ends, to :attr:`phases_s`."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.phases_s[step] = self.phases_s.get(step, 0.0) + time.perf_counter() - start

    @property
    def not_kept_because(self) -> str | None:
        """Why later processes may not reuse this choice (a failure), or None."""
        return self.error

    @property
    def keep_on_disk(self) -> bool:
        return self.not_kept_because is None

    def save(self, path: Path, **facts: Any) -> None:
        """Write :meth:`record` and ``facts`` to ``path`` (atomically: a reader sees the old file or
        the new one); an unwritable folder only costs later processes their reuse."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.record() | {"late_combination": self.late_combination} | facts))
            tmp.replace(path)
        except OSError:
            pass  # the choice still holds for this process

    def record(self) -> dict[str, Any]:
        """What a decision file on disk holds of the decision (``triton-ext auto report`` prints it)."""
        return {"kernel": self.kernel, "choice": self.choice, "timings_ms": self.timings_ms,
                "applicable": self.applicable, "confirm_ms": self.confirm_ms, "back_to_back_ms": self.back_to_back_ms,
                "spreads": self.spreads, "same_as_stock": self.same_as_stock, "failed": self.failed,
                "changed_outputs": self.changed_outputs, "compile_s": self.compile_s, "phases_s": self.phases_s,
                "first_launch_s": self.first_launch_s, "launch_size": self.launch_size,
                "launch_bound": self.launch_bound}

    def log(self, log: logging.Logger) -> None:
        """Say what was decided and why (the mode's logger, ``triton_ext.auto``)."""
        where = f"{self.kernel} [{self.specialization}]"
        if self.refused is not None:
            log.info("%s: no pass (%s)", where, self.refused)
            return
        size = (f" (for launches {self.launch_size.replace('_', ' ')}; no pass at the others)"
                if self.choice and self.launch_size else "")
        log.info("%s: %s%s%s in %.2f s; GPU ms %s; back to back ms %s%s%s%s", where, self.choice or "no pass", size,
                 " (from disk)" if self.from_disk else "", self.first_launch_s, _rounded(self.timings_ms),
                 _rounded(self.back_to_back_ms), f"; {self.not_kept_because}" if self.not_kept_because else "",
                 f"; launch-bound ({LAUNCH_BOUND_WHY}): no pass kept"
                 if self.launch_bound else "",
                 f"; {self.late_combination} still compiling, timed against it next time"
                 if self.late_combination else "")
        for variant, why in self.failed.items():
            log.info("%s: %s dropped: %s", where, variant, why)
        for variant, why in self.changed_outputs.items():
            log.warning("%s: %s dropped, it changes or may change the kernel's outputs: %s", where, variant, why)


def _rounded(values: Mapping[str, float]) -> dict[str, float]:
    return {k or "none": round(v, 5) for k, v in values.items()}
