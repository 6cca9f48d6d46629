/**
 * {@link dev.vgpu.testing.contract.DeviceSourceContract}: the generic JUnit 5 contract a {@code DeviceSource}'s tests
 * extend. Its own artifact, used with scope test, so that JUnit never reaches a program that uses
 * {@code vgpu-testing}'s host trees at run time.
 */
module dev.vgpu.testing.contract {
    requires transitive dev.vgpu.testing;
    requires transitive org.junit.jupiter.api;

    exports dev.vgpu.testing.contract;

    // JUnit's engine reflects on the contract's test methods and the @TempDir field.
    opens dev.vgpu.testing.contract to org.junit.platform.commons;
}
