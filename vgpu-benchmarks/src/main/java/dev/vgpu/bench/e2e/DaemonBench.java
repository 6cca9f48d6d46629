package dev.vgpu.bench.e2e;

import dev.vgpu.bench.sysfs.LargeHost;
import dev.vgpu.kubelet.standin.StandInKubelet;
import dev.vgpu.testing.SysfsTree;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * End-to-end figures of the packaged daemon, launched as the DaemonSet launches it (its {@code JAVA_TOOL_OPTIONS}
 * and {@code args}, read from the manifest; host paths pointed at a generated {@link LargeHost}), each beside a
 * baseline measured in the same run. Prints Markdown table rows. {@code scripts/bench.sh} runs it.
 *
 * <pre>
 * java -cp vgpu-benchmarks/target/benchmarks.jar dev.vgpu.bench.e2e.DaemonBench \
 *     --daemon-jar vgpu-example-daemon/target/vgpu-daemon.jar --manifest deploy/base/daemonset.yaml \
 *     --floor target/floor [--archive FILE] [--runs 3] [--soak-minutes 1] [--changes 5] [--nmt] [--work DIR]
 *     [--churn SEED]
 *     [--only cold,rescan,start,config,soak]
 * </pre>
 */
public final class DaemonBench {

    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final Pattern RESOURCE = Pattern.compile("\"resource\":\"([^\"]+)\"");
    private static final String INTERVAL = "5s";
    private static final long INTERVAL_NS = TimeUnit.SECONDS.toNanos(5);

    private final Map<String, String> options;
    private final Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    private final Path benchJar;
    private final Path daemonJar;
    private final Manifest manifest;
    private final Path floor;
    private final int runs;
    private final Path work;
    private Path large;
    private Path empty;
    private Path plan;
    private Set<String> resources;
    private int launches;

