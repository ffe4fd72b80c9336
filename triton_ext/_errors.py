"""The one exception family of triton-ext.

Every error carries the extension it concerns (``extension``) and the file it
concerns (``path``), either of which may be ``None`` when unknown. Messages say
what was expected, what was found and what to do next.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "TritonExtError",
    "ManifestError",
    "PreflightError",
    "LoadError",
    "UnknownPassError",
    "OptionError",
    "PassFailedError",
    "PassCrashedError",
    "TritonExtWarning",
]


class TritonExtError(Exception):
    """Base class of every error raised by triton-ext."""

    def __init__(
        self,
        message: str,
        *,
        extension: str | None = None,
        path: str | Path | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.extension = extension
        self.path = Path(path) if path is not None else None


class ManifestError(TritonExtError):
    """registry.yaml (or a fragment) is malformed; ``errors`` lists every problem found."""

    def __init__(
        self,
        message: str,
        *,
        extension: str | None = None,
        path: str | Path | None = None,
        errors: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message, extension=extension, path=path)
        self.errors = errors or (message,)


class PreflightError(TritonExtError):
    """A library failed the checks made before Triton is allowed to load it."""


class LoadError(TritonExtError):
    """A library passed preflight but cannot be loaded next to the ones already loaded."""


class UnknownPassError(TritonExtError, KeyError):
    """A pass, extension or option name is not declared in the registry."""

    def __str__(self) -> str:  # KeyError would quote the message.
        return self.message


class OptionError(UnknownPassError, ValueError):
    """An option value the pass refuses: the wrong type, or outside what its Passes.td states
    ("(2 or 3)", "(at least 2)"). Raised by ``enable``/``enabled``, before anything compiles."""


class PassFailedError(TritonExtError):
    """An enabled pass failed (or could not be placed) while compiling, in strict mode or, for a
    check (``on_failure: error``), always."""

    def __init__(
        self,
        message: str,
        *,
        extension: str | None = None,
        path: str | Path | None = None,
        pass_name: str | None = None,
    ) -> None:
        super().__init__(message, extension=extension, path=path)
        self.pass_name = pass_name


class PassCrashedError(PassFailedError):
    """An enabled pass crashed (or hung) in an isolated stage (:mod:`triton_ext._triton.isolated`):
    the worker process died, this one did not. The transparent mode drops the variant."""


class TritonExtWarning(UserWarning):
    """A pass failed or could not be placed and compilation went on without it."""
