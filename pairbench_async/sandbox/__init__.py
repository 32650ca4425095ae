"""sandbox: running untrusted programs on tests, confined, at fork speed.

Owns the worker pool (:mod:`.pool`: scheduling and supervision; :mod:`.config`, its
parameters; :mod:`.jobs`, what it queues; :mod:`.process`, one worker process and its
frames; :mod:`.results`, a result frame decoded into a verdict; :mod:`.host`, what the
host offers, found once per pool), the worker and zygote that run inside the
confinement (:mod:`.worker`, one stdlib-only file run as ``python -S``, with the
native module ``native`` built from ``sandbox/confine.c``), the output and value
comparison (:mod:`.compare`), the reference line traces (:mod:`.traces`) and the
pylint runner for compiler feedback (:mod:`.lint`). May import only :mod:`..core`.
"""
