"""The enabled set: which passes run, with which options, for every thread or one block.

:func:`enable`/:func:`disable` change the set every thread sees; :func:`enabled` scopes a set to
the current context. A :class:`Selection` is immutable and carries its precomputed ``(key, hash)``
for the stages hook. This module owns the state (:data:`state`, a :class:`SelectionState`) and
hands it to the hook when it installs it (:func:`triton_ext._triton.install`); the hook module
imports nothing from here.
"""

from __future__ import annotations

import contextlib
import contextvars
import difflib
import hashlib
import json
import os
import threading
from dataclasses import dataclass, replace
from typing import Any, Iterator, Mapping, Sequence

from ._errors import OptionError, TritonExtError, UnknownPassError
from ._extensions import activate_packages
from ._loader import load_extension, loaded_library
from ._log import get as get_logger
from ._manifest import Extension, Manifest, PassSpec, load_manifest
from ._passlist import parse_pass_list
from ._settings import settings
from ._triton import canonical_builtin, check_overrides, ensure_installed, install, lend

__all__ = ["Enabled", "Selection", "SelectionState", "state", "KEY_VERSION", "current", "install_hook", "lend_hook", "build", "enable", "enable_text",
           "disable", "enabled", "using", "spell_options", "check_options"]

KEY_VERSION = "triton_ext-2"
_logger = get_logger("selection")

#: The option of every optimization pass that declines (``RemarksOption`` in
#: infra/include/triton-ext/PassOptions.td): a remark ``<pass>: not applied: <reason>`` per decline.
REMARKS_OPTION = "remarks"
#: Triton's switch for MLIR diagnostics below errors (read by libtriton each time it runs a pass
#: manager; one of its cache-invalidating variables).
MLIR_DIAGNOSTICS_VAR = "MLIR_ENABLE_DIAGNOSTICS"


@dataclass(frozen=True)
class Enabled:
    """One enabled pass: its spec, extension, arguments and library digest."""

    spec: PassSpec
    extension: Extension
    options: tuple[tuple[str, Any], ...]
    library_sha256: str
    #: The pass-infra library's digest: it parses options and nests passes, so it is part of
    #: what a kernel compiles to, like the plugin's own bytes.
    infra_sha256: str = ""

    @property
    def args(self) -> tuple[str, ...]:
        values = dict(self.options)
        return tuple(o.render(values.get(o.name, o.default)) for o in self.spec.options)

    def for_target(self, backend: str) -> "Enabled":
        """This pass as it runs on ``backend``: the registry's ``target_options`` for it, under the
        options the user set."""
        defaults = self.spec.options_for(backend)
        if not defaults:
            return self
        declared = {o.name for o in self.spec.options}
        merged = {k: v for k, v in defaults.items() if k in declared}
        merged.update(self.options)
        return replace(self, options=tuple(sorted(merged.items())))

    def for_compile(self, compile_options: Any) -> "Enabled":
        """This pass with the options the registry's ``compile_options`` take from the compiling
        kernel's own options (Triton's ``CUDAOptions``/``HIPOptions``: ``num_stages``...), unless
        the user set them. A field the options object lacks leaves the option as it is. Triton's
        cache key covers its options already."""
        if not self.spec.compile_options:
            return self
        declared = {o.name: o for o in self.spec.options}
        merged = dict(self.options)
        for flag, name in self.spec.compile_options:
            value = getattr(compile_options, name, None)
            if flag in declared and flag not in merged and isinstance(value, int):
                merged[flag] = declared[flag].coerce(value)
        return replace(self, options=tuple(sorted(merged.items())))

    def describe(self) -> dict[str, Any]:
        s = self.spec
        return {
            "extension": self.extension.name,
            "pass": s.name,
            "stage": s.stage,
            "after": s.after,
            "before": s.before,
            "occurrence": s.occurrence,
            "then": list(s.then),
            "replaces": s.replaces,
            "skips": list(s.skips),
            "adds_pass": s.adds_pass,
            "args": list(self.args),
            "targets": [[t.backend, t.min_arch, t.max_arch, list(t.archs)] for t in self.extension.targets],
            "target_options": [[b, [list(kv) for kv in values]] for b, values in s.target_options],
            "compile_options": [list(kv) for kv in s.compile_options],
            "library_sha256": self.library_sha256,
            "infra_sha256": self.infra_sha256,
        }


