package dev.vgpu.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The daemon's packages as docs/ARCHITECTURE.md draws them, read from its compiled classes with {@code jdeps}: every
 * arrow between two of its packages runs down the layers (so none runs back up and there is no cycle between them),
 * and device-plugin mode cannot reach a DRA class by construction: the only classes that name vgpu-dra, fabric8 or the
 * DRA adapter are that adapter's package and the DRA mode of {@code serve}, which only {@code --mode dra} makes.
 */
class ArchitectureTest {

    private static final String ROOT = "dev.vgpu.daemon";
    /** The layers, top first: a package may use only packages of later layers. */
    private static final List<Set<String>> LAYERS = List.of(
            Set.of(ROOT),
            Set.of(ROOT + ".serve", ROOT + ".discover", ROOT + ".demo"),
            Set.of(ROOT + ".deviceplugin", ROOT + ".dra", ROOT + ".configure"),
            Set.of(ROOT + ".agent"),
            Set.of(ROOT + ".scan", ROOT + ".ops"),
            Set.of(ROOT + ".config"),
            Set.of(ROOT + ".cli", ROOT + ".process", ROOT + ".logging"));
    private static final Pattern ARROW = Pattern.compile("^\\s+(\\S+)\\s+->\\s+(\\S+)\\s");

    /** Class → the classes it names (nested classes folded into their top-level class). */
    private static final Map<String, Set<String>> USES = new TreeMap<>();

    @BeforeAll
    static void readTheClasses() throws Exception {
        Path classes = Path.of(VgpuDaemon.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = ToolProvider.findFirst("jdeps").orElseThrow().run(new PrintWriter(out), new PrintWriter(err),
                "-verbose:class", "-filter:none", classes.toString());
        assertThat(code).as(err.toString()).isZero();
        for (String line : out.toString().lines().toList()) {
            Matcher m = ARROW.matcher(line);
            if (m.find()) {
                String from = top(m.group(1));
                String to = top(m.group(2));
                if (from.startsWith(ROOT + ".") && !from.equals(to)) {
                    USES.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
                }
            }
        }
        assertThat(USES).as("jdeps found the daemon's classes").containsKey(ROOT + ".VgpuDaemon");
    }

    private static String top(String className) {
        int dollar = className.indexOf('$');
        return dollar < 0 ? className : className.substring(0, dollar);
    }

    private static String packageOf(String className) {
        return className.substring(0, className.lastIndexOf('.'));
    }

    private static int layer(String pkg) {
        for (int i = 0; i < LAYERS.size(); i++) {
            if (LAYERS.get(i).contains(pkg)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void everyPackageIsInALayerAndEveryArrowRunsDown() {
        List<String> wrong = new ArrayList<>();
        USES.forEach((from, targets) -> {
            String source = packageOf(from);
            if (layer(source) < 0) {
                wrong.add(source + " is in no layer");
            }
            for (String to : targets) {
                String target = packageOf(to);
                if (target.startsWith(ROOT) && !target.equals(source) && layer(target) <= layer(source)) {
                    wrong.add(from + " -> " + to);
                }
            }
        });
        assertThat(wrong).as("arrows that do not run down the layers").isEmpty();
    }

    @Test
    void onlyTheDraAdapterAndTheDraModeNameDraCode() {
        Set<String> naming = new TreeSet<>();
        USES.forEach((from, targets) -> {
            for (String to : targets) {
                if (to.startsWith("dev.vgpu.dra.") || to.startsWith("io.fabric8.")
                        || to.startsWith(ROOT + ".dra.") && !from.startsWith(ROOT + ".dra.")) {
                    naming.add(from);
                }
            }
        });
        assertThat(naming).as("classes outside the DRA adapter that name DRA code")
                .filteredOn(c -> !c.startsWith(ROOT + ".dra."))
                // discover --format deviceclasses prints DRA objects (vgpu-dra renders them) and runs nothing of DRA;
                // the vGPU layout reads which VFs prepared claims hold, in either mode.
                .containsExactlyInAnyOrder(ROOT + ".discover.DeviceClassReport", ROOT + ".serve.DraMode",
                        ROOT + ".configure.InUseSources");
        // The layout reads prepared claims through vgpu-dra's file reader only.
        assertThat(USES.get(ROOT + ".configure.InUseSources")).filteredOn(c -> c.startsWith("dev.vgpu.dra"))
                .containsExactly("dev.vgpu.dra.PreparedDevices");
        // The DRA mode is made in one place, where --mode says dra; device-plugin mode's classes never name it.
        Set<String> namingTheMode = new TreeSet<>();
        USES.forEach((from, targets) -> {
            if (targets.contains(ROOT + ".serve.DraMode")) {
                namingTheMode.add(from);
            }
        });
        assertThat(namingTheMode).containsExactly(ROOT + ".serve.ServeMode");
    }
}
