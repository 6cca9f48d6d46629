package dev.vgpu.daemon;

import com.marcnuri.helm.Helm;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code helm package} of the chart, run by the build at {@code package} (exec-maven-plugin, on the test class path:
 * helm-java is a test dependency, never in the daemon jar): {@code HelmPackage CHART_DIR DESTINATION} writes
 * {@code DESTINATION/<name>-<version>.tgz} and prints its path.
 */
final class HelmPackage {

    private HelmPackage() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: HelmPackage CHART_DIR DESTINATION");
            System.exit(2);
        }
        System.out.println("helm package: " + packageChart(Path.of(args[0]), Path.of(args[1])));
    }

    /** Packages the chart into {@code destination}, which is created; returns the archive. */
    static Path packageChart(Path chart, Path destination) throws IOException {
        Files.createDirectories(destination);
        new Helm(chart).packageIt().withDestination(destination).call();
        try (var archives = Files.list(destination)) {
            return archives.filter(p -> p.getFileName().toString().endsWith(".tgz")).findFirst()
                    .orElseThrow(() -> new IOException("helm package wrote no .tgz into " + destination));
        }
    }
}
