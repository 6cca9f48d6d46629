#!/usr/bin/env bash
# The benchmark suite: end-to-end figures of the packaged daemon launched as deploy/base/daemonset.yaml launches
# it (dev.vgpu.bench.e2e.DaemonBench), then the JMH benchmarks. Every figure stands beside a baseline measured in
# the same run; BENCHMARKS.md holds the latest output.
#
#   scripts/bench.sh                          # build, then everything (about 10 minutes on 2 cores)
#   scripts/bench.sh --soak-minutes 3 --runs 5 --nmt
#   BENCH_BUILD=0 BENCH_JMH=0 scripts/bench.sh --only cold,start
#
# Options after the script name go to DaemonBench: --runs N (3), --soak-minutes M (1), --changes N (5),
# --nmt (native memory summary of the soaked daemon), --only cold,rescan,start,config,soak, --work DIR (keep files),
# --daemon-jar JAR and --manifest FILE (another build or launch, for before/after). JMH_ARGS overrides the JMH
# options; BENCH_JAVA the JVM (below).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${BENCH_BUILD:-1}" != 0 ]; then
  mvn -B -o -q -DskipTests package
fi
bench_jar=vgpu-benchmarks/target/benchmarks.jar
daemon_jar=vgpu-example-daemon/target/vgpu-daemon.jar
floor=vgpu-benchmarks/target/floor
gcc -O2 -o "$floor" vgpu-benchmarks/src/main/c/floor.c

# BENCH_JAVA: the JVM that runs the harness and every launch of the daemon (default: java on the PATH), e.g. the
# Temurin 25 the image's runtime is linked from, for the manifests' flags.
java="${BENCH_JAVA:-$(command -v java)}"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$java" -version 2>&1 | sed 's/^/# /'
manifest=deploy/base/daemonset.yaml
prev=""
for a in "$@"; do
  case "$prev" in --daemon-jar) daemon_jar="$a" ;; --manifest) manifest="$a" ;; esac
  prev="$a"
done
args=(--daemon-jar "$daemon_jar" --manifest "$manifest" --floor "$floor")
if ! grep -q 'SharedArchiveFile=' "$manifest"; then
  # The image's launcher names a class-data archive (an image path); dump one for this JVM and jar as the Dockerfile
  # does.
  archive=vgpu-example-daemon/target/vgpu-daemon.jsa
  scripts/dump-archive.sh "$java" "$daemon_jar" "$archive"
  args+=(--archive "$archive")
elif grep -q 'SharedArchiveFile=' "$manifest"; then
  # An older manifest (JDK 17 dynamic AppCDS), for before/after runs: trained as that Dockerfile did.
  archive=vgpu-example-daemon/target/vgpu-daemon.jsa
  rm -f "$archive"
  env -u JAVA_TOOL_OPTIONS "$java" -XX:+UseSerialGC -Xmx128m -XX:ArchiveClassesAtExit="$archive" \
    -jar "$daemon_jar" demo >/dev/null 2>&1
  args+=(--archive "$archive")
fi
"$java" -cp "$bench_jar" dev.vgpu.bench.e2e.DaemonBench "${args[@]}" "$@"

if [ "${BENCH_JMH:-1}" != 0 ]; then
  # shellcheck disable=SC2086
  "$java" -jar "$bench_jar" ${JMH_ARGS:--f 1 -wi 3 -i 5 -w 1s -r 1s} 2>&1 | sed -n '/^Benchmark /,$p'
fi
