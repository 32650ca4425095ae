"""``pairbench list protocols|metrics|datasets``: what a run can use, with its sources."""

from __future__ import annotations

from typing import Any

__all__ = ["add_list_parsers", "list_command"]


def add_list_parsers(sub: Any) -> None:
    """``list protocols|metrics|datasets`` and its alias ``metrics``."""
    ls = sub.add_parser("list", help="what is available: protocols, metrics, datasets",
                        description="List the protocols (with their properties and sources), the "
                        "metrics (formula, direction, source) or the datasets (bundled fixtures and "
                        "importable formats).")
    ls.add_argument("what", choices=("protocols", "metrics", "datasets"))
    sub.add_parser("metrics", help="every metric with its direction, formula and source (= list metrics)",
                   description="Every metric the reports show: name, direction, meaning, formula, source.")


def _protocols() -> str:
    from ..protocol.protocols import PROTOCOLS

    lines = []
    for name, p in PROTOCOLS.items():
        doc = " ".join((type(p).__doc__ or "").split())
        flags = ["protected" if p.protected else "NOT hidden-test protected"]
        if p.controlled:
            flags.append("scenario and level control")
        if p.model_written:
            flags.append("feedback model" + (", validated" if p.validated else ", not validated"))
        if p.protected_in(False) != p.protected or p.validated_in(False) != p.validated:
            flags.append("with --baselines pairbench: " + ("validated, " if p.validated_in(False) else "")
                         + ("protected" if p.protected_in(False) else "NOT hidden-test protected"))
        if p.recorded:
            flags.append("replays a dataset's recorded feedback")
        lines.append(f"{name}\n    {doc}\n    {'; '.join(flags)}\n    source: {p.source}")
    return "\n".join(lines)


def _datasets() -> str:
    from ..core.errors import DatasetError
    from ..datasets.files import bundled_dataset, read_instances
    from ..datasets.importers import FORMATS

    lines = ["bundled (the default of run and validate):"]
    try:
        for path in bundled_dataset():
            lines.append(f"    {path}  ({len(read_instances(path).instances)} instances)")
    except DatasetError as exc:
        lines.append(f"    none: {exc}")
    lines.append("importable (pairbench import FORMAT SRC --out OUT.jsonl):")
    lines += [f"    {name:13} {fmt.description}" for name, fmt in FORMATS.items()]
    return "\n".join(lines)


def list_command(what: str) -> int:
    if what == "protocols":
        print(_protocols())
    elif what == "metrics":
        from ..report.glossary import metrics_table

        print(metrics_table())
    else:
        print(_datasets())
    return 0
