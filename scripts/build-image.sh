#!/usr/bin/env bash
# Builds the daemon's image from the repository's Dockerfile with podman, on a machine that reaches no image registry:
# the runtime base is made from Debian packages (mmdebstrap), the JDK stage from a local JDK 25 (docs/BUILD.md,
# "The image"). Run after `mvn -B -q -DskipTests package`.
#
#   scripts/build-image.sh [--no-cache]
#
# Tags localhost/vgpu-device-plugin:<project version>, writes target/vgpu-device-plugin-<project version>.oci.tar
# (ready for `skopeo copy oci-archive:FILE docker://REGISTRY/vgpu-device-plugin:TAG`) and prints the image reference as
# its last line. File and image times are the last commit's (SOURCE_DATE_EPOCH unless set), and the class-data
# archive is dumped from a committed class list, so that two builds of one commit give one image digest (docs/BUILD.md,
# "The image"; .ci/check-image-reproducible builds twice and compares).
#
# Environment: VGPU_JDK (the JDK 25 for the JDK stage; default /usr/lib/jvm/temurin-25-jdk-amd64), SOURCE_DATE_EPOCH,
# CONTAINERS_CONF (else target/image/containers.conf is written: runc, ulimits within this machine's hard limits).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "build-image.sh: $*" >&2
  exit 1
}

no_cache=()
case "${1:-}" in
  "") ;;
  --no-cache) no_cache=(--no-cache) ;;
  *) fail "unknown argument '$1' (usage: scripts/build-image.sh [--no-cache])" ;;
esac

version="$(sed -n '/<artifactId>vgpu-parent<\/artifactId>/{n;s/.*<version>\(.*\)<\/version>.*/\1/p;q}' pom.xml)"
[ -n "$version" ] || fail "cannot read the project version from pom.xml"
jar=vgpu-example-daemon/target/vgpu-daemon.jar
[ -s "$jar" ] || fail "$jar is missing: run mvn -B -q -DskipTests package first"
for tool in podman mmdebstrap tar; do
  command -v "$tool" >/dev/null 2>&1 \
    || fail "$tool is missing: apt-get install -y podman buildah skopeo mmdebstrap runc uidmap (docs/BUILD.md)"
done
jdk="${VGPU_JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}"
[ -x "$jdk/bin/jlink" ] || fail "no JDK 25 at $jdk (set VGPU_JDK to a JDK 25 directory)"
"$jdk/bin/java" -version 2>&1 | grep -q 'version "25' || fail "$jdk is not a JDK 25 (the image's runtime comes from it)"
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
  SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null)" || fail "not a git checkout: set SOURCE_DATE_EPOCH"
fi
export SOURCE_DATE_EPOCH
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"

work="$PWD/target/image"
mkdir -p "$work"
# crun (podman's default) fails on hosts with hybrid cgroups; runc works when the default ulimits stay within the
# hard limits of this machine.
if [ -z "${CONTAINERS_CONF:-}" ]; then
  nofile="$(ulimit -Hn)"
  cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=4096:4096"]
[engine]
runtime = "runc"
EOF
  export CONTAINERS_CONF="$work/containers.conf"
fi

image="localhost/vgpu-device-plugin:$version"
base_image="localhost/vgpu-build-base:$version"
jdk_image="localhost/vgpu-build-jdk:25"
archive="target/vgpu-device-plugin-$version.oci.tar"
# What these tags named before this build: once the build has moved a tag, its old image is removed (below) rather
# than left behind untagged.
previous=()
for tag in "$image" "$base_image" "$jdk_image"; do
  previous+=("$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)")
done
# The Dockerfile's JDK stage stays behind untagged, as podman's cache for the next build; this script's are those with
# the JDK image's PATH. Once a build has made a new one, the older ones are removed (below).
jdk_stages() {
  local id
  for id in $(podman images --quiet --no-trunc --filter dangling=true); do
    if podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$id" 2>/dev/null \
      | grep -qx 'PATH=/opt/jdk/bin:/usr/bin:/bin'; then
      echo "$id"
    fi
  done | sort
}
stages_before="$(jdk_stages)"

# 1. The runtime base: the C library, dash (the launchers are two-line scripts) and base-files, unpacked from
# Debian's packages without running any of their scripts on this host; root's passwd entry; no docs. The package
# lists are this host's (the versions its apt knows), so a build is repeatable until `apt-get update` moves them.
rootfs="$work/rootfs"
rm -rf "$rootfs"
lists='mkdir -p "$1/var/lib/apt/lists" && cp /var/lib/apt/lists/*InRelease /var/lib/apt/lists/*_Packages*'
lists="$lists"' "$1/var/lib/apt/lists/"'
users='printf "root:x:0:0:root:/root:/bin/sh\n" >"$1/etc/passwd" && printf "root:x:0:\n" >"$1/etc/group"'
mmdebstrap --quiet --variant=extract --mode=root --format=directory --skip=update --include=libc6,dash,base-files \
  --setup-hook="$lists" --customize-hook="$users" bookworm "$rootfs" /etc/apt/sources.list.d/debian.sources \
  >"$work/mmdebstrap.log" 2>&1 || { cat "$work/mmdebstrap.log" >&2; fail "mmdebstrap failed (above)"; }
