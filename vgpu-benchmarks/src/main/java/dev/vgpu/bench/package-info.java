/** JMH benchmarks; one sub-package per measured module. Build with {@code mvn -pl vgpu-benchmarks -am package -DskipTests}. */
package dev.vgpu.bench;
