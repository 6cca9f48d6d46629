#!/usr/bin/env python3
"""Start-up of two daemon jars, launch by launch, paired and alternated (BENCHMARKS.md, "The hand-written CLI").

    scripts/cli-start-cost.py BEFORE.jar AFTER.jar [RUNS]      # RUNS=8; JAVA25, JAVA17 override the JVMs

Each round runs every case once for each jar, the order of the two jars swapped every round: `java -version`,
`--version` and a cold `discover` of an empty host (an empty sys/bus/pci/devices; NVML is tried as in the manifests)
on Java 25 with the image's flags (deploy/image/jvm.flags), without and with a class-data archive dumped for each jar
by scripts/dump-archive.sh, and on Java 17 with the JVM's defaults (the image's flags are Java 25's). Prints the load
average at each round and min / median wall time per case and jar.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = os.path.join(ROOT, "deploy/image/jvm.flags")
JAVA25 = os.environ.get("JAVA25", "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java")
JAVA17 = os.environ.get("JAVA17", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java")


def manifest_flags():
    """The image's JVM flags (deploy/image/jvm.flags, which the Dockerfile links into the runtime)."""
    lines = (line.strip() for line in open(FLAGS))
    return [line for line in lines if line and not line.startswith("#")]


def cases(jar, cache, empty, flags):
    discover = ["discover", "--host-root=" + empty]
    return [
        ("Java 25: `java -version`", [JAVA25] + flags + ["-version"]),
        ("Java 25: `--version`", [JAVA25] + flags + ["-jar", jar, "--version"]),
        ("Java 25: cold `discover`, empty host", [JAVA25] + flags + ["-jar", jar] + discover),
        ("Java 25 + archive: `--version`",
         [JAVA25] + flags + ["-XX:SharedArchiveFile=" + cache, "-jar", jar, "--version"]),
        ("Java 25 + archive: cold `discover`, empty host",
         [JAVA25] + flags + ["-XX:SharedArchiveFile=" + cache, "-jar", jar] + discover),
        ("Java 17: `java -version`", [JAVA17, "-version"]),
        ("Java 17: `--version`", [JAVA17, "-jar", jar, "--version"]),
        ("Java 17: cold `discover`, empty host", [JAVA17, "-jar", jar] + discover),
    ]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    jars = {"before": os.path.abspath(sys.argv[1]), "after": os.path.abspath(sys.argv[2])}
    runs = int(sys.argv[3]) if len(sys.argv) == 4 else 8
    env = dict(os.environ)
    env.pop("JAVA_TOOL_OPTIONS", None)
    flags = manifest_flags()
    with tempfile.TemporaryDirectory(prefix="vgpu-cli-cost-") as work:
        empty = os.path.join(work, "empty-host")
        os.makedirs(os.path.join(empty, "sys/bus/pci/devices"))
        table = {}
        for side, jar in jars.items():
            cache = os.path.join(work, side + ".jsa")
            subprocess.run([os.path.join(ROOT, "scripts/dump-archive.sh"), JAVA25, jar, cache], check=True)
            table[side] = cases(jar, cache, empty, flags)
        times = {}
        loads = []
        for r in range(runs):
            loads.append(os.getloadavg()[0])
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            for i in range(len(table["before"])):
                for side in order:
                    name, command = table[side][i]
                    start = time.perf_counter()
                    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
                    elapsed = (time.perf_counter() - start) * 1000
                    if done.returncode != 0:
                        sys.exit("%s (%s) exited %d: %s" % (name, side, done.returncode, done.stderr[-400:]))
                    times.setdefault((name, side), []).append(elapsed)
    print("load average (1 min) at each round: " + " ".join("%.2f" % load for load in loads))
    print("| launch | before: min / median (ms) | after: min / median (ms) |")
    print("|---|---|---|")
    for name, _ in table["before"]:
        b, a = times[(name, "before")], times[(name, "after")]
        print("| %s | %.0f / %.0f | %.0f / %.0f |" % (name, min(b), statistics.median(b), min(a), statistics.median(a)))


if __name__ == "__main__":
    main()
