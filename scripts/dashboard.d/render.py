"""Renders deploy/grafana/token-broker.json as a PNG from a real Prometheus (scripts/dashboard-snapshot).

Every panel's own queries are evaluated by Prometheus's HTTP API (query_range) over the load run, with the
dashboard's variables filled in ($instance = all, $__rate_interval = four scrape intervals, as Grafana does);
panels are laid out on the dashboard's 24-column grid. Grafana itself is not in Debian's packages, so this
stands in for a screenshot; it also proves each query returns data from the broker's real metrics.

usage: render.py DASHBOARD_JSON PROMETHEUS_URL START END STEP RATE_INTERVAL OUT.png
Prints one line per panel: its title and the number of series its queries returned.
"""
import json
import sys
import urllib.parse
import urllib.request

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

dashboard_path, prometheus, start, end, step, rate_interval, out = sys.argv[1:8]
dashboard = json.load(open(dashboard_path))
BACKGROUND, PANEL, TEXT, GRID = "#111217", "#181b1f", "#ccccdc", "#2c3235"
COLOURS = ["#73bf69", "#f2cc0c", "#8ab8ff", "#ff780a", "#f2495c", "#5794f2", "#b877d9", "#fade2a", "#96d98d", "#ffb357"]


def query_range(expr):
    expr = expr.replace('{instance=~"$instance"}', "").replace('instance=~"$instance",', "")
    expr = expr.replace("$__rate_interval", rate_interval)
    url = prometheus + "/api/v1/query_range?" + urllib.parse.urlencode(
        {"query": expr, "start": start, "end": end, "step": step})
    answer = json.load(urllib.request.urlopen(url, timeout=30))
    if answer.get("status") != "success":
        raise SystemExit("query failed: %s: %s" % (expr, answer))
    return answer["data"]["result"]


def label(series, target):
    metric = series["metric"]
    legend = target.get("legendFormat")
    if legend and legend != "__auto":
        for name, value in metric.items():
            legend = legend.replace("{{%s}}" % name, value).replace("{{ %s }}" % name, value)
        return legend
    names = {k: v for k, v in metric.items() if k not in ("__name__", "job")}
    return ", ".join("%s=%s" % kv for kv in sorted(names.items())) or target.get("expr", "")[:40]


panels = dashboard["panels"]
bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
unit = 0.42  # inches per grid row (Grafana's 30 px at 72 dpi)
width = 24 * 0.85
figure = plt.figure(figsize=(width, bottom * unit), facecolor=BACKGROUND)
figure.text(0.01, 1 - 0.4 / (bottom * unit), dashboard.get("title", "token-broker"), color=TEXT, fontsize=16,
            va="center")
report = []
for panel in panels:
    g = panel["gridPos"]
    left, top = g["x"] / 24, 1 - g["y"] / bottom
    w, h = g["w"] / 24, g["h"] / bottom
    if panel["type"] == "row":
        figure.text(left + 0.005, top - h / 2, panel["title"], color=TEXT, fontsize=13, weight="bold", va="center")
        continue
    # Room inside the panel's cell for the tick labels, so neighbouring panels do not cover them.
    axes = figure.add_axes([left + 0.03, top - h + 0.012, w - 0.036, h - 0.018 - 0.5 / (bottom * unit)])
    axes.set_facecolor(PANEL)
    axes.set_title(panel["title"], color=TEXT, fontsize=10, loc="left")
    for spine in axes.spines.values():
        spine.set_color(GRID)
    axes.tick_params(colors=TEXT, labelsize=7)
    count, colour = 0, 0
    if panel["type"] == "stat":
        values = []
        for target in panel.get("targets", []):
            result = query_range(target["expr"])
            count += len(result)
            values.append(result[0]["values"][-1][1] if result else "–")
        axes.set_xticks([])
        axes.set_yticks([])
        text = " / ".join("%g" % float(v) if v != "–" else v for v in values)
        axes.text(0.5, 0.45, text, color="#73bf69", fontsize=32, ha="center", va="center", transform=axes.transAxes)
    else:
        t0, flat = float(start), 0
        for target in panel.get("targets", []):
            for series in query_range(target["expr"]):
                xs = [float(t) - t0 for t, _ in series["values"]]
                ys = [float(v) for _, v in series["values"]]
                count += 1
                # Counters registered for every cause show as many series at 0; one legend line says so.
                if not any(ys):
                    flat += 1
                    continue
                axes.plot(xs, ys, color=COLOURS[colour % len(COLOURS)], linewidth=1.2, label=label(series, target)[:38])
                colour += 1
        if flat:
            axes.plot([], [], color=GRID, label="%d more series at 0" % flat)
        axes.grid(color=GRID, linewidth=0.5)
        axes.set_xlim(0, float(end) - t0)
        axes.set_xlabel("seconds into the run", color=TEXT, fontsize=7)
        if count:
            axes.legend(fontsize=6, loc="upper left", facecolor=PANEL, edgecolor=GRID, labelcolor=TEXT, ncol=2)
        else:
            axes.text(0.5, 0.5, "No data", color=TEXT, fontsize=10, ha="center", va="center", transform=axes.transAxes)
    report.append("%-32s %d series" % (panel["title"], count))
figure.savefig(out, dpi=72, facecolor=BACKGROUND)
print("\n".join(report))