(cd "$rootfs" && rm -rf usr/share/doc usr/share/man usr/share/info usr/share/locale usr/share/lintian var/lib/apt \
  var/cache/apt var/lib/dpkg var/log/* && chmod 1777 tmp)
[ -z "$(find "$rootfs" -name pci.ids)" ] || fail "the base holds a pci.ids; the image must not"
# A tar with fixed order, owners and times, so the same packages give the same layer.
deterministic_tar=(--sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH"
  --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime)
tar "${deterministic_tar[@]}" -C "$rootfs" -cf "$work/base.tar" .
printf 'FROM scratch\nADD base.tar /\n' >"$work/Containerfile.base"
podman build --quiet --pull=never --network=none --timestamp "$SOURCE_DATE_EPOCH" "${no_cache[@]}" \
  -f "$work/Containerfile.base" -t "$base_image" "$work" >/dev/null

# 2. The JDK stage's image: that base with the JDK under /opt/jdk (only jdeps and jlink run in it). Links are
# followed: Debian's Temurin package links lib/security/cacerts to /etc/ssl/certs/java/cacerts, which jlink copies.
# Built like the base (not `podman import`, which stamps the time of the import), so that the same JDK gives the same
# image and podman's layer cache keeps the runtime stage from one build to the next.
cp "$work/base.tar" "$work/jdk.tar"
tar "${deterministic_tar[@]}" --dereference -rf "$work/jdk.tar" --transform "s,^${jdk#/},opt/jdk," -C / "${jdk#/}"
printf 'FROM scratch\nADD jdk.tar /\nENV PATH=/opt/jdk/bin:/usr/bin:/bin\n' >"$work/Containerfile.jdk"
podman build --quiet --pull=never --network=none --timestamp "$SOURCE_DATE_EPOCH" "${no_cache[@]}" \
  -f "$work/Containerfile.jdk" -t "$jdk_image" "$work" >/dev/null
rm -f "$work/jdk.tar"

# 3. The image: the repository's Dockerfile on those two bases.
podman build --pull=never --network=none --timestamp "$SOURCE_DATE_EPOCH" "${no_cache[@]}" \
  --build-arg "JDK_IMAGE=$jdk_image" --build-arg "RUNTIME_IMAGE=$base_image" \
  --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
  -t "$image" . >"$work/build.log" 2>&1 || { tail -n 60 "$work/build.log" >&2; fail "podman build failed (above)"; }

# The dump warns about each line of the class list that names a class or lambda the jar or runtime lacks: not an
# error (those classes load from the jar), but the list wants recording again.
stale="$(grep -c -e 'Preload Warning: Cannot find' -e 'classlist is probably out-of-date' "$work/build.log" || true)"
if [ "$stale" -gt 0 ]; then
  echo "build-image.sh: $stale lines of deploy/image/vgpu-daemon.classlist name what the jar or runtime lacks" \
    "($work/build.log): run scripts/record-classlist.sh" >&2
fi

# Old JDK stages, when this build made a new one (a build from the cache reuses the old one, which then stays).
if [ -n "$(comm -13 <(printf '%s\n' "$stages_before") <(jdk_stages))" ]; then
  for id in $stages_before; do
    podman rmi "$id" >/dev/null 2>&1 || true
  done
fi
# Old images whose tag this build took; one still used (by a container, or as another image's parent) stays.
for id in "${previous[@]}"; do
  if [ -n "$id" ] && [ -z "$(podman image inspect --format '{{join .RepoTags ""}}' "$id" 2>/dev/null)" ]; then
    podman rmi "$id" >/dev/null 2>&1 || true
  fi
done

rm -f "$archive"
podman save --quiet --format oci-archive -o "$archive" "$image"
# podman stamps each entry of the archive with the time of the save: the same entries again, with the commit's time
# and in name order, so that two builds give the same file and not only the same image.
rm -rf "$work/oci" && mkdir "$work/oci"
tar -xf "$archive" -C "$work/oci"
tar "${deterministic_tar[@]}" -C "$work/oci" -cf "$archive" oci-layout index.json blobs
rm -rf "$work/oci"
echo "build-image.sh: $(podman image inspect --format '{{.Digest}}' "$image") $archive" >&2
echo "$image"
