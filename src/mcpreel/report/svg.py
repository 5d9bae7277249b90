"""The report's charts, drawn as inline SVG on the Python side.

Why SVG strings rather than a vendored chart library: the charts are two (bars of p50/p95/max per
method on a log axis, message counts over time with the failures in a strip of their own), their data is already summarised, and a few dozen lines of SVG
draw them with no script, no licence to carry and nothing to keep up to date. The chart is in the
file as markup, so it shows with scripts off, prints, and can be asserted on in tests; it scales with
the page (``viewBox``) and takes its colours from the page's CSS variables.

Every text that comes from a session (method names) is escaped; numbers are formatted here.
"""

from __future__ import annotations

import math
from html import escape

from mcpreel._infra.timeutil import duration_ms_text
from mcpreel.inspection import LatencyStats

__all__ = ["LogAxis", "activity_chart", "fmt_ms", "latency_chart", "plural"]


def _tick_text(ms: float) -> str:
    """An axis tick: a power of ten, sub-millisecond ones as they are (0.1 ms), not rounded away."""
    return f"{ms:g} ms" if ms < 1 else fmt_ms(ms)


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "–"
    if ms < 1000:
        return f"{duration_ms_text(ms)} ms"
    if ms < 60_000:
        return f"{ms / 1000:.3g} s"
    return f"{ms / 60_000:.3g} min"


def _nice_max(value: float) -> float:
    """The next 1/2/5 x 10^k at or above ``value`` (an axis end a reader can count on)."""
    if value <= 0:
        return 1
    k = 1.0
    while k * 10 <= value:
        k *= 10
    while k > value:
        k /= 10
    for m in (1, 2, 2.5, 5, 10):
        if m * k >= value:
            return m * k
    return 10 * k


def _decade_below(value: float) -> float:
    """The power of ten at or below ``value`` (at least 0.1 ms: below that a latency is noise)."""
    k = 1.0
    value = max(value, 0.1)
    while k > value:
        k /= 10
    while k * 10 <= value:
        k *= 10
    return max(k, 0.1)


class LogAxis:
    """A log10 axis from a power of ten at or below the smallest value to one at or above the largest.

    Why log: a method's p50 of 3 ms next to a max of 2 s is a bar of 0.15% of the width on a linear axis
    (invisible); on a log axis each factor of ten is the same width, so p50, p95 and max are all seen and
    compared by their ratios.
    """

    def __init__(self, low: float, high: float, width: float):
        self.low = _decade_below(low)
        top = self.low * 10
        while top < high:
            top *= 10
        self.high = top
        self.width = width
        self.decades = round(math.log10(self.high / self.low))

    def x(self, value: float) -> float:
        """The distance from the axis' start of ``value`` (a value at or below the start is at 0)."""
        if value <= self.low:
            return 0.0
        return self.width * math.log10(value / self.low) / self.decades

    def ticks(self) -> list[float]:
        return [self.low * 10**i for i in range(self.decades + 1)]


def latency_chart(latency: dict[str, LatencyStats], *, limit: int = 40) -> str:
    """Horizontal bars per method: max (light), p95 (mid) and p50 (dark) on one shared log-scale axis
    (:class:`LogAxis`), the values written beside each row."""
    items = sorted(latency.items(), key=lambda kv: (-kv[1].p95_ms, kv[0]))[:limit]
    if not items:
        return '<p class="empty">No request with a response and times on both ends: no latency to draw.</p>'
    label_w, bar_w, row_h, top = 230, 520, 26, 28
    width = label_w + bar_w + 230
    height = top + row_h * len(items) + 24
    positive = [v for _, s in items for v in (s.p50_ms, s.max_ms) if v > 0]
    axis = LogAxis(min(positive, default=1), max(positive, default=1), bar_w)
    out = [f'<svg class="chart" id="latency-chart" role="img" viewBox="0 0 {width} {height}" '
           f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg" data-scale="log">',
           f'<title>Latency per method: p50, p95 and max over {plural(sum(s.count for _, s in items), "response")}, '
           f'on a log scale (each grid line ten times the one before)</title>']
    # legend
    x = label_w
    for cls, name in (("p50", "p50"), ("p95", "p95"), ("max", "max")):
        out.append(f'<rect class="bar-{cls}" x="{x}" y="6" width="12" height="12"/>'
                   f'<text class="legend" x="{x + 16}" y="16">{name}</text>')
        x += 70
    out.append(f'<text class="legend" x="{x}" y="16">log scale: ×10 a grid line</text>')
    # grid: one line a power of ten
    for tick in axis.ticks():
        gx = label_w + axis.x(tick)
        out.append(f'<line class="grid" x1="{gx:.1f}" y1="{top - 4}" x2="{gx:.1f}" y2="{height - 20}"/>'
                   f'<text class="tick" x="{gx:.1f}" y="{height - 6}" text-anchor="middle">{escape(_tick_text(tick))}</text>')
    for row, (method, s) in enumerate(items):
        y = top + row * row_h
        name = method if len(method) <= 34 else method[:33] + "…"
        out.append(f'<g class="lat-row" data-method="{escape(method)}">'
                   f'<title>{escape(method)}: {s.count} × · p50 {fmt_ms(s.p50_ms)} · p95 {fmt_ms(s.p95_ms)} · max {fmt_ms(s.max_ms)}</title>'
                   f'<text class="label" x="{label_w - 8}" y="{y + 16}" text-anchor="end">{escape(name)}</text>')
        for cls, value, inset in (("max", s.max_ms, 2), ("p95", s.p95_ms, 5), ("p50", s.p50_ms, 8)):
            w = max(1.5, axis.x(value)) if value > 0 else 0.5
            out.append(f'<rect class="bar-{cls}" x="{label_w}" y="{y + inset}" width="{w:.1f}" height="{row_h - 2 * inset}"/>')
        out.append(f'<text class="value" x="{label_w + bar_w + 8}" y="{y + 16}">{escape(fmt_ms(s.p50_ms))} / '
                   f'{escape(fmt_ms(s.p95_ms))} / {escape(fmt_ms(s.max_ms))}</text></g>')
    out.append("</svg>")
    if len(latency) > limit:
        out.append(f'<p class="note">The {limit} methods with the highest p95 of {len(latency)}.</p>')
    return "".join(out)