    private DaemonBench(Map<String, String> options) throws Exception {
        this.options = options;
        this.benchJar = Path.of(DaemonBench.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        this.daemonJar = Path.of(required("--daemon-jar")).toAbsolutePath();
        Manifest read = Manifest.read(Path.of(required("--manifest")));
        if (read.namesArchive()) {
            read = read.withArchive(Path.of(required("--archive")).toAbsolutePath());
        }
        this.manifest = read;
        this.floor = Path.of(required("--floor")).toAbsolutePath();
        this.runs = Integer.parseInt(options.getOrDefault("--runs", "3"));
        this.work = options.containsKey("--work") ? Path.of(options.get("--work"))
                : Files.createTempDirectory("vgpu-e2e-");
        Files.createDirectories(work);
    }

    /**
     * Runs every section.
     *
     * @param args see the class comment
     * @throws Exception on any failure (the figures are then incomplete)
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--nmt")) {
                options.put("--nmt", "true");
            } else {
                options.put(args[i], args[++i]);
            }
        }
        DaemonBench bench = new DaemonBench(options);
        try {
            bench.run();
        } finally {
            if (!options.containsKey("--work")) {
                SysfsTree.deleteRecursively(bench.work);
            }
        }
    }

    private String required(String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException("missing " + name);
        }
        return value;
    }

    private void run() throws Exception {
        System.out.printf("JAVA_TOOL_OPTIONS (from the manifest): %s%nargs (from the manifest): %s%n",
                manifest.javaToolOptionsValue(), manifest.args());
        large = work.resolve("large-host");
        empty = work.resolve("empty-host");
        Files.createDirectories(empty.resolve("sys/bus/pci/devices"));
        if (!Files.isDirectory(large)) {
            LargeHost.write(large);
        }
        plan = work.resolve("floor.plan");
        LargeHost.writeFloorPlan(large, plan);
        resources = expectedResources();
        System.out.printf("large host: %d resources served%n%n", resources.size());
        System.out.println("| what | min | median | baseline | baseline min | baseline median | ratio min / median |");
        System.out.println("|---|---|---|---|---|---|---|");
        Set<String> only = Set.of(options.getOrDefault("--only", "cold,rescan,start,config,soak").split(","));
        if (only.contains("cold")) {
            coldStart();
        }
        if (only.contains("rescan")) {
            warmRescan();
        }
        if (only.contains("start")) {
            serveStart();
        }
        if (only.contains("config")) {
            configStart();
        }
        if (only.contains("soak")) {
            soak();
        }
    }

    // ---- cold discover -------------------------------------------------------------------------------------

    private void coldStart() throws Exception {
        long[] version = new long[runs];
        long[] discoverEmpty = new long[runs];
        long[] discoverLarge = new long[runs];
        long[] cFloor = new long[runs];
        for (int i = 0; i < runs; i++) {
            version[i] = timed(javaCommand(List.of("-version")));
            discoverEmpty[i] = timed(daemonCommand(List.of("discover", "--host-root=" + empty)));
            discoverLarge[i] = timed(daemonCommand(List.of("discover", "--host-root=" + large)));
            cFloor[i] = floor(1)[0];
        }
        row("cold `discover`, empty host (ms)", discoverEmpty, "`java -version`, same flags", version, 1e6);
        long[] added = new long[runs];
        for (int i = 0; i < runs; i++) {
            added[i] = discoverLarge[i] - discoverEmpty[i];
        }
        row("cold `discover`, large − empty host (ms)", added, "C floor, first round in a fresh process", cFloor,
                1e6);
    }

    // ---- warm rescans -----------------------------------------------------------------------------------

    private void warmRescan() throws Exception {
        long[] wall = new long[runs];
        long[] wallMedian = new long[runs];
        long[] cpu = new long[runs];
        long[] processCpu = new long[runs];
        long[] alloc = new long[runs];
        long[] gcs = new long[runs];
        long[] floorWall = new long[runs];
        long[] floorCpu = new long[runs];
        for (int i = 0; i < runs; i++) {
            List<String> cmd = new ArrayList<>(List.of("-cp", benchJar.toString(), RescanCost.class.getName(),
                    large.toString(), "30", "50"));
            if (Runtime.version().feature() >= 22) {
                // On the class path, as the daemon's jar grants it in its manifest: core's native reader
                cmd.add(0, "--enable-native-access=ALL-UNNAMED");
            }
            Map<String, Long> m = keyValues(output(javaCommand(cmd), true));
            wall[i] = m.get("wall_min_ns");
            wallMedian[i] = m.get("wall_median_ns");
            cpu[i] = m.get("thread_cpu_ns");
            processCpu[i] = m.get("process_cpu_ns");
            alloc[i] = m.get("alloc_bytes");
            gcs[i] = m.get("gcs");
            long[] f = floor(100);
            floorWall[i] = f[1];
            floorCpu[i] = f[3];
        }
        row("warm rescan, min of 50 (ms)", wall, "C floor, min of 100 rounds", floorWall, 1e6);
        row("warm rescan, median of 50 (ms)", wallMedian, "C floor, min of 100 rounds", floorWall, 1e6);
        row("CPU per rescan, process (ms)", processCpu, "C floor CPU per round", floorCpu, 1e6);
        row("CPU per rescan, `vgpu-rescan` thread (ms)", cpu, "C floor CPU per round", floorCpu, 1e6);
        System.out.printf("| bytes allocated per rescan (MB) | %s | %s | | | | |%n", mb(min(alloc)), mb(median(alloc)));
        System.out.printf("| young GCs in 50 rescans | %d | %d | | | | |%n", min(gcs), median(gcs));
    }

    // ---- serve start ------------------------------------------------------------------------------------

    private void serveStart() throws Exception {
        long[] start = new long[runs];
        long[] version = new long[runs];
        for (int i = 0; i < runs; i++) {
            version[i] = timed(javaCommand(List.of("-version")));
            Path dir = Files.createTempDirectory(work, "plugins-");
            try (StandInKubelet kubelet = StandInKubelet.start(dir)) {
                long t0 = System.nanoTime();
                Process daemon = start(serveCommand(dir, freePort()), Map.of(), List.of());
                try {
                    kubelet.await(WAIT, k -> resources.stream().allMatch(r -> k.listUpdates(r) >= 1));
                    start[i] = System.nanoTime() - t0;
                } finally {
                    stop(daemon);
                }
            }
        }
        row("`serve` start → " + resources.size() + " resources registered + first list (ms)", start,
                "`java -version`, same flags", version, 1e6);
        classesAtStart();
    }

    /**
     * Package prefixes the classes loaded at start are counted by, first match wins. picocli stays for jars built
     * before issue 22 (a baseline in a before/after run); today's daemon has none.
     */
    private static final List<String[]> GROUPS = List.of(
            new String[] {"io.grpc.netty.shaded.io.netty.", "netty (shaded)"},
            new String[] {"io.grpc.", "grpc"}, new String[] {"dev.vgpu.", "dev.vgpu"},
            new String[] {"picocli.", "picocli"}, new String[] {"com.google.common.", "guava"},
            new String[] {"com.google.protobuf.", "protobuf"}, new String[] {"io.prometheus.", "prometheus"},
            new String[] {"com.sun.jna.", "JNA"}, new String[] {"org.slf4j.", "slf4j"},
            new String[] {"java.", "JDK"}, new String[] {"javax.", "JDK"}, new String[] {"jdk.", "JDK"},
            new String[] {"sun.", "JDK"}, new String[] {"com.sun.", "JDK"});

    /**
     * One more {@code serve} launch with {@code -Xlog:class+load} until every resource is listed: the classes loaded
     * by then, counted by package, and how many came from the class-data archive or AOT cache.
     */
    private void classesAtStart() throws Exception {
        Path log = work.resolve("class-load.log");
        Files.deleteIfExists(log);
        Path dir = Files.createTempDirectory(work, "plugins-");
        try (StandInKubelet kubelet = StandInKubelet.start(dir)) {
            Process daemon = start(serveCommand(dir, freePort()), Map.of(),
                    List.of("-Xlog:class+load=info:file=" + log));
            try {
                kubelet.await(WAIT, k -> resources.stream().allMatch(r -> k.listUpdates(r) >= 1));
                // What is loaded once registered and listed (the log is flushed per line).
                Map<String, int[]> counts = new java.util.TreeMap<>();
                int total = 0;
                int archived = 0;
                for (String line : Files.readAllLines(log)) {
                    int at = line.indexOf("] ", line.indexOf("[class,load]"));
                    if (at < 0) {
                        continue;
                    }
                    String rest = line.substring(at + 2);
                    String name = rest.substring(0, Math.max(0, rest.indexOf(' ')));
                    if (name.isEmpty()) {
                        continue;
                    }
                    boolean shared = rest.contains("source: shared objects file");
                    String group = "other";
                    for (String[] g : GROUPS) {
                        if (name.startsWith(g[0])) {
                            group = g[1];
                            break;
                        }
                    }
                    int[] c = counts.computeIfAbsent(group, k -> new int[2]);
                    c[0]++;
                    total++;
                    if (shared) {
                        c[1]++;
                        archived++;
                    }
                }
                StringBuilder text = new StringBuilder();
                counts.entrySet().stream().sorted((a, b) -> b.getValue()[0] - a.getValue()[0]).forEach(e -> text
                        .append(e.getKey()).append(' ').append(e.getValue()[0]).append(" (").append(e.getValue()[1])
                        .append(" archived), "));
                System.out.printf("| classes loaded by `serve` until listed: all (archived) | %d (%d) | | %s | | | |%n",
                        total, archived, text.substring(0, Math.max(0, text.length() - 2)));
            } finally {
                stop(daemon);
            }
        }
    }

    // ---- serve start with a configuration file --------------------------------------------------------------

    /**
     * A file as an operator writes one (README, "Configuration file"): renames, exclusions, a type-name table and the
     * XID policy, so that the YAML parser, the checks and the rules all run at start.
     */
    static final String REALISTIC_CONFIG = """
            version: v1
            resources:
              - match: {source: passthrough}
                name: nvidia.com/pgpu
              - match: {source: vendor-vfio, deviceId: "2335", profile: "NVIDIA H200X-1-18C"}
                name: nvidia.com/h200-small
              - match: {address: "0000:ff:00.4"}
                name: nvidia.com/reserved-vf
            exclude:
              - address: "0000:fe:00.0"
              - source: mdev
                profile: "NVIDIA A10-24Q"
            vgpuTypeNames:
              "26b9": {"1152": "NVIDIA L40S-1Q", "1153": "NVIDIA L40S-2Q", "1155": "NVIDIA L40S-4Q"}
              "2335": {"1414": "NVIDIA H200X-1-18C", "1428": "NVIDIA H200X-141C"}
            health:
              xid:
                enabled: true
                ignored: [13, 31, 43, 45, 68, 109]
                recoverAfter: 10m
            """;

    /**
     * Paired launches of {@code serve} without and with {@code --config} (the order alternates from pair to pair):
     * process start until every resource is registered and listed, as {@link #serveStart()}.
     */
    private void configStart() throws Exception {
        Path config = Files.writeString(work.resolve("config.yaml"), REALISTIC_CONFIG);
        Set<String> configured = expectedResources(List.of("--config=" + config));
        long[] without = new long[runs];
        long[] with = new long[runs];
        long[] added = new long[runs];
        for (int i = 0; i < runs; i++) {
            if (i % 2 == 0) {
                without[i] = startUntilListed(List.of(), resources);
                with[i] = startUntilListed(List.of("--config", config.toString()), configured);
            } else {
                with[i] = startUntilListed(List.of("--config", config.toString()), configured);
                without[i] = startUntilListed(List.of(), resources);
            }
            added[i] = with[i] - without[i];
        }
        row("`serve --config` start → " + configured.size() + " resources registered + first list (ms)", with,
                "the same without `--config`, paired", without, 1e6);
        System.out.printf(Locale.ROOT, "| `--config` adds to `serve` start, per pair (ms) | %.1f | %.1f | | | | |%n",
                min(added) / 1e6, median(added) / 1e6);
        // The parser's share alone: a cold discover of a host without functions, where little else happens.
        long[] plain = new long[runs];
        long[] parsed = new long[runs];
        long[] cost = new long[runs];
        for (int i = 0; i < runs; i++) {
            List<String> bare = List.of("discover", "--host-root=" + empty);
            List<String> withFile = List.of("discover", "--host-root=" + empty, "--config=" + config);
            if (i % 2 == 0) {
                plain[i] = timed(daemonCommand(bare));
                parsed[i] = timed(daemonCommand(withFile));
            } else {
                parsed[i] = timed(daemonCommand(withFile));
                plain[i] = timed(daemonCommand(bare));
            }
            cost[i] = parsed[i] - plain[i];
        }
        row("cold `discover --config`, empty host (ms)", parsed, "the same without `--config`, paired", plain, 1e6);
        System.out.printf(Locale.ROOT, "| `--config` adds to cold `discover`, per pair (ms) | %.1f | %.1f | | | | |%n",
                min(cost) / 1e6, median(cost) / 1e6);
    }

    /** One {@code serve} launch with {@code extra} arguments: nanoseconds until each of {@code names} is listed. */
    private long startUntilListed(List<String> extra, Set<String> names) throws Exception {
        Path dir = Files.createTempDirectory(work, "plugins-");
        try (StandInKubelet kubelet = StandInKubelet.start(dir)) {
            List<String> cmd = new ArrayList<>(serveCommand(dir, freePort()));
            cmd.addAll(extra);
            long t0 = System.nanoTime();
            Process daemon = start(cmd, Map.of(), List.of());
            try {
                kubelet.await(WAIT, k -> names.stream().allMatch(r -> k.listUpdates(r) >= 1));
                return System.nanoTime() - t0;
            } finally {
                stop(daemon);
            }
        }
    }

    // ---- soak: footprint, rescan CPU, change latency ----------------------------------------------------------

    private void soak() throws Exception {
        double minutes = Double.parseDouble(options.getOrDefault("--soak-minutes", "1"));
        int changes = Integer.parseInt(options.getOrDefault("--changes", "5"));
        boolean nmt = options.containsKey("--nmt");
        long[] idle = idleBaseline();
        Path dir = Files.createTempDirectory(work, "plugins-");
        int port = freePort();
        // Each change makes a vGPU appear on an unused VF of card 0 (odd VFs are unconfigured): only a rescan sees
        // it, never a health check. The originals are put back at the end.
        Map<Path, String> originals = new LinkedHashMap<>();
        List<String> vfs = new ArrayList<>();
        for (int i = 0; i <= changes; i++) {
            String vf = SysfsTree.vfAddress(LargeHost.pf(0), 2 * i + 1);
            vfs.add(vf);
            for (String attribute : List.of("nvidia/current_vgpu_type", "nvidia/creatable_vgpu_types")) {
                Path f = large.resolve("sys/bus/pci/devices/" + vf + "/" + attribute);
                originals.put(f, Files.readString(f));
            }
        }
        Long churnSeed = options.containsKey("--churn") ? Long.valueOf(options.get("--churn")) : null;
        List<String> churnVfs = new ArrayList<>();
        if (churnSeed != null) {
            // Churn touches card 0's odd VFs from 31 on (unconfigured in LargeHost, above those the latency rows
            // use); they are put back at the end too.
            for (int i = 15; i < 31; i++) {
                String vf = SysfsTree.vfAddress(LargeHost.pf(0), 2 * i + 1);
                churnVfs.add(vf);
                for (String attribute : List.of("nvidia/current_vgpu_type", "nvidia/creatable_vgpu_types")) {
                    Path f = large.resolve("sys/bus/pci/devices/" + vf + "/" + attribute);
                    originals.put(f, Files.readString(f));
                }
            }
        }
        SysfsTree tree = SysfsTree.at(large);
        try (StandInKubelet kubelet = StandInKubelet.start(dir)) {
            Process daemon = start(serveCommand(dir, port), Map.of("VFIO_VGPU_RESCAN_INTERVAL", INTERVAL),
                    nmt ? List.of("-XX:NativeMemoryTracking=summary") : List.of());
            try {
                Proc proc = new Proc(daemon.pid());
                kubelet.await(WAIT, k -> resources.stream().allMatch(r -> k.listUpdates(r) >= 1));
                long[] latency = new long[changes];
                for (int i = -1; i < changes; i++) {
                    int seen = updates(kubelet);
                    long t0 = System.nanoTime();
                    tree.configureVf(vfs.get(i + 1), 1414).rewriteCatalog(vfs.get(i + 1), Map.of());
                    kubelet.await(WAIT, k -> updates(k) > seen);
                    if (i >= 0) {
                        latency[i] = System.nanoTime() - t0 - INTERVAL_NS;
                    }
                }
                long scans0 = scans(port);
                long cpu0 = proc.threadCpuNs("vgpu-rescan");
                long pcpu0 = proc.processCpuNs();
                long rss0 = proc.status("VmRSS");
                long threads0 = proc.status("Threads");
                long fds0 = proc.fds();
                if (churnSeed == null) {
                    Thread.sleep((long) (minutes * 60_000));
                } else {
                    churn(tree, kubelet, churnVfs, churnSeed, minutes);
                }
                long scans = scans(port) - scans0;
                long cpu = proc.threadCpuNs("vgpu-rescan") - cpu0;
                long pcpu = proc.processCpuNs() - pcpu0;
                long rss = proc.status("VmRSS");
                row("change → kubelet, beyond the " + INTERVAL + " interval (ms)", latency, "", null, 1e6);
                System.out.printf(Locale.ROOT, "| RSS after %s min of %s rescans (MiB) | %.1f | | idle JVM, same flags "
                        + "| %.1f | | %.2f× |%n", fmt(minutes), INTERVAL, rss / 1024.0, idle[0] / 1024.0,
                        (double) rss / idle[0]);
                System.out.printf(Locale.ROOT, "| RSS high-water mark (MiB) | %.1f | | | | | |%n",
                        proc.status("VmHWM") / 1024.0);
                long anonymous = proc.rollup("Anonymous");
                long rollupRss = proc.rollup("Rss");
                System.out.printf(Locale.ROOT, "| RSS anonymous / file-backed and shared, `smaps_rollup` (MiB) | %.1f / %.1f "
                        + "| | | | | |%n", anonymous / 1024.0, (rollupRss - anonymous) / 1024.0);
                System.out.printf("| threads | %d | | idle JVM, same flags | %d | | +%d |%n", proc.status("Threads"),
                        idle[1], proc.status("Threads") - idle[1]);
                System.out.printf("| over the soak: %d rescans; RSS, threads, fds change | %+.1f MiB, %+d, %+d "
                        + "| | | | | |%n", scans, (rss - rss0) / 1024.0, proc.status("Threads") - threads0,
                        proc.fds() - fds0);
                if (scans > 0) {
                    System.out.printf(Locale.ROOT, "| daemon CPU per rescan, `vgpu-rescan` / process, 10 ms ticks (ms) "
                            + "| %.1f / %.1f | | | | | |%n", cpu / 1e6 / scans, pcpu / 1e6 / scans);
                }
                if (nmt) {
                    String summary = output(List.of(java.resolveSibling("jcmd").toString(),
                            Long.toString(daemon.pid()), "VM.native_memory", "summary"), false);
                    Files.writeString(work.resolve("nmt.txt"), summary);
                    System.out.println();
                    System.out.println("NMT summary (committed):");
                    summary.lines().filter(l -> l.startsWith("-") || l.startsWith("Total"))
                            .forEach(l -> System.out.println("    " + l.strip()));
                }
            } finally {
                stop(daemon);
                for (Map.Entry<Path, String> e : originals.entrySet()) {
                    Files.writeString(e.getKey(), e.getValue());
                }
            }
        }
    }

    /**
     * Seeded churn for the soak: every 2.5 s one of {@code vfs} is configured with a vGPU type or unconfigured, and
     * every minute the stand-in kubelet restarts; at the end every resource must be registered and streaming again.
     */
    private void churn(SysfsTree tree, StandInKubelet kubelet, List<String> vfs, long seed, double minutes)
            throws Exception {
        java.util.Random random = new java.util.Random(seed);
        long end = System.nanoTime() + (long) (minutes * 60e9);
        long nextRestart = System.nanoTime() + 60_000_000_000L;
        int changes = 0;
        int restarts = 0;
        while (System.nanoTime() < end) {
            String vf = vfs.get(random.nextInt(vfs.size()));
            if (random.nextBoolean()) {
                tree.configureVf(vf, 1414).rewriteCatalog(vf, Map.of());
            } else {
                tree.unconfigureVf(vf);
            }
            changes++;
            if (System.nanoTime() >= nextRestart) {
                kubelet.restart();
                restarts++;
                nextRestart += 60_000_000_000L;
            }
            Thread.sleep(2_500);
        }
        kubelet.await(WAIT, k -> resources.stream().allMatch(k::streaming));
        System.out.printf("| churn (seed %d): tree changes, kubelet restarts | %d, %d; every resource streaming "
                + "again after the last restart | | | | | |%n", seed, changes, restarts);
    }

    private long[] idleBaseline() throws Exception {
        ProcessBuilder builder = new ProcessBuilder(javaCommand(List.of("-cp", benchJar.toString(),
                Idle.class.getName(), "30")));
        builder.environment().putAll(manifest.env());
        builder.environment().put("JAVA_TOOL_OPTIONS", String.join(" ", manifest.flagsWithoutArchive()));
        builder.redirectErrorStream(true);
        Process idle = builder.start();
        try {
            new BufferedReader(new InputStreamReader(idle.getInputStream(), StandardCharsets.UTF_8)).lines()
                    .filter(l -> l.equals("idle")).findFirst();
            Thread.sleep(1000);
            Proc proc = new Proc(idle.pid());
            return new long[] {proc.status("VmRSS"), proc.status("Threads")};
        } finally {
            idle.destroyForcibly().waitFor();
        }
    }

    private int updates(StandInKubelet kubelet) {
        return resources.stream().mapToInt(kubelet::listUpdates).sum();
    }

    private static long scans(int port) throws IOException {
        String text;
        try (InputStream in = URI.create("http://127.0.0.1:" + port + "/metrics").toURL().openStream()) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        return (long) text.lines().filter(l -> l.startsWith("vgpu_scans_total")).mapToDouble(
                l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    // ---- launching ----------------------------------------------------------------------------------------

    private List<String> javaCommand(List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java.toString());
        cmd.addAll(args);
        return cmd;
    }

    private List<String> daemonCommand(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of(java.toString(), "-jar", daemonJar.toString()));
        cmd.addAll(args);
        return cmd;
    }

    private List<String> serveCommand(Path pluginDir, int port) {
        List<String> args = manifest.argsWith("--host-root", large.toString(), "--device-plugin-dir",
                pluginDir.toString(), "--metrics-address", "127.0.0.1:" + port);
        if (manifest.has("--state-dir")) {
            // The manifest's state directory is a host path; each launch gets its own next to its plugin directory,
            // so that a benchmark never writes the host's and two launches never share a lock.
            args = manifest.withArgs(args).argsWith("--state-dir",
                    pluginDir.resolveSibling(pluginDir.getFileName() + "-state").toString());
        }
        return daemonCommand(args);
    }

    /** Starts a command with the manifest's JVM flags (plus {@code extraFlags}) in JAVA_TOOL_OPTIONS. */
    private Process start(List<String> cmd, Map<String, String> env, List<String> extraFlags) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(cmd);
        List<String> flags = new ArrayList<>(manifest.javaToolOptions());
        flags.addAll(extraFlags);
        builder.environment().putAll(manifest.env());
        builder.environment().put("JAVA_TOOL_OPTIONS", String.join(" ", flags));
        builder.environment().remove("VFIO_VGPU_RESCAN_INTERVAL");
        builder.environment().putAll(env);
        builder.redirectErrorStream(true);
        builder.redirectOutput(work.resolve("launch-" + (++launches) + ".log").toFile());
        return builder.start();
    }

