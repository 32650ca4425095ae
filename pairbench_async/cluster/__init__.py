"""cluster: the sandbox spread over the nodes of a Ray cluster.

One long-lived actor per node hosts the local confined pool (:mod:`.node`); the
driver side (:mod:`.ray_sandbox`, the only module that imports Ray, and only when a
Ray sandbox starts) connects, cuts jobs into batches and retries a lost node's
batches once elsewhere. It is composed of :mod:`.membership` (which nodes serve:
their actors' start, the heartbeat, a node's loss), :mod:`.admission` (batches
waiting their turn for room, retries first) and :mod:`.placement` (least outstanding
work per worker, affinity); none of these imports Ray. :mod:`.options` holds its
settings and :mod:`.factory` builds the sandbox a command asked for
(``--sandbox local|ray``). May import :mod:`..core` and :mod:`..sandbox`.
"""
