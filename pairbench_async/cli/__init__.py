"""cli: ``python -m pairbench_async`` and ``pairbench``, one module per subcommand.

:mod:`.main` builds the parser and dispatches to :mod:`.run`, :mod:`.report`,
:mod:`.exec`, :mod:`.validate`, :mod:`.import_` and :mod:`.build_dataset`. The top of
the import order: it may import every wing, and no wing imports it.
"""
