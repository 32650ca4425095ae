"""models: everything that answers a prompt.

Owns model specs and endpoint settings (:mod:`.endpoint`, :mod:`.specs`), the
OpenAI-compatible HTTP client (:mod:`.client`, with :mod:`.http_outcomes` classifying
what one attempt came to), token prices (:mod:`.prices`), the offline models
(:mod:`.sim` candidate; :mod:`.rules` feedback, reading the evidence with
:mod:`.rules_evidence` and the code with :mod:`.rules_code`; :mod:`.offline`) and the
``replay:`` model (:mod:`.replay`). May import :mod:`..core`, :mod:`..protocol`
and :mod:`..runlog`.
"""
