"""report: numbers from records.

Owns a run's or a sweep's folder read back once (:mod:`.runs`: ``load_run``, the public
way to a run's trajectories and metrics), the report's documents (:mod:`.documents`: the
text, the JSON and the page of ``pairbench report``), the trajectory data model (:mod:`.trajectory`), the per-turn and per-instance
metrics (:mod:`.trajectory_metrics`) and their per-model aggregation (:mod:`.metrics`),
ranking (:mod:`.ranking`), edit precision, BLEU and CodeBLEU (:mod:`.precision`,
:mod:`.edits`, :mod:`.verdicts`, :mod:`.bleu`, :mod:`.codebleu`, :mod:`.codebleu_package`),
FixEval's pass@k and TCA@k (:mod:`.pass_at_k`), the leaderboard (:mod:`.leaderboard`), token costs
(:mod:`.cost`), what each metric means (:mod:`.glossary`), tidy export tables
(:mod:`.tables`), the rendered report (:mod:`.model`, :mod:`.layout`,
:mod:`.figures`, :mod:`.html`) and its per-episode transcripts (:mod:`.transcript`,
:mod:`.transcript_html`). Reads records, never runs anything. May import
:mod:`..core`, :mod:`..protocol`, :mod:`..runlog` and :mod:`..models` (prices).
"""
