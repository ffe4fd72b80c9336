"""triton_ext's log: what it decided and why, at a level ``TRITON_EXT_LOG`` chooses.

One ``logging`` logger, ``triton_ext`` (child loggers per module: ``triton_ext.preflight``, ...).
Decisions go here: options and passes enabled (and from where), preflight verdicts (cached or
checked in a child), libraries loaded, the passes placed in each stage of each compile, passes
dropped from a kernel. ``TRITON_EXT_LOG=info`` (or ``debug``, ``warning``, ``error``, a number)
prints them to stderr as ``triton-ext: LEVEL: message``; unset, nothing is configured here, so
warnings and errors reach stderr through Python's last-resort handler and an application's own
``logging`` setup sees every record (they propagate).
"""

from __future__ import annotations

import logging
import os

__all__ = ["logger", "get", "configure", "LEVELS"]

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
          "critical": logging.CRITICAL}

logger = logging.getLogger("triton_ext")
_handler: logging.Handler | None = None


def get(name: str) -> logging.Logger:
    """The logger of one part of triton_ext (``get("preflight")`` -> ``triton_ext.preflight``)."""
    return logger.getChild(name)


def parse_level(var: str, text: str) -> int | None:
    """The level ``text`` names (``info``, ``DEBUG``, ``20``); None when empty."""
    value = text.strip().lower()
    if not value:
        return None
    if value in LEVELS:
        return LEVELS[value]
    if value.isdigit():
        return int(value)
    raise ValueError(f"{var}: expected one of {', '.join(LEVELS)} or a number, found {text!r}")


def configure() -> None:
    """Apply ``TRITON_EXT_LOG``: a stderr handler at that level on the ``triton_ext`` logger (once;
    called at ``import triton_ext``). A bad value is reported in one line and ignored."""
    global _handler
    text = os.environ.get("TRITON_EXT_LOG", "")
    try:
        level = parse_level("TRITON_EXT_LOG", text)
    except ValueError as exc:
        logger.warning("%s; logging stays at its default", exc)
        return
    if level is None:
        return
    if _handler is None:
        _handler = logging.StreamHandler()
        _handler.setFormatter(logging.Formatter("triton-ext: %(levelname)s: %(message)s"))
        logger.addHandler(_handler)
    logger.setLevel(level)
    _handler.setLevel(level)
