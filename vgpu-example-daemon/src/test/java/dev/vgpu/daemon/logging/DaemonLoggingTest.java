package dev.vgpu.daemon.logging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vgpu.testsupport.CapturedStderr;
import java.io.IOException;
import java.text.SimpleDateFormat;
import java.time.ZoneId;
import java.util.Date;
import java.util.List;
import java.util.TimeZone;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's own SLF4J provider writes what slf4j-simple wrote with the daemon's settings: the same timestamp
 * (checked against {@code SimpleDateFormat} with the old pattern), the level, the short name, the message, then the
 * stack trace; INFO unless configured; gRPC's Netty transport from WARN up.
 */
class DaemonLoggingTest {

    @AfterEach
    void backToInfo() {
        DaemonLogging.configure("info");
    }

    @Test
    void theTimestampIsWhatTheOldPatternPrintedInEveryZone() {
        List<String> zones = List.of("UTC", "Europe/Berlin", "America/St_Johns", "Asia/Kolkata", "Pacific/Chatham",
                "America/Los_Angeles");
        long[] instants = {0L, 1_796_522_864_857L, 1_711_846_799_999L, 1_711_846_800_000L, 951_782_400_123L,
                -1L, 253_402_300_799_999L};
        for (String zone : zones) {
            SimpleDateFormat old = new SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSXXX");
            old.setTimeZone(TimeZone.getTimeZone(zone));
            for (long instant : instants) {
                StringBuilder ours = new StringBuilder();
                DaemonLogging.timestamp(instant, ZoneId.of(zone), ours);
                assertThat(ours.toString()).as("%s at %d", zone, instant).isEqualTo(old.format(new Date(instant)));
            }
        }
    }

    @Test
    void aLineIsTimeLevelShortNameAndMessageThenTheStackTrace() {
        Logger log = LoggerFactory.getLogger("dev.vgpu.daemon.SomeOwner");

        String written = CapturedStderr.of(() -> {
            log.info("serving {} resources with {} devices", 2, 448);
            log.warn("cannot read {}", "numa_node", new IOException("numa_node: permission denied"));
        });

        // what this test's logger wrote: other threads of the JVM may log into the capture meanwhile, never inside
        // one event, which is one write
        List<String> all = written.lines().toList();
        assertThat(all.stream().filter(l -> l.contains(" INFO SomeOwner - "))).singleElement().asString()
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d)"
                        + " INFO SomeOwner - serving 2 resources with 448 devices");
        int warn = all.indexOf(all.stream().filter(l -> l.endsWith(" WARN SomeOwner - cannot read numa_node"))
                .findFirst().orElseThrow());
        assertThat(all.get(warn + 1)).isEqualTo("java.io.IOException: numa_node: permission denied");
        assertThat(all.get(warn + 2)).startsWith("\tat " + DaemonLoggingTest.class.getName());
    }

    @Test
    void infoUnlessConfiguredAndTheNettyTransportFromWarnUp() {
        Logger owner = LoggerFactory.getLogger("dev.vgpu.daemon.Owner");
        Logger netty = LoggerFactory.getLogger("io.grpc.netty.shaded.io.netty.channel.Something");
        Logger nettyItself = LoggerFactory.getLogger("io.grpc.netty");
        Logger notNetty = LoggerFactory.getLogger("io.grpc.nettyish.Other");

        String atInfo = CapturedStderr.of(() -> {
            owner.debug("hidden at info");
            owner.info("shown at info");
            netty.info("netty info hidden");
            nettyItself.info("netty itself hidden");
            netty.warn("netty warn shown");
            notNetty.info("other grpc info shown");
        });
        assertThat(DaemonLogging.configure("DEBUG")).isTrue();
        String atDebug = CapturedStderr.of(() -> {
            owner.debug("shown at debug");
            owner.trace("hidden at debug");
            netty.debug("netty debug still hidden");
        });
        assertThat(DaemonLogging.configure("error")).isTrue();
        String atError = CapturedStderr.of(() -> {
            owner.warn("hidden at error");
            netty.warn("netty warn hidden at error");
            owner.error("shown at error");
        });

        assertThat(atInfo).contains("INFO Owner - shown at info", "WARN Something - netty warn shown",
                "INFO Other - other grpc info shown").doesNotContain("hidden");
        assertThat(atDebug).contains("DEBUG Owner - shown at debug").doesNotContain("hidden");
        assertThat(atError.lines().filter(l -> l.contains(" Owner - "))).singleElement().asString()
                .endsWith("ERROR Owner - shown at error");
        assertThat(owner.isDebugEnabled()).isFalse();
    }

    @Test
    void aValueThatNamesNoLevelKeepsTheLevelAndSaysSo() {
        assertThat(DaemonLogging.configure("verbose")).isFalse();
        assertThat(DaemonLogging.configure(null)).isTrue();
        assertThat(DaemonLogging.configure(" ")).isTrue();
        assertThat(LoggerFactory.getLogger("dev.vgpu.daemon.Owner").isInfoEnabled()).isTrue();
        assertThat(LoggerFactory.getLogger("dev.vgpu.daemon.Owner").isDebugEnabled()).isFalse();
    }

    @Test
    void theDaemonsProviderIsTheOneSlf4jUses() {
        assertThat(LoggerFactory.getILoggerFactory().getClass().getEnclosingClass()).isEqualTo(DaemonLogging.class);
    }
}
