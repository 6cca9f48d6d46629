#!/bin/sh
# Records the class list the image's class-data archive is dumped from, deploy/image/vgpu-daemon.classlist
# (docs/BUILD.md, "The image": why a committed list and not a training run in the image build).
#
#   scripts/record-classlist.sh [JAVA [JAR [RUNS]]]
#
# Runs `demo` (the whole main job: scan, serve, register, ListAndWatch, Allocate, rescan, against an in-process
# stand-in kubelet on the bundled sample host) RUNS times (3) on JAVA (the Temurin 25 under /usr/lib/jvm) with the
# image's flags (deploy/image/jvm.flags) and modules and -XX:DumpLoadedClassList, and writes the union of what the runs loaded in a
# fixed order: class names sorted, then the lambda-form and lambda-proxy lines sorted. Which classes a run loads
# depends on its threads' timing (a contended counter, Netty's sampled leak records, which call wins a race), so one
# run's list differs from the next; the union of a few, committed, is one input for every build. The JVM's constant
# pool lines (@cp) are left out: they name constant pool indexes, which any edit of a class moves.
#
# Run it after changes that load other classes at start (ImageIT fails when too few of serve's classes come from the
# archive, naming this script), with the jar built by `mvn -B -q -DskipTests package`, then commit the list.
set -eu
cd "$(dirname "$0")/.."
java="${1:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}"
jar="${2:-vgpu-example-daemon/target/vgpu-daemon.jar}"
runs="${3:-3}"
out=deploy/image/vgpu-daemon.classlist
[ -s "$jar" ] || { echo "record-classlist.sh: $jar is missing: run mvn -B -q -DskipTests package first" >&2; exit 1; }
"$java" -version 2>&1 | grep -q 'version "25' || { echo "record-classlist.sh: $java is not a Java 25" >&2; exit 1; }
# The image's runtime links only the Dockerfile's JLINK_MODULES: limited to them, the runs load no class the image
# lacks (with the whole JDK, Java's locale data would come from jdk.localedata).
modules="$(sed -n 's/^ARG JLINK_MODULES=//p' Dockerfile)"
[ -n "$modules" ] || { echo "record-classlist.sh: no ARG JLINK_MODULES in the Dockerfile" >&2; exit 1; }
flags="--limit-modules $modules"
while read -r flag; do
  case "$flag" in "" | "#"*) ;; *) flags="$flags $flag" ;; esac
done <deploy/image/jvm.flags
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
i=1
while [ "$i" -le "$runs" ]; do
  # shellcheck disable=SC2086
  env -u JAVA_TOOL_OPTIONS "$java" $flags -XX:DumpLoadedClassList="$work/run-$i.classlist" -jar "$jar" demo \
    >"$work/run-$i.log" 2>&1 || { cat "$work/run-$i.log" >&2; exit 1; }
  i=$((i + 1))
done
{
  version="$("$java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.runtime.version = //p')"
  echo "# The classes of the image's class-data archive (/opt/vgpu/vgpu-daemon.jsa, which the Dockerfile dumps with"
  echo "# -Xshare:dump): what \`demo\` loaded in $runs runs on Java $version, their union in a fixed order."
  echo "# Written by scripts/record-classlist.sh; do not edit. The dump skips, with a warning, a line naming a class"
  echo "# or lambda that no longer exists."
  cat "$work"/run-*.classlist | grep -v '^[#@]' | sed 's/ id: .*//' | LC_ALL=C sort -u
  cat "$work"/run-*.classlist | grep '^@lambda-form-invoker ' | LC_ALL=C sort -u
  cat "$work"/run-*.classlist | grep '^@lambda-proxy ' | LC_ALL=C sort -u
} >"$work/classlist"
mv "$work/classlist" "$out"
echo "record-classlist.sh: $(grep -vc '^[#@]' "$out") classes, $(grep -c '^@' "$out") lambda lines in $out"
