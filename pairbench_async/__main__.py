"""``python -m pairbench_async``."""

from ._cli import main

raise SystemExit(main())