    private static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    /** Wall time of a command that must exit 0. */
    private long timed(List<String> cmd) throws Exception {
        long t0 = System.nanoTime();
        Process p = start(cmd, Map.of(), List.of());
        int rc = p.waitFor();
        long took = System.nanoTime() - t0;
        if (rc != 0) {
            throw new IllegalStateException(cmd + " exited " + rc + "; see " + work.resolve("launch-" + launches
                    + ".log"));
        }
        return took;
    }

    /** Standard output of a command that must exit 0, run with the manifest's flags when {@code jvm}. */
    private String output(List<String> cmd, boolean jvm) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(cmd);
        if (jvm) {
            builder.environment().putAll(manifest.env());
            builder.environment().put("JAVA_TOOL_OPTIONS", String.join(" ", manifest.flagsWithoutArchive()));
        }
        builder.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = builder.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException(cmd + " exited " + p.exitValue());
        }
        return out;
    }

    /** first, min, median, CPU per round of the C floor over {@code rounds} rounds in a fresh process (ns). */
    private long[] floor(int rounds) throws Exception {
        String out = output(List.of(floor.toString(), plan.toString(), Integer.toString(rounds)), false);
        return Arrays.stream(out.strip().split(" ")).limit(4).mapToLong(Long::parseLong).toArray();
    }

    private Set<String> expectedResources() throws Exception {
        return expectedResources(List.of());
    }

    private Set<String> expectedResources(List<String> extra) throws Exception {
        Path log = work.resolve("discover.json");
        List<String> discover = new ArrayList<>(List.of("discover", "--format=json", "--host-root=" + large));
        discover.addAll(extra);
        ProcessBuilder builder = new ProcessBuilder(daemonCommand(discover));
        builder.environment().put("JAVA_TOOL_OPTIONS", manifest.javaToolOptionsValue());
        builder.redirectOutput(log.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD);
        if (builder.start().waitFor() != 0) {
            throw new IllegalStateException("discover --format=json failed");
        }
        Set<String> names = new TreeSet<>();
        Matcher m = RESOURCE.matcher(Files.readString(log));
        while (m.find()) {
            names.add(m.group(1));
        }
        if (names.isEmpty()) {
            throw new IllegalStateException("discover found no resources on the large host");
        }
        return names;
    }

    private static Map<String, Long> keyValues(String line) {
        Map<String, Long> values = new LinkedHashMap<>();
        for (String pair : line.strip().split(" ")) {
            String[] kv = pair.split("=");
            values.put(kv[0], Long.parseLong(kv[1]));
        }
        return values;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    // ---- figures --------------------------------------------------------------------------------------------

    private static void row(String what, long[] values, String baseline, long[] base, double unit) {
        if (base == null) {
            System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f | %s | | | |%n", what, min(values) / unit,
                    median(values) / unit, baseline);
            return;
        }
        System.out.printf(Locale.ROOT, "| %s | %.1f | %.1f | %s | %.1f | %.1f | %.2f / %.2f× |%n", what,
                min(values) / unit, median(values) / unit, baseline, min(base) / unit, median(base) / unit,
                (double) min(values) / min(base), (double) median(values) / median(base));
    }

    private static long min(long[] values) {
        return Arrays.stream(values).min().orElseThrow();
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    private static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.2f", bytes / 1e6);
    }

    private static String fmt(double minutes) {
        return minutes == Math.rint(minutes) ? Long.toString((long) minutes) : Double.toString(minutes);
    }
}
