"""core: the data model and the errors, shared by every wing.

Owns the typed structs that cross every boundary (:mod:`.types`: instances, tests,
programs, limits, results, messages, completions), the exception hierarchy
(:mod:`.errors`), the closed vocabulary of failure names a result may carry past the
sandbox (:mod:`.failures`) and the package version. Imports nothing of the package: it is the
bottom of the import order (see ``docs/ARCHITECTURE.md``).
"""
