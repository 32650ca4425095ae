"""cluster: the sandbox spread over the nodes of a Ray cluster.

One long-lived actor per node hosts the local confined pool (:mod:`.node`); the
driver side (:mod:`.ray_sandbox`, the only module that imports Ray, and only when a
Ray sandbox starts) places the actors, spreads batches of tests by least outstanding
work (:mod:`.placement`), retries a lost node's batches once elsewhere and keeps its
own heartbeat. :mod:`.options` holds its settings and :mod:`.factory` builds the
sandbox a command asked for (``--sandbox local|ray``). May import :mod:`..core` and
:mod:`..sandbox`.
"""
