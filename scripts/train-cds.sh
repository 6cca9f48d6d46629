#!/bin/sh
# Trains the daemon's class-data archive (JDK 17 dynamic AppCDS): runs `demo` (the whole main job: scan, serve,
# register, ListAndWatch, Allocate, rescan, against an in-process stand-in kubelet on the bundled sample host) and
# archives every class it loaded at exit.
#
#   scripts/train-cds.sh JAVA JAR ARCHIVE
#
# The archive is valid only with the same JVM build (a jlink'ed runtime counts as its own), the same jar at the same
# path (size and time are checked) and the same compressed-oops mode; -Xmx128m keeps compressed oops on as the
# manifests' heap does. A mismatched archive is ignored by the JVM (it runs without it), never fatal. The Dockerfile
# runs this in the final image, with the runtime and the jar at their final paths.
set -eu
java="$1" jar="$2" archive="$3"
rm -f "$archive"
env -u JAVA_TOOL_OPTIONS "$java" -XX:+UseSerialGC -Xmx128m -XX:ArchiveClassesAtExit="$archive" \
  -jar "$jar" demo >/dev/null 2>"$archive.log" || { cat "$archive.log" >&2; exit 1; }
test -s "$archive"
rm -f "$archive.log"
