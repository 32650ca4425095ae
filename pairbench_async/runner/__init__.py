"""runner: sweeps of episodes, concurrently, resumable.

Owns the episode loop (:mod:`.episode`: the same for every protocol) and the
evaluator that schedules episodes, shares the sandbox and models, writes records
and resumes (:mod:`.evaluator`). May import every wing below it: :mod:`..core`,
:mod:`..sandbox`, :mod:`..protocol`, :mod:`..runlog`, :mod:`..models`,
:mod:`..datasets`.
"""
