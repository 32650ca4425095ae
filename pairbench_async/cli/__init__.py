"""cli: ``python -m pairbench_async`` and ``pairbench``, one module per subcommand.

:mod:`.main` builds the parser and dispatches to :mod:`.run`, :mod:`.report`,
:mod:`.exec`, :mod:`.validate`, :mod:`.import_`, :mod:`.build_dataset`,
:mod:`.export` and :mod:`.listing` (``list``); :mod:`.args` holds the argument types
that refuse a bad value before anything runs. The top of
the import order: it may import every wing, and no wing imports it.
"""
