#!/usr/bin/env bash
# Probes the REAL libnvidia-ml.so.1 through the vgpu-nvml binding (dev.vgpu.nvml.NvmlProbe) and prints what
# NVML answers: init, device count, PCI bus ids, supported vGPU types with names, XID event registration,
# and a short run of the XID watcher. Exits 0 when the library or the driver is absent (and says so).
#
# Usage: vgpu-nvml/scripts/nvml-probe.sh [LIBRARY_FILE]
#   LIBRARY_FILE  a libnvidia-ml.so.1 to load instead of the dynamic linker's (LD_LIBRARY_PATH applies)
# Env:  PROBE_MODULE_PATH=1 runs it on the module path instead of the class path.
#
# Needs only a Java 17+ runtime and what `mvn -B -pl vgpu-nvml package` leaves in vgpu-nvml/target:
# the module jar and target/probe-lib/ (jna-jpms, vgpu-core, slf4j-api). No Maven, no network.
set -euo pipefail

module_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jar="$(ls "$module_dir"/target/vgpu-nvml-*.jar 2>/dev/null | grep -v -e '-sources' -e '-tests' | head -n 1 || true)"
lib_dir="$module_dir/target/probe-lib"
if [[ -z "$jar" || ! -d "$lib_dir" ]]; then
  echo "nvml-probe: build first: mvn -B -pl vgpu-nvml package -DskipTests" >&2
  exit 2
fi
if ! command -v java >/dev/null 2>&1; then
  echo "nvml-probe: no java on PATH (a Java 17+ runtime is needed)" >&2
  exit 2
fi

echo "host: $(uname -srm)"
if [[ -r /proc/driver/nvidia/version ]]; then
  echo "driver: $(head -n 1 /proc/driver/nvidia/version)"
fi
echo "device nodes: $(ls /dev/nvidiactl /dev/nvidia[0-9]* 2>/dev/null | tr '\n' ' ' || true)"

if [[ "${PROBE_MODULE_PATH:-0}" == "1" ]]; then
  exec java -p "$jar:$lib_dir" -m dev.vgpu.nvml/dev.vgpu.nvml.NvmlProbe "$@"
fi
exec java -cp "$jar:$lib_dir/*" dev.vgpu.nvml.NvmlProbe "$@"
