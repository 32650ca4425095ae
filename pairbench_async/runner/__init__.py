"""runner: sweeps of episodes, concurrently, resumable.

Owns the episode loop (:mod:`.episode`: the same for every protocol), the evaluator
that schedules episodes, shares the sandbox and models, writes records and resumes
(:mod:`.evaluator`), a sweep's parameters and statistics (:mod:`.config`) and the
circuit breaker that stops a dead model early (:mod:`.breaker`). May import every
wing below it: :mod:`..core`, :mod:`..sandbox`, :mod:`..protocol`, :mod:`..runlog`,
:mod:`..models`, :mod:`..datasets`.
"""