def plural(n: int, word: str, words: str | None = None) -> str:
    """``1 call``, ``2 calls``, ``1,000 calls`` (``words`` when the plural is not ``word`` + s)."""
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def activity_chart(activity: dict[str, object]) -> str:
    """Messages per time bucket, client→server above the axis and server→client below; failures in a strip
    of their own under it, each bucket's bar as tall as its share of the busiest bucket's failures, so a
    cluster of failures stands out from failures spread thin (a mark of one size on every bucket did not)."""
    if not activity:
        return '<p class="empty">No timestamps in this session: no activity over time to draw.</p>'
    c2s: list[int] = activity["c2s"]  # type: ignore[assignment]
    s2c: list[int] = activity["s2c"]  # type: ignore[assignment]
    fail: list[int] = activity["fail"]  # type: ignore[assignment]
    width_ms = int(activity["width_ms"])  # type: ignore[call-overload]
    n = len(c2s)
    failures = any(fail)
    plot_w, half, left = 760, 60, 50
    strip = 36 if failures else 0  # the failures' strip, under the messages
    width, height = left + plot_w + 10, 2 * half + 40 + strip
    mid = 10 + half
    strip_top = 2 * half + 20
    peak = max(max(c2s, default=0), max(s2c, default=0), 1)
    fail_peak = max(fail, default=0)
    bw = plot_w / max(n, 1)
    out = [f'<svg class="chart" id="activity-chart" role="img" viewBox="0 0 {width} {height}" width="{width}" '
           f'height="{height}" xmlns="http://www.w3.org/2000/svg">',
           f'<title>Messages over time, {fmt_ms(width_ms)} per bar: client→server above, server→client below'
           + (f'; failed calls under them, the tallest bar {plural(fail_peak, "failure")}' if failures else '')
           + '</title>',
           f'<text class="tick" x="{left - 6}" y="16" text-anchor="end">{peak}</text>',
           f'<text class="tick" x="{left - 6}" y="{mid + 4}" text-anchor="end">0</text>',
           f'<text class="tick" x="{left - 6}" y="{2 * half + 8}" text-anchor="end">{peak}</text>',
           f'<line class="axis" x1="{left}" y1="{mid}" x2="{left + plot_w}" y2="{mid}"/>']
    if failures:
        out.append(f'<text class="tick fail-label" x="{left - 6}" y="{strip_top + 12}" text-anchor="end">{fail_peak}</text>'
                   f'<text class="tick fail-label" x="{left - 6}" y="{strip_top + strip - 2}" text-anchor="end">failed</text>'
                   f'<line class="grid" x1="{left}" y1="{strip_top + strip}" x2="{left + plot_w}" y2="{strip_top + strip}"/>')
    for i in range(n):
        x = left + i * bw
        tip = f"{fmt_ms(i * width_ms)}–{fmt_ms((i + 1) * width_ms)}: {c2s[i]} → server, {s2c[i]} → client"
        if fail[i]:
            tip += f", {fail[i]} failed"
        out.append(f'<g class="bucket"><title>{escape(tip)}</title>')
        if c2s[i]:
            h = half * c2s[i] / peak
            out.append(f'<rect class="c2s" x="{x:.1f}" y="{mid - h:.1f}" width="{max(bw - 1, 1):.1f}" height="{h:.1f}"/>')
        if s2c[i]:
            h = half * s2c[i] / peak
            out.append(f'<rect class="s2c" x="{x:.1f}" y="{mid}" width="{max(bw - 1, 1):.1f}" height="{h:.1f}"/>')
        if fail[i]:
            h = max(1.5, (strip - 4) * fail[i] / fail_peak)
            out.append(f'<rect class="fail" data-failed="{fail[i]}" x="{x:.1f}" y="{strip_top + strip - h:.1f}" '
                       f'width="{max(bw - 1, 1):.1f}" height="{h:.1f}"/>')
        out.append("</g>")
    out.append(f'<text class="tick" x="{left}" y="{height - 4}">0</text>'
               f'<text class="tick" x="{left + plot_w}" y="{height - 4}" text-anchor="end">{escape(fmt_ms(n * width_ms))}</text>')
    out.append("</svg>")
    return "".join(out)
