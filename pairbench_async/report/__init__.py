"""report: numbers from records.

Owns a run's or a sweep's folder read back once (:mod:`.runs`: ``load_run``, the public
way to a run's trajectories and metrics) and the report's documents (:mod:`.documents`:
the text, the JSON and the page of ``pairbench report``); the metric registry
(:mod:`.registry`: every metric's name, label, unit, direction) and what each metric
means as text (:mod:`.glossary`); the trajectory data model (:mod:`.trajectory`), the
per-turn and per-instance metrics (:mod:`.trajectory_metrics`) and their per-model
aggregation (:mod:`.metrics`), ranking (:mod:`.ranking`), Table VII across a sweep's
settings (:mod:`.sensitivity`), edit precision, BLEU and CodeBLEU (:mod:`.precision`,
:mod:`.edits`, :mod:`.verdicts`, :mod:`.bleu`, :mod:`.codebleu`, :mod:`.codebleu_package`),
FixEval's pass@k and TCA@k (:mod:`.pass_at_k`), seed 002's test-case accuracy
(:mod:`.accuracy`), completeness (:mod:`.completeness`), the leaderboard
(:mod:`.leaderboard`), token costs (:mod:`.cost`), tidy export tables (:mod:`.tables`),
the rendered report (:mod:`.model`; the page's building blocks :mod:`.layout`, its
composer :mod:`.sections` over :mod:`.run_tables`, :mod:`.paper_sections` and
:mod:`.sweep_sections`; :mod:`.figures`, :mod:`.html`) and its per-episode transcripts
(:mod:`.transcript`, :mod:`.transcript_html`). Reads records, never runs anything. May
import :mod:`..core`, :mod:`..protocol`, :mod:`..runlog`, :mod:`..models` (prices) and
:mod:`..datasets` (a run's dataset read back, for precision and the transcripts).
"""
