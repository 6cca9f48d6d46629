# Build the jar first: mvn -B -q -DskipTests package
FROM eclipse-temurin:17-jre
RUN apt-get update \
 && apt-get install -y --no-install-recommends pci.ids \
 && rm -rf /var/lib/apt/lists/*
COPY vgpu-example-daemon/target/vgpu-daemon.jar /opt/vgpu/vgpu-daemon.jar
# The plugin reads sysfs and serves sockets in the kubelet's directory, owned by root on the host.
USER 0:0
ENTRYPOINT ["java", "-jar", "/opt/vgpu/vgpu-daemon.jar"]
CMD ["serve"]
