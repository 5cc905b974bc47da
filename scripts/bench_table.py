#!/usr/bin/env python3
"""bench_table.py REPORT.json: the Markdown tables of docs/BENCHMARKS.md from a report of
`native-ops bench --json-file`, one per op: aten and each DSL's routed time (the impl's,
marked *, where the cond declines), % of the memory floor at the copy bandwidth measured
in the same run, and each DSL's speedup over aten with its 95% interval."""
import collections
import json
import sys


def main():
    report = json.load(open(sys.argv[1]))
    copy = {d["device"]: d["copy_gbps"] for d in report["devices"]}
    cells = collections.OrderedDict()
    dsls = []
    for row in report["rows"]:
        if not row["timed"]:
            continue
        if row["dsl"] not in dsls:
            dsls.append(row["dsl"])
        cells.setdefault(row["op"], collections.OrderedDict()).setdefault((row["device"], row["shape"]), {})[row["dsl"]] = row
    for op, shapes in cells.items():
        used = [d for d in dsls if any(d in by_dsl for by_dsl in shapes.values())]
        print(f"\n### {op}\n")
        header = ["shape", "aten us", "aten %"]
        for d in used:
            header += [f"{d} us", f"{d} %", f"{d} speedup (95% CI)"]
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for (device, shape), by_dsl in shapes.items():
            first = next(iter(by_dsl.values()))
            aten_us = first["original"]["median_ns"] / 1e3
            line = [shape, f"{aten_us:.1f}", f"{100 * first['original_gbps'] / copy[device]:.0f}"]
            for d in used:
                r = by_dsl.get(d)
                if r is None:
                    line += ["-", "-", "-"]
                    continue
                timing = r["routed"] if r["accepted"] else r["impl"]
                mark = "" if r["accepted"] else "*"
                line += [f"{timing['median_ns'] / 1e3:.1f}{mark}", f"{100 * r['copy_fraction']:.0f}",
                         f"{r['speedup']:.2f} ({r['speedup_ci'][0]:.2f}-{r['speedup_ci'][1]:.2f})"]
            print("| " + " | ".join(line) + " |")


if __name__ == "__main__":
    main()
