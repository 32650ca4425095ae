"""sandbox: running untrusted programs on tests, confined, at fork speed.

Owns the worker pool (:mod:`.pool`), the worker and zygote that run inside the
confinement (:mod:`.worker`, stdlib only, with the native module ``_confine`` built
from ``sandbox/confine.c``), the output and value comparison (:mod:`.compare`), the
reference line traces (:mod:`.traces`) and the pylint runner for compiler feedback
(:mod:`.lint`). May import only :mod:`..core`.
"""
