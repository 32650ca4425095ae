"""protocol: the PAIR-BENCH protocol and its baselines, pure.

Owns failure scenarios and shapes, the scenario/level policy (Algorithm 1), the
evidence of a failure (:mod:`.evidence`), level masks (:mod:`.hints`) and the feedback
prompt (:mod:`.feedback_prompt`), the leakage validator (:mod:`.leakage`, with its
rules in :mod:`.leakage_patterns` and :mod:`.leakage_quotes`), candidate prompts and
code extraction,
prompt ablations, the protocol registry (:mod:`.protocols`) and what a feedback model
is shown (:mod:`.context`). No event loop, file, process, clock or network: the
architecture test checks it. The protocol objects' ``feedback()`` is a coroutine only
because it awaits the model calls the runner injects (``FeedbackIO``); nothing here
starts or schedules anything. May import only :mod:`..core`.
"""
