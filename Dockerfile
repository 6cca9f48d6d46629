# The node daemon on a jlink'ed Java runtime.
#   mvn -B -q -DskipTests package        # builds vgpu-example-daemon/target/vgpu-daemon.jar
#   docker build -t vgpu-device-plugin:0.1.0-SNAPSHOT .
# scripts/build-image.sh builds this file with podman where no image registry is reachable: it makes both bases from
# local files (a Debian base with mmdebstrap, the JDK stage from the Temurin 25 under /usr/lib/jvm) and passes them as
# JDK_IMAGE and RUNTIME_IMAGE (docs/BUILD.md, "The image").
#
# Two stages: a JDK 25 links a runtime with only the modules the daemon needs and the daemon's JVM flags
# (deploy/image/jvm.flags, linked in with --add-options, so every JVM of the image runs with them); the image gets that
# runtime, the jar, two launchers and a class-data archive dumped in it. Resource names of passthrough GPUs come from
# pci.ids and users write them into the KubeVirt CR, so the image ships no distribution pci.ids: the daemon uses the
# pinned NVIDIA section bundled in its jar (its version is in `--version` and in the start line). `--pci-ids FILE`
# overrides.
# The final stage needs /bin/sh (the launchers are two-line scripts) and the C library; nothing else.
ARG JDK_IMAGE=eclipse-temurin:25-jdk-noble
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${JDK_IMAGE} AS runtime
# Exactly what `jdeps --print-module-deps --ignore-missing-deps --multi-release 25` prints for the shaded jar;
# JlinkModulesIT (mvn verify) fails when the jar's needs drift from this line, and so does this stage.
ARG JLINK_MODULES=java.base,java.desktop,java.naming,java.net.http,java.sql,jdk.jfr,jdk.unsupported
COPY vgpu-example-daemon/target/vgpu-daemon.jar /build/vgpu-daemon.jar
COPY deploy/image/jvm.flags /build/jvm.flags
# No default class-data archive (--generate-cds-archive): the daemon's archive (below) holds the JDK's classes too.
# The flags file is read with shell built-ins only (the local JDK stage has no coreutils). Java debug attributes are
# stripped; native symbols are not (that needs objcopy, and the linked runtime came out 352 bytes larger without it).
# RuntimeImageIT links a runtime with these options and runs the image's archive dump and launch on it.
RUN deps="$(jdeps --print-module-deps --ignore-missing-deps --multi-release 25 /build/vgpu-daemon.jar)" \
 && if [ "$deps" != "$JLINK_MODULES" ]; then \
      echo "jdeps says the jar needs $deps but JLINK_MODULES is $JLINK_MODULES" >&2; exit 1; \
    fi \
 && flags="" \
 && while read -r flag; do case "$flag" in ""|"#"*) ;; *) flags="$flags $flag" ;; esac; done </build/jvm.flags \
 && jlink --add-modules "$JLINK_MODULES" --strip-java-debug-attributes --no-man-pages --no-header-files \
      --compress=zip-6 --add-options="${flags# }" --output /opt/java

FROM ${RUNTIME_IMAGE}
ARG VERSION=0.1.0-SNAPSHOT
ARG REVISION=unknown
ARG RUNTIME_IMAGE
LABEL org.opencontainers.image.title="vgpu-device-plugin" \
      org.opencontainers.image.description="Device plugin and DRA driver for NVIDIA GPUs and vGPUs on KubeVirt" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="https://github.com/vgpu-dev/vgpu" \
      org.opencontainers.image.url="https://github.com/vgpu-dev/vgpu" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${RUNTIME_IMAGE}"
COPY --from=runtime /opt/java /opt/java
COPY vgpu-example-daemon/target/vgpu-daemon.jar /opt/vgpu/vgpu-daemon.jar
COPY deploy/image/vgpu-daemon /opt/vgpu/bin/vgpu-daemon
COPY deploy/image/nvidia-kubevirt-gpu-device-plugin /usr/local/bin/nvidia-kubevirt-gpu-device-plugin
# The class-data archive the launcher names (-XX:SharedArchiveFile=/opt/vgpu/vgpu-daemon.jsa), dumped here, in the
# final image, because it is valid only for this runtime and this jar at this path, and checked against the flags
# linked into the runtime, which this run has too. It holds the classes of deploy/image/vgpu-daemon.classlist (what
# `demo` loads: scan, serve, register, ListAndWatch, Allocate, rescan; scripts/record-classlist.sh records it). A
# static dump of a fixed list writes the same bytes every time, so two builds give one image digest; JDK 25's AOT
# cache, trained by a run, does not (docs/BUILD.md, "The image"). The list is copied, not bound in for this step
# only: a build cache keys a step on what it copies, not on what it mounts, and would keep an archive of an old list.
COPY deploy/image/vgpu-daemon.classlist /opt/vgpu/vgpu-daemon.classlist
RUN ["/opt/java/bin/java", "-Xshare:dump", "-XX:SharedClassListFile=/opt/vgpu/vgpu-daemon.classlist", \
     "-XX:SharedArchiveFile=/opt/vgpu/vgpu-daemon.jsa", "-cp", "/opt/vgpu/vgpu-daemon.jar"]
# Two malloc arenas instead of one per core and thread: the daemon's native allocations are few. Here rather than in
# the manifests, so that every install route gets it.
ENV PATH=/usr/local/bin:/usr/bin:/bin MALLOC_ARENA_MAX=2
# Root, and the manifests say so (runAsUser: 0): the kubelet's device-plugin directory and its sockets belong to root
# on the host, and the plugin creates its sockets there and connects to kubelet.sock. The manifests drop every
# capability, so root here is the owner of those files and nothing more (docs/BUILD.md, "The image").
USER 0:0
ENTRYPOINT ["/opt/vgpu/bin/vgpu-daemon"]
CMD []
