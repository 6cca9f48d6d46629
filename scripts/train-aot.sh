#!/bin/sh
# Trains the daemon's AOT cache (JDK 25, JEP 483/514: one-step -XX:AOTCacheOutput) outside the image, as the
# Dockerfile's training step does inside it: runs `demo` (the whole main job: scan, serve, register, ListAndWatch,
# Allocate, rescan, against an in-process stand-in kubelet on the bundled sample host) and writes CACHE at its exit.
#
#   scripts/train-aot.sh JAVA JAR CACHE
#
# JAVA is a plain JDK 25, without the image's flags linked in, so they are given on its command line: those of
# deploy/image/jvm.flags, the one place they are written (compact object headers above all: a cache is refused by a
# JVM whose flags differ in what it checks). The cache is valid only with the same JVM build (a jlink'ed runtime counts
# as its own) and the same jar at the same path; a mismatched or missing cache is ignored by the JVM (it runs without
# it), never fatal. Used by scripts/bench.sh; RuntimeImageIT runs the Dockerfile's own step on a linked runtime.
set -eu
if [ "$#" -ne 3 ]; then
  echo "usage: $0 JAVA JAR CACHE" >&2
  exit 2
fi
java="$1" jar="$2" cache="$3"
flags=""
while read -r flag; do
  case "$flag" in "" | "#"*) ;; *) flags="$flags $flag" ;; esac
done <"$(dirname "$0")/../deploy/image/jvm.flags"
rm -f "$cache"
# shellcheck disable=SC2086
env -u JAVA_TOOL_OPTIONS "$java" $flags -XX:AOTCacheOutput="$cache" -jar "$jar" demo >/dev/null 2>"$cache.log" \
  || { cat "$cache.log" >&2; exit 1; }
test -s "$cache" || { cat "$cache.log" >&2; echo "no AOT cache written to $cache" >&2; exit 1; }
rm -f "$cache.log"
