import dev.vgpu.kubelet.standin.StandInKubelet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * Start-up of the daemon under several sets of extra JVM flags (class-data archives, AOT caches), launch by launch,
 * alternated: each round runs every case once, in reverse order every other round (docs/BUILD.md, "The image").
 *
 * <pre>
 *   java -cp vgpu-daemon.jar scripts/ArchiveStartCost.java JAVA JAR ROUNDS NAME=FLAGS...
 *   e.g. ... none= cds=-XX:SharedArchiveFile=a.jsa aot=-XX:AOTCache=c.aot
 * </pre>
 *
 * <p>Every launch has the image's flags (deploy/image/jvm.flags) and then the case's. Per case: a cold {@code discover}
 * of an empty host (process start to exit), and {@code serve --sample h200-sriov} from process start until every
 * resource of the sample has registered with a stand-in kubelet and received its first list, with the process's RSS
 * at that moment. Prints each round's figures and load average, then min / median per case and, for every case but
 * the first, the median of its per-round ratios to the first (paired figures: the load of a shared machine moves
 * both sides of a round together). A first, unmeasured {@code serve} learns the sample's resources.
 */
public class ArchiveStartCost {

    private static final Duration WAIT = Duration.ofSeconds(120);

    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            throw new IllegalArgumentException("usage: JAVA JAR ROUNDS NAME=FLAGS...");
        }
        String java = args[0];
        Path jar = Path.of(args[1]).toAbsolutePath();
        int rounds = Integer.parseInt(args[2]);
        List<String> imageFlags = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("deploy/image/jvm.flags"))) {
            if (!line.isBlank() && !line.startsWith("#")) {
                imageFlags.add(line.strip());
            }
        }
        Map<String, List<String>> cases = new LinkedHashMap<>();
        for (int i = 3; i < args.length; i++) {
            String[] nameAndFlags = args[i].split("=", 2);
            cases.put(nameAndFlags[0], nameAndFlags[1].isEmpty() ? List.of() : List.of(nameAndFlags[1].split(" ")));
        }
        Path work = Files.createTempDirectory("vgpu-archive-start-");
        Path empty = work.resolve("empty");
        Files.createDirectories(empty.resolve("sys/bus/pci/devices"));
        Map<String, List<Long>> discover = new LinkedHashMap<>();
        Map<String, List<Long>> serve = new LinkedHashMap<>();
        Map<String, List<Long>> rss = new LinkedHashMap<>();
        List<String> names = new ArrayList<>(cases.keySet());
        Set<String> resources = null;
        for (int round = -1; round < rounds; round++) {
            List<String> order = new ArrayList<>(names);
            if (round % 2 != 0) {
                Collections.reverse(order);
            }
            for (String name : order) {
                List<String> launch = new ArrayList<>(List.of(java));
                launch.addAll(imageFlags);
                launch.addAll(cases.get(name));
                launch.addAll(List.of("-jar", jar.toString()));
                if (round >= 0) {
                    List<String> command = new ArrayList<>(launch);
                    command.addAll(List.of("discover", "--host-root=" + empty, "--no-nvml"));
                    long t0 = System.nanoTime();
                    Process process = start(command, work.resolve("discover.log"));
                    if (process.waitFor() != 0) {
                        throw new IllegalStateException(name + ": discover failed, " + work.resolve("discover.log"));
                    }
                    discover.computeIfAbsent(name, k -> new ArrayList<>()).add(System.nanoTime() - t0);
                }
                Path plugins = Files.createTempDirectory(work, "plugins-");
                try (StandInKubelet kubelet = StandInKubelet.start(plugins)) {
                    List<String> command = new ArrayList<>(launch);
                    command.addAll(List.of("serve", "--sample=h200-sriov", "--no-nvml",
                            "--device-plugin-dir=" + plugins, "--metrics-address="));
                    long t0 = System.nanoTime();
                    Process process = start(command, work.resolve("serve-" + name + ".log"));
                    try {
                        if (resources == null) {
                            Thread.sleep(15_000);
                            resources = new TreeSet<>(kubelet.resources().keySet());
                            if (resources.isEmpty()) {
                                throw new IllegalStateException("nothing registered: " + work.resolve("serve-" + name
                                        + ".log"));
                            }
                            System.out.println("# the sample's resources: " + resources);
                        } else {
                            Set<String> wanted = resources;
                            kubelet.await(WAIT, k -> wanted.stream().allMatch(r -> k.listUpdates(r) >= 1));
                            long elapsed = System.nanoTime() - t0;
                            serve.computeIfAbsent(name, k -> new ArrayList<>()).add(elapsed);
                            rss.computeIfAbsent(name, k -> new ArrayList<>()).add(rssKib(process.pid()));
                        }
                    } finally {
                        process.destroy();
                        if (!process.waitFor(20, TimeUnit.SECONDS)) {
                            process.destroyForcibly().waitFor();
                        }
                    }
                }
            }
            if (round >= 0) {
                StringBuilder line = new StringBuilder();
                for (String name : names) {
                    line.append(String.format(Locale.ROOT, " %s %.0f/%.0f ms", name,
                            discover.get(name).get(round) / 1e6, serve.get(name).get(round) / 1e6));
                }
                System.out.printf("# round %d (discover/serve):%s; load average %s%n", round, line,
                        Files.readString(Path.of("/proc/loadavg")).strip());
            }
        }
        System.out.println("| case | cold `discover`, empty host: min / median (ms) | `serve` start → registered +"
                + " first list: min / median (ms) | RSS then: min / median (MiB) |");
        System.out.println("|---|---|---|---|");
        for (String name : names) {
            System.out.printf(Locale.ROOT, "| %s | %s | %s | %s |%n", name, stats(discover.get(name), 1e6),
                    stats(serve.get(name), 1e6), stats(rss.get(name), 1024));
        }
        String first = names.get(0);
        for (String name : names.subList(1, names.size())) {
            System.out.printf(Locale.ROOT, "%s / %s, median of the per-round ratios: discover %.2f, serve %.2f%n",
                    name, first, medianRatio(discover.get(name), discover.get(first)),
                    medianRatio(serve.get(name), serve.get(first)));
        }
    }

    private static double medianRatio(List<Long> values, List<Long> baseline) {
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            ratios.add((double) values.get(i) / baseline.get(i));
        }
        Collections.sort(ratios);
        return ratios.get(ratios.size() / 2);
    }

    private static Process start(List<String> command, Path log) throws java.io.IOException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().remove("JAVA_TOOL_OPTIONS");
        builder.environment().put("MALLOC_ARENA_MAX", "2");
        return builder.start();
    }

    private static long rssKib(long pid) throws java.io.IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }

    private static String stats(List<Long> values, double unit) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return String.format(Locale.ROOT, "%.1f / %.1f", sorted.get(0) / unit, sorted.get(sorted.size() / 2) / unit);
    }
}
