"""The report's figures (Figs. 3-7) as PNG bytes.

Drawn with matplotlib's object API on an Agg canvas, imported lazily, with no pyplot
and so no global figure state.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Final

from ..core.errors import ConfigError
from .layout import LEVELS, model_order
from .model import ProtocolView, Report

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["FIGURES", "draw_figures"]

#: Figure keys in page order; each is written as ``<key>.png``.
FIGURES: Final = ("fig3", "fig4", "fig5", "fig6", "fig7")
_PALETTE: Final = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_LEVEL_COLOURS: Final = ("#1a9850", "#66bd63", "#a6d96a", "#fee08b", "#fdae61", "#f46d43",
                         "#bdbdbd")


def draw_figures(report: Report) -> dict[str, bytes]:
    """Figs. 3-6 (and the protocol comparison) as PNG bytes, keyed as in :data:`FIGURES`.

    Needs matplotlib (a runtime dependency of ``report --html``); a missing one is a
    :class:`ConfigError` naming the fix. A figure without data is left out.
    """
    try:
        import matplotlib.backends.backend_agg  # noqa: F401
        import matplotlib.figure  # noqa: F401
    except ImportError as exc:
        raise ConfigError("the HTML report draws its figures with matplotlib: "
                          "pip install matplotlib") from exc
    view = report.views[report.main]
    order = model_order(report)
    colour = {m: _PALETTE[i % len(_PALETTE)] for i, m in enumerate(sorted(
        {m for v in report.views.values() for m in v.models}))}
    figs: dict[str, bytes] = {}
    hinted = [m for m in order if view.closure[m].attempted]
    if hinted:
        figs["fig3"] = _png(_closure_figure(view, hinted))
        defined = [m for m in order if view.models[m].HCC is not None]
        if defined:
            figs["fig4"] = _png(_hcc_figure(view, defined, colour))
    if report.fig5:
        figs["fig5"] = _png(_trajectory_figure(report.fig5, colour))
    figs["fig6"] = _png(_cumulative_figure(view, order, colour))
    if len(report.protocols) > 1:
        figs["fig7"] = _png(_protocol_figure(report, colour))
    return figs


def _label(text: str) -> str:
    """Model names and ids as literal text: ``$`` would start matplotlib's mathtext."""
    return text.replace("$", r"\$")


def _png(fig: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    return buf.getvalue()


def _turn_axes(ax: Axes, ylabel: str | None = None) -> None:
    """An x axis of whole turns and a 0-100 % y axis, gridded."""
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel("turn")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)


def _closure_figure(view: ProtocolView, hinted: list[str]) -> Figure:
    """Fig. 3: each hinted model's attempted scenarios by the level that closed them."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 1.0 + 0.5 * len(hinted)), layout="constrained")
    ax = fig.add_subplot()
    left = [0.0] * len(hinted)
    for level, col in zip(LEVELS, _LEVEL_COLOURS, strict=True):
        widths = [100 * (view.closure[m].shares() or {}).get(level, 0.0) for m in hinted]
        ax.barh([_label(m) for m in hinted], widths, left=left, color=col, label=level,
                edgecolor="white")
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of attempted scenarios (%)")
    ax.invert_yaxis()
    ax.legend(ncols=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False,
              fontsize="small")
    return fig


def _hcc_figure(view: ProtocolView, defined: list[str], colour: dict[str, str]) -> Figure:
    """Fig. 4: HintedClosedCoverage per model (where it is defined)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(max(4.0, 1.2 * len(defined)), 3.6), layout="constrained")
    ax = fig.add_subplot()
    values = [100 * (view.models[m].HCC or 0.0) for m in defined]
    bars = ax.bar([_label(m) for m in defined], values, color=[colour[m] for m in defined])
    ax.bar_label(bars, fmt="%.1f", fontsize="small")
    ax.set_ylabel("HintedClosedCoverage (%)")
    ax.set_ylim(0, max(100.0, max(values) * 1.1))
    ax.tick_params(axis="x", labelrotation=20)
    return fig


def _trajectory_figure(fig5: dict[str, dict[str, list[float]]], colour: dict[str, str]) -> Figure:
    """Fig. 5: the pass rate after each turn, one panel per chosen instance."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2 * len(fig5), 3.6), layout="constrained")
    axes = fig.subplots(1, len(fig5), squeeze=False, sharey=True)[0]
    for ax, (iid, per) in zip(axes, fig5.items(), strict=True):
        for model, series in per.items():
            ax.plot(range(len(series)), [100 * p for p in series], marker="o",
                    color=colour[model], label=_label(model))
        ax.set_title(_label(iid if len(iid) <= 40 else iid[:37] + "..."), fontsize="small")
        _turn_axes(ax)
    axes[0].set_ylabel("pass rate (%)")
    axes[0].legend(fontsize="small")
    return fig


def _cumulative_figure(view: ProtocolView, order: list[str], colour: dict[str, str]) -> Figure:
    """Fig. 6: the share of episodes fixed at or before each turn, per model."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for m in order:
        series = view.cumulative[m]
        ax.plot(range(len(series)), [100 * v for v in series], marker="o", color=colour[m],
                label=_label(m))
    _turn_axes(ax, "cumulative Final Fix (%)")
    ax.legend(fontsize="small")
    return fig


def _protocol_figure(report: Report, colour: dict[str, str]) -> Figure:
    """Fig. 6 per model and protocol: one line style per protocol, one colour per model."""
    from matplotlib.figure import Figure

    styles = ("-", "--", ":", "-.")
    fig = Figure(figsize=(7.5, 4.4), layout="constrained")
    ax = fig.add_subplot()
    for i, p in enumerate(report.protocols):
        for m, series in report.views[p].cumulative.items():
            ax.plot(range(len(series)), [100 * v for v in series], linestyle=styles[i % 4],
                    marker="o", markersize=3, color=colour[m], label=_label(f"{m} · {p}"))
    _turn_axes(ax, "cumulative Final Fix (%)")
    ax.legend(fontsize="small", ncols=2)
    return fig
