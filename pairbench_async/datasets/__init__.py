"""datasets: instance files and the tools that make them.

Owns reading and writing instance files (:mod:`.files`), the importers of public
datasets (:mod:`.importers`), the pass-rate validator (:mod:`.validate`) and the
dataset builder (:mod:`.build`, with its work directory in :mod:`.build_workdir` and
one submission's repair turns in :mod:`.build_repair`). May import :mod:`..core`, :mod:`..sandbox`,
:mod:`..protocol`, :mod:`..runlog` and :mod:`..models`.
"""
