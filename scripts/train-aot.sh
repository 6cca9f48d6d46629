#!/bin/sh
# Trains the daemon's AOT cache (JDK 25, JEP 483/514: one-step -XX:AOTCacheOutput) with the JVM flags of a DaemonSet
# manifest: runs `demo` (the whole main job: scan, serve, register, ListAndWatch, Allocate, rescan, against an
# in-process stand-in kubelet on the bundled sample host) and writes CACHE at its exit.
#
#   scripts/train-aot.sh JAVA JAR CACHE MANIFEST
#
# The flags are the folded `JAVA_TOOL_OPTIONS` value of MANIFEST (deploy/base/daemonset.yaml), less its
# -XX:AOTCache=... (an image path; a run cannot read and write a cache at once): the one place the daemon's flags are
# written, so that training and production agree on what the cache checks (compact object headers above all). The
# cache is valid only with the same JVM build (a jlink'ed runtime counts as its own) and the same jar at the same
# path; a mismatched or missing cache is ignored by the JVM (it runs without it), never fatal. The Dockerfile runs
# this in the final image, with the runtime and the jar at their final paths; RuntimeImageIT runs it as well.
set -eu
if [ "$#" -ne 4 ]; then
  echo "usage: $0 JAVA JAR CACHE MANIFEST" >&2
  exit 2
fi
java="$1" jar="$2" cache="$3" manifest="$4"
# The lines of the folded value after `- name: JAVA_TOOL_OPTIONS` (comments between the two are skipped), up to
# the first line indented no deeper than `value:`.
value="$(awk '
  found == 0 && /^[ ]*- name: JAVA_TOOL_OPTIONS[ ]*$/ { found = 1; next }
  found == 1 && /^[ ]*#/ { next }
  found == 1 && /^[ ]*value: >-?[ ]*$/ { found = 2; match($0, /^ */); indent = RLENGTH; next }
  found == 1 { exit }
  found == 2 { match($0, /^ */); if (RLENGTH <= indent || $0 ~ /^[ ]*$/) exit; printf "%s ", $0 }
' "$manifest")"
flags="" named=""
for flag in $value; do
  case "$flag" in
    -XX:AOTCache=*) named="${flag#-XX:AOTCache=}" ;;
    *) flags="$flags $flag" ;;
  esac
done
if [ -z "$named" ]; then
  echo "$manifest: its JAVA_TOOL_OPTIONS names no -XX:AOTCache=FILE (read: $value)" >&2
  exit 1
fi
rm -f "$cache"
# shellcheck disable=SC2086
env -u JAVA_TOOL_OPTIONS "$java" $flags -XX:AOTCacheOutput="$cache" -jar "$jar" demo >/dev/null 2>"$cache.log" \
  || { cat "$cache.log" >&2; exit 1; }
test -s "$cache" || { cat "$cache.log" >&2; echo "no AOT cache written to $cache" >&2; exit 1; }
rm -f "$cache.log"