@dataclass(frozen=True)
class Selection:
    """An immutable enabled set with its precomputed ``(key, hash)``."""

    entries: tuple[Enabled, ...] = ()
    key: str = ""
    hash: str = ""
    key_and_hash: tuple[str, str] = ("", "")

    @classmethod
    def of(cls, entries: Sequence[Enabled]) -> Selection:
        entries = tuple(entries)
        if not entries:
            return cls()
        text = json.dumps([KEY_VERSION] + [e.describe() for e in entries], sort_keys=True)
        digest = hashlib.sha256(text.encode()).hexdigest()
        key = f"{KEY_VERSION}-{digest}"
        return cls(entries, key, digest, (key, digest))

    def names(self) -> tuple[str, ...]:
        return tuple(e.spec.name for e in self.entries)

    def without(self, names: Sequence[str]) -> Selection:
        return Selection.of([e for e in self.entries if e.spec.name not in names])

    def with_(self, new: Sequence[Enabled]) -> Selection:
        replaced = {e.spec.name for e in new}
        return Selection.of([e for e in self.entries if e.spec.name not in replaced] + list(new))


# --------------------------------------------------------------------------- #
# The enabled set
# --------------------------------------------------------------------------- #

class SelectionState:
    """The enabled set's state: the process-wide set (:func:`enable`) and the context-scoped one
    (:func:`enabled`, :func:`using`). The stages hook receives it at install and reads
    ``scoped`` and ``process`` on every launch."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        #: The set every thread sees; replaced (never mutated) under ``lock``.
        self.process = Selection()
        self.scoped: contextvars.ContextVar[Selection | None] = contextvars.ContextVar(
            "triton_ext_selection", default=None)

    def current(self) -> Selection:
        """The enabled set seen by this thread (a scoped ``enabled()`` block wins)."""
        scoped = self.scoped.get()
        return scoped if scoped is not None else self.process


#: The one enabled-set state of the process.
state = SelectionState()


def current() -> Selection:
    """The enabled set seen by this thread (a scoped ``enabled()`` block wins)."""
    return state.current()


def install_hook() -> None:
    """Install the stages hook over this module's :data:`state` (nothing enabled changes)."""
    install(state)


def lend_hook() -> contextlib.AbstractContextManager[None]:
    """The stages hook over :data:`state` in Triton's slot for a block only, unless installed for
    good already (:func:`triton_ext._triton.lend`: the transparent mode's decisions)."""
    return lend(state)


def check_options(names: Sequence[str], options: Mapping[str, Any] | None, manifest: Manifest | None = None,
                  *, origin: str = "enable()", text: bool = False) -> list[tuple[PassSpec, tuple[tuple[str, Any], ...]]]:
    """Resolve pass or extension names and check every option value against what the pass
    declares (type, EnumOption values, bounds), without loading anything: each pass spec with its
    checked values. ``text``: values as written in a pipeline or ``TRITON_EXT_ENABLE``
    (``"2"``, ``"false"``). A bad value raises :class:`OptionError` in one line naming the
    option, what it accepts and ``origin`` (where the value came from)."""
    manifest = manifest or load_manifest()
    specs: list[PassSpec] = []
    for name in names:
        if name == "default":
            specs.extend(p for p in manifest.passes if p.enabled_by_default)
        elif _passless(manifest, name) is None:
            specs.extend(manifest.resolve(name))
    options = dict(options or {})
    for option in options:
        if not any(option in {o.name for o in s.options} for s in specs):
            if len(specs) == 1 and not specs[0].options:
                try:
                    specs[0].option(option)  # says why: no options, or not built yet
                except UnknownPassError as exc:
                    raise UnknownPassError(f"{origin}: {exc.message}", extension=specs[0].extension) from None
            owners = ", ".join(s.name for s in specs) or "nothing"
            declared = sorted({o.name for s in specs for o in s.options})
            raise UnknownPassError(
                f"{origin}: option {option!r} is declared by none of {owners}; expected one of "
                f"{', '.join(declared) or 'none'}"
                + (f"; did you mean {_close(option, declared)!r}?" if _close(option, declared) else ""),
                extension=specs[0].extension if specs else None,
            )
    out: list[tuple[PassSpec, tuple[tuple[str, Any], ...]]] = []
    for spec in specs:
        declared = {o.name: o for o in spec.options}
        values: list[tuple[str, Any]] = []
        for option_name, value in options.items():
            if option_name not in declared:
                continue
            option = declared[option_name]
            try:
                values.append((option_name, option.parse_text(value) if text and isinstance(value, str)
                               else option.coerce(value)))
            except (TypeError, ValueError) as exc:
                raise OptionError(f"{origin}: pass {spec.name}: {exc}", extension=spec.extension) from None
        out.append((spec, tuple(sorted(values))))
    return out


