"""``python -m pairbench_async``."""

from .cli.main import main

raise SystemExit(main())
