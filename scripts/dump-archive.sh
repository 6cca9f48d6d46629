#!/bin/sh
# Dumps the daemon's class-data archive outside the image, as the Dockerfile's dump step does inside it: a static
# archive (-Xshare:dump) of the classes in deploy/image/vgpu-daemon.classlist, for JAR on JAVA.
#
#   scripts/dump-archive.sh JAVA JAR ARCHIVE
#
# JAVA is a plain JDK 25, without the image's flags linked in, so they are given on its command line: those of
# deploy/image/jvm.flags, the one place they are written (compact object headers above all: an archive is refused by
# a JVM whose flags differ in what it checks). Launch with `-XX:SharedArchiveFile=ARCHIVE -jar JAR` and those flags.
# The archive is valid only with the same JVM build (a jlink'ed runtime counts as its own) and the same jar at the same
# path; a mismatched or missing archive is ignored by the JVM (it runs without it), never fatal. Used by
# scripts/bench.sh and scripts/cli-start-cost.py.
set -eu
if [ "$#" -ne 3 ]; then
  echo "usage: $0 JAVA JAR ARCHIVE" >&2
  exit 2
fi
java="$1" jar="$2" archive="$3"
root="$(dirname "$0")/.."
flags=""
while read -r flag; do
  case "$flag" in "" | "#"*) ;; *) flags="$flags $flag" ;; esac
done <"$root/deploy/image/jvm.flags"
rm -f "$archive"
# shellcheck disable=SC2086
env -u JAVA_TOOL_OPTIONS "$java" $flags -Xshare:dump \
  -XX:SharedClassListFile="$root/deploy/image/vgpu-daemon.classlist" -XX:SharedArchiveFile="$archive" -cp "$jar" \
  >"$archive.log" 2>&1 || { cat "$archive.log" >&2; exit 1; }
test -s "$archive" || { cat "$archive.log" >&2; echo "no archive written to $archive" >&2; exit 1; }
rm -f "$archive.log"
