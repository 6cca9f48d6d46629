#!/usr/bin/env bash
# What a YAML parser adds to the daemon's start: parses the README's example configuration once in a fresh JVM with
# the manifest's flags (C1 only, SerialGC), for each candidate parser, beside a baseline that loads nothing. Prints
# the median and min wall time of RUNS launches, the classes loaded beyond the baseline and the jar bytes added.
# docs/BUILD.md ("Configuration file parser") holds the figures and the choice.
#
#   scripts/yaml-parser-cost.sh            # RUNS=11
#   RUNS=21 scripts/yaml-parser-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-11}
m2=${M2_REPO:-$HOME/.m2/repository}
jackson=2.21.3
engine_jar=$m2/org/snakeyaml/snakeyaml-engine/2.10/snakeyaml-engine-2.10.jar
jackson_jars=($m2/com/fasterxml/jackson/dataformat/jackson-dataformat-yaml/$jackson/jackson-dataformat-yaml-$jackson.jar
  $m2/com/fasterxml/jackson/core/jackson-databind/$jackson/jackson-databind-$jackson.jar
  $m2/com/fasterxml/jackson/core/jackson-core/$jackson/jackson-core-$jackson.jar
  $m2/com/fasterxml/jackson/core/jackson-annotations/2.21/jackson-annotations-2.21.jar
  $m2/org/yaml/snakeyaml/2.5/snakeyaml-2.5.jar)
for jar in "$engine_jar" "${jackson_jars[@]}"; do
  [ -f "$jar" ] || { echo "missing $jar (mvn dependency:get -Dartifact=...)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The README example, as the daemon would read it.
sed -n '/^<!-- config-example -->$/,/^```$/p' README.md | sed '1,2d;$d' > "$work/config.yaml"
[ -s "$work/config.yaml" ] || { echo "no example configuration in README.md" >&2; exit 1; }
cat > "$work/Baseline.java" <<'J'
public class Baseline { public static void main(String[] a) throws Exception {
  System.out.println(java.nio.file.Files.readString(java.nio.file.Path.of(a[0])).length()); } }
J
cat > "$work/Engine.java" <<'J'
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
public class Engine { public static void main(String[] a) throws Exception {
  Object doc = new Load(LoadSettings.builder().setAllowDuplicateKeys(false).build())
      .loadFromString(java.nio.file.Files.readString(java.nio.file.Path.of(a[0])));
  System.out.println(((java.util.Map<?, ?>) doc).size()); } }
J
cat > "$work/JacksonYaml.java" <<'J'
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
public class JacksonYaml { public static void main(String[] a) throws Exception {
  System.out.println(new YAMLMapper().readTree(java.nio.file.Path.of(a[0]).toFile()).size()); } }
J
cp_jackson=$(IFS=:; echo "${jackson_jars[*]}")
javac -q -d "$work" -cp "$engine_jar:$cp_jackson" "$work"/*.java 2>/dev/null || javac -d "$work" -cp "$engine_jar:$cp_jackson" "$work"/*.java
flags=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto)
measure() { # name classpath main
  local times=() t0 t1
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N); java "${flags[@]}" -cp "$2" "$3" "$work/config.yaml" >/dev/null; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  local sorted; sorted=($(printf '%s\n' "${times[@]}" | sort -n))
  local classes; classes=$(java "${flags[@]}" -Xlog:class+load -cp "$2" "$3" "$work/config.yaml" | grep -c 'class,load')
  local bytes=0; for j in ${4:-}; do bytes=$(( bytes + $(stat -c %s "$j") )); done
  printf '%-22s median %7.1f ms  min %7.1f ms  classes %5d  jar bytes %8d\n' "$1" \
    "$(echo "${sorted[$((runs / 2))]} / 1000" | bc -l)" "$(echo "${sorted[0]} / 1000" | bc -l)" "$classes" "$bytes"
}
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $runs runs each; $(java -version 2>&1 | head -1)"
measure baseline "$work" Baseline
measure snakeyaml-engine-2.10 "$work:$engine_jar" Engine "$engine_jar"
measure jackson-yaml-$jackson "$work:$cp_jackson" JacksonYaml "${jackson_jars[*]}"

# The daemon itself: `discover` on an empty host with the manifest's flags (no class-data archive), without and with
# the example file; the difference is what reading and checking a configuration adds to a start.
daemon_jar=vgpu-example-daemon/target/vgpu-daemon.jar
if [ -f "$daemon_jar" ]; then
  mkdir -p "$work/empty"
  manifest_flags=(-XX:+UseSerialGC -Xss512k -Xms16m -Xmx48m -XX:MaxMetaspaceSize=64m -XX:ReservedCodeCacheSize=16m
    -XX:TieredStopAtLevel=1)
  daemon() { # name extra-args...
    local name=$1; shift
    local times=() t0 t1
    for _ in $(seq "$runs"); do
      t0=$(date +%s%N)
      java "${manifest_flags[@]}" -jar "$daemon_jar" discover --host-root "$work/empty" --no-nvml "$@" >/dev/null 2>&1
      t1=$(date +%s%N)
      times+=($(( (t1 - t0) / 1000 )))
    done
    local sorted; sorted=($(printf '%s\n' "${times[@]}" | sort -n))
    local classes; classes=$(java "${manifest_flags[@]}" -Xlog:class+load -jar "$daemon_jar" discover \
      --host-root "$work/empty" --no-nvml "$@" 2>/dev/null | grep -c 'class,load')
    printf '%-22s median %7.1f ms  min %7.1f ms  classes %5d\n' "$name" \
      "$(echo "${sorted[$((runs / 2))]} / 1000" | bc -l)" "$(echo "${sorted[0]} / 1000" | bc -l)" "$classes"
  }
  echo "# $daemon_jar ($(stat -c %s "$daemon_jar") bytes), discover on an empty host, manifest flags"
  daemon "discover"
  daemon "discover --config" --config "$work/config.yaml"
fi
