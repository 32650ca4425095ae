"""protocol: the PAIR-BENCH protocol and its baselines, pure and synchronous.

Owns failure scenarios and shapes, the scenario/level policy (Algorithm 1), evidence
masks and hint prompts, the leakage validator, candidate prompts and code extraction,
prompt ablations, the protocol registry (:mod:`.protocols`) and what a feedback model
is shown (:mod:`.context`). No event loop, file, process, clock or network: the
architecture test checks it. May import only :mod:`..core`.
"""
