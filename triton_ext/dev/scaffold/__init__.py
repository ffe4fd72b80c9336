"""``triton-ext new pass|dialect|language NAME``: scaffold an extension (see :mod:`.passes`)."""

from .passes import Names, ScaffoldError, Written, main, names_for, scaffold, scaffold_all

__all__ = ["ScaffoldError", "Names", "Written", "names_for", "scaffold", "scaffold_all", "main"]
