"""report: numbers from records.

Owns the trajectory metrics (:mod:`.metrics`), ranking (:mod:`.ranking`), hint
precision and BLEU (:mod:`.precision`, :mod:`.bleu`), the leaderboard and token
costs (:mod:`.leaderboard`), and the rendered report (:mod:`.model`, :mod:`.layout`,
:mod:`.figures`, :mod:`.html`). Reads records, never runs anything. May import
:mod:`..core`, :mod:`..protocol`, :mod:`..runlog` and :mod:`..models` (prices).
"""
