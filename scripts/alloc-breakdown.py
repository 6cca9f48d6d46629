#!/usr/bin/env python3
"""Bytes allocated on the vgpu-rescan thread, from a JFR recording's jdk.ObjectAllocationSample events, grouped by
the first project frame (lambdas skipped) and by class. The weights are samples: read shares, not exact bytes; the
exact total per rescan is RescanCost's alloc_bytes.

    jfr print --json --events jdk.ObjectAllocationSample --stack-depth 64 alloc.jfr > alloc.json
    scripts/alloc-breakdown.py alloc.json [rows]
"""
import collections
import json
import sys


def frame_name(frame):
    method = frame["method"]
    return method["type"]["name"].replace("/", ".") + "." + method["name"]


def main():
    events = json.load(open(sys.argv[1]))["recording"]["events"]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    by_frame, by_class, total = collections.Counter(), collections.Counter(), 0
    for event in events:
        values = event["values"]
        if values["eventThread"]["javaName"] != "vgpu-rescan":
            continue
        weight = values["weight"]
        total += weight
        by_class[values["objectClass"]["name"].replace("/", ".")] += weight
        frames = values["stackTrace"]["frames"] if values["stackTrace"] else []
        first = next((n for n in map(frame_name, frames) if n.startswith("dev.vgpu") and "$$Lambda" not in n), "?")
        by_frame[first] += weight
    print("sampled bytes: %d" % total)
    for title, counter in (("first project frame", by_frame), ("class", by_class)):
        print("-- by %s" % title)
        for name, weight in counter.most_common(rows):
            print("%5.1f %%  %s" % (100.0 * weight / total, name))


if __name__ == "__main__":
    main()
