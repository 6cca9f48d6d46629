# The node daemon on a jlink'ed Java runtime.
#   mvn -B -q -DskipTests package                # builds vgpu-example-daemon/target/vgpu-daemon.jar
#   docker build -t vgpu-device-plugin:0.1.0 .
# Two stages: a JDK 25 makes a runtime with only the modules the daemon needs; the image gets that runtime, the jar
# and an AOT cache trained in it (docs/BUILD.md, "The daemon's JVM"). Passthrough resource names come from pci.ids
# and users write them into the KubeVirt CR, so the image ships no distribution pci.ids: the daemon falls back to
# the pinned NVIDIA section bundled in its jar (its version is in `--version` and in the start line), the same on
# every rebuild. `--pci-ids FILE` still overrides it.
ARG JDK_IMAGE=eclipse-temurin:25-jdk-noble
ARG RUNTIME_IMAGE=ubuntu:22.04

FROM ${JDK_IMAGE} AS runtime
# Exactly what `jdeps --print-module-deps --ignore-missing-deps --multi-release 25` prints for the shaded jar;
# JlinkModulesIT (mvn verify) fails when the jar's needs drift from this line, and so does this stage.
ARG JLINK_MODULES=java.base,java.desktop,java.naming,java.net.http,java.sql,jdk.jfr,jdk.unsupported
COPY vgpu-example-daemon/target/vgpu-daemon.jar /build/vgpu-daemon.jar
# No default class-data archive (--generate-cds-archive): the daemon's AOT cache (below) holds the JDK's classes too.
# RuntimeImageIT links a runtime with these options and runs the image's training and launch on it.
RUN deps="$(jdeps --print-module-deps --ignore-missing-deps --multi-release 25 /build/vgpu-daemon.jar)" \
 && if [ "$deps" != "$JLINK_MODULES" ]; then \
      echo "jdeps says the jar needs $deps but JLINK_MODULES is $JLINK_MODULES" >&2; exit 1; \
    fi \
 && jlink --add-modules "$JLINK_MODULES" --strip-debug --no-man-pages --no-header-files --compress=zip-6 \
      --output /opt/java

FROM ${RUNTIME_IMAGE}
ARG VERSION=0.1.0-SNAPSHOT
LABEL org.opencontainers.image.title="vgpu-device-plugin" \
      org.opencontainers.image.description="Kubernetes device plugin for NVIDIA GPUs and vGPUs on KubeVirt" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.base.name="${RUNTIME_IMAGE}"
# No system pci.ids may shadow the pinned one in the jar (see above).
RUN rm -f /usr/share/misc/pci.ids /usr/share/hwdata/pci.ids /usr/pci.ids
COPY --from=runtime /opt/java /opt/java
COPY vgpu-example-daemon/target/vgpu-daemon.jar /opt/vgpu/vgpu-daemon.jar
# The AOT cache the manifests name (-XX:AOTCache=/opt/vgpu/vgpu-daemon.aot): trained here, in the final image,
# because it is valid only for this runtime and this jar at this path, with the flags of the manifest it reads
# (JAVA_TOOL_OPTIONS of deploy/base/daemonset.yaml, the one place they are written). The training run is `demo`
# (scan, serve, register, ListAndWatch, Allocate, rescan against an in-process stand-in kubelet; no GPU, no kubelet).
COPY scripts/train-aot.sh /tmp/train-aot.sh
COPY deploy/base/daemonset.yaml /tmp/daemonset.yaml
RUN /tmp/train-aot.sh /opt/java/bin/java /opt/vgpu/vgpu-daemon.jar /opt/vgpu/vgpu-daemon.aot /tmp/daemonset.yaml \
 && rm /tmp/train-aot.sh /tmp/daemonset.yaml
# The plugin reads sysfs and serves sockets in the kubelet's directory, owned by root on the host.
USER 0:0
ENTRYPOINT ["/opt/java/bin/java", "-jar", "/opt/vgpu/vgpu-daemon.jar"]
CMD ["serve"]