def build(names: Sequence[str], options: Mapping[str, Any] | None, manifest: Manifest | None = None,
          *, origin: str = "enable()", text: bool = False) -> list[Enabled]:
    """Resolve names, check options (:func:`check_options`), load libraries and activate the
    extensions' own Python packages (registry ``on_enable``); the new entries."""
    manifest = manifest or load_manifest()
    checked = check_options(names, options, manifest, origin=origin, text=text)
    # Registry `with:`: the helpers a pass's output needs, with their defaults, unless named.
    named = {spec.name for spec, _ in checked}
    for spec, _ in list(checked):
        for companion in spec.companions:
            if companion not in named:
                named.add(companion)
                checked += check_options([companion], None, manifest, origin=f"{origin} (with {spec.name})")
    for name in names:
        if name != "default" and (ext := _passless(manifest, name)) is not None:
            # A dialect or language extension without passes: enabling it is loading it (its
            # dialects and builder ops stay registered; Triton cannot unload a library).
            load_extension(ext)
            activate_packages([ext])
    if settings.remarks:
        checked = [(spec, _with_remarks(spec, values)) for spec, values in checked]
    if any(dict(values).get(REMARKS_OPTION) for _spec, values in checked):
        show_remarks()
    out: list[Enabled] = []
    for spec, values in checked:
        ext = manifest.extension_of(spec)
        for cleanup in spec.then + ((spec.anchor,) if spec.anchor else ()):
            try:
                canonical_builtin(cleanup)
            except KeyError as exc:
                raise UnknownPassError(
                    f"pass {spec.name} ({ext.source}:{spec.line}) names {exc.args[0]}; fix registry.yaml",
                    extension=ext.name,
                    path=ext.source,
                ) from None
        try:  # replaces/skips (issue 19)
            check_overrides(spec, f"{ext.source}:{spec.line}")
        except KeyError as exc:
            raise UnknownPassError(
                f"pass {spec.name} ({ext.source}:{spec.line}) {exc.args[0]}; fix registry.yaml",
                extension=ext.name,
                path=ext.source,
            ) from None
        if not spec.adds_pass:  # a kind: pipeline entry: nothing to load (issue 19)
            out.append(Enabled(spec, ext, values, ""))
            continue
        report = load_extension(ext)
        record = loaded_library(report.path)
        infra = record.infra_sha256 if record is not None else ""
        out.append(Enabled(spec, ext, values, report.sha256, infra))
    activate_packages([e.extension for e in out])
    return out


