"""The report's figures (Figs. 3-7) as PNG bytes.

Drawn with matplotlib's object API on an Agg canvas, imported lazily, with no pyplot
and so no global figure state.
"""

from __future__ import annotations

import io
from typing import Final

from ..core.errors import ConfigError
from .layout import LEVELS, model_order
from .model import Report

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
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError as exc:
        raise ConfigError("the HTML report draws its figures with matplotlib: "
                          "pip install matplotlib") from exc

    def label(text: str) -> str:
        """Model names and ids as literal text: ``$`` would start matplotlib's mathtext."""
        return text.replace("$", r"\$")

    view = report.views[report.main]
    order = model_order(report)
    colour = {m: _PALETTE[i % len(_PALETTE)] for i, m in enumerate(sorted(
        {m for v in report.views.values() for m in v.models}))}

    def png(fig: Figure) -> bytes:
        FigureCanvasAgg(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
        return buf.getvalue()

    figs: dict[str, bytes] = {}
    hinted = [m for m in order if view.closure[m].attempted]
    if hinted:
        fig = Figure(figsize=(9, 1.0 + 0.5 * len(hinted)), layout="constrained")
        ax = fig.add_subplot()
        left = [0.0] * len(hinted)
        for level, col in zip(LEVELS, _LEVEL_COLOURS, strict=True):
            widths = [100 * (view.closure[m].shares() or {}).get(level, 0.0) for m in hinted]
            ax.barh([label(m) for m in hinted], widths, left=left, color=col, label=level,
                    edgecolor="white")
            left = [a + b for a, b in zip(left, widths, strict=True)]
        ax.set_xlim(0, 100)
        ax.set_xlabel("share of attempted scenarios (%)")
        ax.invert_yaxis()
        ax.legend(ncols=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False,
                  fontsize="small")
        figs["fig3"] = png(fig)
        defined = [m for m in order if view.models[m].HCC is not None]
        if defined:
            fig = Figure(figsize=(max(4.0, 1.2 * len(defined)), 3.6), layout="constrained")
            ax = fig.add_subplot()
            values = [100 * (view.models[m].HCC or 0.0) for m in defined]
            bars = ax.bar([label(m) for m in defined], values, color=[colour[m] for m in defined])
            ax.bar_label(bars, fmt="%.1f", fontsize="small")
            ax.set_ylabel("HintedClosedCoverage (%)")
            ax.set_ylim(0, max(100.0, max(values) * 1.1))
            ax.tick_params(axis="x", labelrotation=20)
            figs["fig4"] = png(fig)
    if report.fig5:
        n = len(report.fig5)
        fig = Figure(figsize=(4.2 * n, 3.6), layout="constrained")
        axes = fig.subplots(1, n, squeeze=False, sharey=True)[0]
        for ax, (iid, per) in zip(axes, report.fig5.items(), strict=True):
            for model, series in per.items():
                ax.plot(range(len(series)), [100 * p for p in series], marker="o",
                        color=colour[model], label=label(model))
            ax.set_title(label(iid if len(iid) <= 40 else iid[:37] + "..."), fontsize="small")
            ax.set_xlabel("turn")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylim(-3, 103)
            ax.grid(alpha=0.3)
        axes[0].set_ylabel("pass rate (%)")
        axes[0].legend(fontsize="small")
        figs["fig5"] = png(fig)
    fig = Figure(figsize=(6.5, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for m in order:
        series = view.cumulative[m]
        ax.plot(range(len(series)), [100 * v for v in series], marker="o", color=colour[m],
                label=label(m))
    ax.set_xlabel("turn")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("cumulative Final Fix (%)")
    ax.set_ylim(-3, 103)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    figs["fig6"] = png(fig)
    if len(report.protocols) > 1:
        styles = ("-", "--", ":", "-.")
        fig = Figure(figsize=(7.5, 4.4), layout="constrained")
        ax = fig.add_subplot()
        for i, p in enumerate(report.protocols):
            for m, series in report.views[p].cumulative.items():
                ax.plot(range(len(series)), [100 * v for v in series], linestyle=styles[i % 4],
                        marker="o", markersize=3, color=colour[m], label=label(f"{m} · {p}"))
        ax.set_xlabel("turn")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("cumulative Final Fix (%)")
        ax.set_ylim(-3, 103)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", ncols=2)
        figs["fig7"] = png(fig)
    return figs
