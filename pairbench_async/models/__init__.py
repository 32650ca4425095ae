"""models: everything that answers a prompt.

Owns model specs and endpoint settings (:mod:`.endpoint`, :mod:`.specs`), the
OpenAI-compatible HTTP client (:mod:`.client`), token prices (:mod:`.prices`), the
offline models (:mod:`.sim` candidate, :mod:`.rules` feedback, :mod:`.offline`) and
the ``replay:`` model (:mod:`.replay`). May import :mod:`..core`, :mod:`..protocol`
and :mod:`..runlog`.
"""
