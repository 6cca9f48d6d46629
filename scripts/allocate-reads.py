#!/usr/bin/env python3
"""Counts the host files an Allocate touches, from an strace of dev.vgpu.bench.deviceplugin.AllocateReads.

Usage: scripts/allocate-reads.py TRACE CALLS

Only the system calls between the two marker probes (vgpu-reads-begin, vgpu-reads-end) count; paths are shown
relative to the generated host root, with the number of calls per Allocate.
"""
import collections
import re
import sys


def main():
    trace, calls = sys.argv[1], int(sys.argv[2])
    counts = collections.Counter()
    inside = False
    call = re.compile(r'^\d+\s+(\w+)\((?:AT_FDCWD, )?"([^"]+)"')
    with open(trace, encoding='utf-8', errors='replace') as f:
        for line in f:
            m = call.match(line)
            if not m:
                continue
            name, path = m.groups()
            if path.endswith('vgpu-reads-begin'):
                inside = True
                continue
            if path.endswith('vgpu-reads-end'):
                break
            if inside and '/host/' in path:
                counts[(name, path[path.index('/host/') + len('/host/'):])] += 1
    if not counts:
        sys.exit('no host paths between the markers: was the trace made with -f and the markers reached?')
    for (name, path), n in sorted(counts.items(), key=lambda kv: kv[0][1]):
        print(f'{n / calls:5.1f}  {name:11} {path}')
    print(f'{sum(counts.values()) / calls:5.1f}  calls per Allocate in all')


if __name__ == '__main__':
    main()