def _with_remarks(spec: PassSpec, values: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    """``TRITON_EXT_REMARKS=1``: ``remarks=true`` for a pass that declares the option, unless the
    user's options set it (either way). Like any option, it is part of the compile-cache key."""
    if not any(o.name == REMARKS_OPTION for o in spec.options) or any(k == REMARKS_OPTION for k, _ in values):
        return values
    return tuple(sorted(values + ((REMARKS_OPTION, True),)))


def show_remarks() -> None:
    """Make Triton print MLIR remarks (``MLIR_ENABLE_DIAGNOSTICS`` gets ``remarks``, other values
    kept): Triton drops diagnostics below errors otherwise. It prints them on stderr, as
    ``<file>:<line>:<col>: remark: <pass>: not applied: <reason>`` with the op's source line, when a
    kernel compiles (not on a cache hit). The variable is read whenever Triton runs a pass manager,
    so setting it after ``import triton`` works; it is one of Triton's cache-invalidating
    variables, so every kernel compiled afterwards gets a new cache key."""
    current = os.environ.get(MLIR_DIAGNOSTICS_VAR, "")
    values = [v.strip() for v in current.split(",") if v.strip()]
    if "remarks" in values:
        return
    os.environ[MLIR_DIAGNOSTICS_VAR] = ",".join(values + ["remarks"])
    _logger.info("%s=%s: Triton prints the passes' remarks (why they left something alone) on stderr",
                 MLIR_DIAGNOSTICS_VAR, os.environ[MLIR_DIAGNOSTICS_VAR])


def _passless(manifest: Manifest, name: str) -> Extension | None:
    """The extension called ``name`` when it declares no passes (a pass name wins)."""
    if any(p.name == name for p in manifest.passes):
        return None
    try:
        ext = manifest.extension(name)
    except TritonExtError:
        return None
    return ext if not ext.passes else None


def _close(name: str, known: Sequence[str]) -> str | None:
    hits = difflib.get_close_matches(name, list(known), n=1)
    return hits[0] if hits else None


def enable(*names: str, options: Mapping[str, Any] | None = None, **keywords: Any) -> Selection:
    """Enable passes (or every pass of an extension) for all threads; install the hook.

    ``options`` maps the pass's flag to a value (``{"max-parts": 2}``); keyword arguments with
    ``_`` for ``-`` are accepted too."""
    install(state)
    entries = build(names, spell_options(options, keywords), origin="enable()")
    _log_enabled(entries, "enable()")
    with state.lock:
        state.process = state.process.with_(entries)
        return state.process


def _text_entries(text: str, origin: str) -> list[Enabled]:
    """The entries of a pass list in MLIR's syntax (``a,b{flag=value},c``), options as text."""
    return build_each(parse_pass_list(text, origin), origin=origin, text=True)


def build_each(items: Sequence[tuple[str, Mapping[str, Any] | None]], *, origin: str,
               text: bool = False) -> list[Enabled]:
    """:func:`build` for each (name, options) in turn; a companion one item brings (registry
    ``with:``) gives way to the same pass named by another item, with that item's options."""
    manifest = load_manifest()
    named = {name for name, _ in items}
    return [entry for name, options in items
            for entry in build([name], options, manifest, origin=origin, text=text)
            if entry.spec.name == name or entry.spec.name not in named]


def enable_text(text: str, *, origin: str) -> Selection:
    """Enable the passes of a pass list in MLIR's syntax (``a,b{flag=value},c``) for all threads,
    each with its own options, written as text (``TRITON_EXT_ENABLE``); checked like
    :func:`enable`, with ``origin`` naming the source in errors."""
    entries = _text_entries(text, origin)
    _log_enabled(entries, origin)
    install(state)
    with state.lock:
        state.process = state.process.with_(entries)
        return state.process


def _log_enabled(entries: Sequence[Enabled], origin: str) -> None:
    for e in entries:
        _logger.info("%s: enabled %s (extension %s, %s): %s", origin, e.spec.name, e.extension.name, e.spec.position,
                     " ".join(e.args) or "no options")


def disable(*names: str) -> Selection:
    """Disable passes (or extensions) enabled with :func:`enable`; no names: all."""
    with state.lock:
        if not names:
            state.process = Selection()
            return state.process
        manifest = load_manifest()
        drop = [s.name for n in names if _passless(manifest, n) is None for s in manifest.resolve(n)]
        state.process = state.process.without(drop)
        return state.process


def spell_options(options: Mapping[str, Any] | None, keywords: Mapping[str, Any]) -> dict[str, Any]:
    """One option spelling: the pass's flag (``{"max-parts": 2}``). Keyword arguments are accepted
    too, with ``_`` for ``-`` (``max_parts=2``); naming one option both ways is an error."""
    spelled = dict(options or {})
    for key, value in keywords.items():
        flag = key.replace("_", "-")
        if flag in spelled:
            raise UnknownPassError(f"option {flag!r} given twice (as {key}= and in options=); give it once")
        spelled[flag] = value
    return spelled


@contextlib.contextmanager
def enabled(*names: str, options: Mapping[str, Any] | None = None, **keywords: Any) -> Iterator[Selection]:
    """Enable passes for this thread (context) until the block ends.

    Options as for :func:`enable` (``options={"max-parts": 2}``); ``max_parts=2`` is accepted too.
    """
    install(state)
    selection = current().with_(build(names, spell_options(options, keywords), origin="enabled()"))
    token = state.scoped.set(selection)
    try:
        yield selection
    finally:
        state.scoped.reset(token)


@contextlib.contextmanager
def enabled_text(text: str, *, origin: str) -> Iterator[Selection]:
    """:func:`enabled` for a pass list in MLIR's syntax (``a,b{flag=value}``), as
    :func:`enable_text` reads it."""
    install(state)
    token = state.scoped.set(current().with_(_text_entries(text, origin)))
    try:
        yield current()
    finally:
        state.scoped.reset(token)


@contextlib.contextmanager
def using(selection: Selection) -> Iterator[Selection]:
    """Make exactly ``selection`` this thread's (context's) enabled set until the block ends.

    triton_ext.autotune and the transparent mode (issue 19) run each variant under its own set."""
    ensure_installed(state)  # runs per launch in the autotune and auto modes: no lock once installed
    token = state.scoped.set(selection)
    try:
        yield selection
    finally:
        state.scoped.reset(token)
