"""runlog: what a run leaves on disk: the record schema and the files that hold it.

Owns the turn, episode and manifest records (:mod:`.records`) and their append-only
JSON Lines store with crash-safe resume (:mod:`.store`), the messages every model call
sent, stored once by content and compressed (:mod:`.messages`), and the layout of a ``--sweep``
folder, a run folder per setting (:mod:`.sweep`). Read by the runner (resume),
the report, the dataset builder and the ``replay:`` model. May import :mod:`..core`
and :mod:`..protocol` (whose state and hint attempts a record holds).
"""
