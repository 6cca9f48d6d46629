#!/usr/bin/env python3
"""Builds the NVIDIA pci.ids section bundled in the daemon jar (docs/BUILD.md, "The bundled pci.ids").

    scripts/bundled-pci-ids.py UPSTREAM NEWER > vgpu-example-daemon/src/main/resources/dev/vgpu/daemon/nvidia-pci.ids

UPSTREAM is the NVIDIA section of the pci.ids that NVIDIA's kubevirt-gpu-device-plugin pins (its names must win,
so that resource names match an upstream deployment); NEWER is the NVIDIA section of a later pci.ids, from which
only the device ids UPSTREAM does not know are taken (each with its subsystem lines). The output keeps UPSTREAM's
blocks and order, with the new ids inserted in id order. Device ids in both files keep UPSTREAM's block whole.

The result must also keep every name in vgpu-example-daemon/src/test/resources/shipped-pci-names.tsv (checked by
BundledPciIdsTest): a name once shipped never changes.
"""
import re
import sys

DEVICE = re.compile(r"^\t([0-9a-f]{4})  ")


def read(path):
    """(version, blocks): the Version header and the 10de vendor block as [(device id or None, [lines])]."""
    version = None
    blocks = []
    inside = False
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not inside:
                m = re.match(r"^#\s*Version:\s*(\S+)", line)
                if m and version is None:
                    version = m.group(1)
                if line.startswith("10de "):
                    inside = True
                continue
            if line and not line.startswith("\t") and not line.startswith("#"):
                break  # the next vendor
            m = DEVICE.match(line)
            if m:
                blocks.append((m.group(1), [line]))
            elif blocks:
                blocks[-1][1].append(line)  # subsystem lines and comments belong to the device before them
            elif line:
                blocks.append((None, [line]))
    if version is None or not blocks:
        sys.exit(f"{path}: no Version header or no 10de section")
    return version, blocks


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    up_version, up_blocks = read(sys.argv[1])
    new_version, new_blocks = read(sys.argv[2])
    known = {i for i, _ in up_blocks if i}
    added = [(i, lines) for i, lines in new_blocks if i and i not in known]
    out = []
    pending = list(added)
    for i, lines in up_blocks:
        while pending and i and pending[0][0] < i:
            out.append(pending.pop(0))
        out.append((i, lines))
    out.extend(pending)

    print("#")
    print("#\tList of PCI ID's: the NVIDIA (10de) section, pinned for vgpu-daemon")
    print("#")
    print(f"#\tVersion: {up_version} + {new_version}")
    print("#")
    print("#\tMaintained by Albert Pool, Martin Mares, and other volunteers from")
    print("#\tthe PCI ID Project at https://pci-ids.ucw.cz/.")
    print("#")
    print("#\tThis file can be distributed under either the GNU General Public License")
    print("#\t(version 2 or higher) or the 3-clause BSD License.")
    print("#")
    print("#\tThe database is a compilation of factual data, and as such the copyright")
    print("#\tonly covers the aggregation and formatting. The copyright is held by")
    print("#\tMartin Mares and Albert Pool.")
    print("#")
    print(f"#\tMade by scripts/bundled-pci-ids.py: every device of pci.ids {up_version} (the version NVIDIA's")
    print(f"#\tkubevirt-gpu-device-plugin pins, whose names win), plus the {len(added)} device ids only pci.ids")
    print(f"#\t{new_version} knows. Passthrough resource names come from it when no other pci.ids is found;")
    print("#\ta name once shipped never changes (shipped-pci-names.tsv in the daemon's tests).")
    print("#")
    print()
    print("10de  NVIDIA Corporation")
    for _, lines in out:
        for line in lines:
            print(line)


if __name__ == "__main__":
    main()
