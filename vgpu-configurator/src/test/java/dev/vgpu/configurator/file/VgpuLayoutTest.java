package dev.vgpu.configurator.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.configurator.CardDemand;
import dev.vgpu.configurator.CardFacts;
import dev.vgpu.configurator.CardTypes;
import dev.vgpu.configurator.HostFacts;
import dev.vgpu.core.PciAddress;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A named layout on a host: GPU indexes in address order, device filters, and cards named twice. */
class VgpuLayoutTest {

    static final PciAddress L40S_LOW = PciAddress.parse("0000:41:00.0");
    static final PciAddress H200 = PciAddress.parse("0000:61:00.0");
    static final PciAddress L40S_HIGH = PciAddress.parse("0000:c1:00.0");

    /** Three cards, listed out of order: GPU 0 is 41:00.0 (L40S), 1 is 61:00.0 (H200), 2 is c1:00.0 (L40S). */
    static HostFacts host() {
        return new HostFacts(List.of(card(L40S_HIGH, 0x26b9), card(L40S_LOW, 0x26b9), card(H200, 0x2335)));
    }

    static CardFacts card(PciAddress pf, int device) {
        return new CardFacts(pf, device, 16, 0, List.of(), CardTypes.NONE, List.of());
    }

    static VgpuLayout layout(String entries) throws InvalidVgpuConfigException {
        return VgpuConfigFile.parse("version: v1\nvgpu-configs:\n  x:\n" + entries).select("x");
    }

    @Test
    void allMeansEveryCardAndEachGetsTheEntrysCounts() throws Exception {
        LayoutDemands demands = layout("    - {devices: all, vgpu-devices: {L40S-12Q: 4}}\n").demands(host());

        assertThat(demands.cards()).containsOnlyKeys(L40S_LOW, H200, L40S_HIGH);
        assertThat(demands.demands().get(H200)).isEqualTo(CardDemand.layout(Map.of("L40S-12Q", 4)));
        assertThat(demands.indexes()).isEqualTo(Map.of(L40S_LOW, 0, H200, 1, L40S_HIGH, 2));
        assertThat(demands.describeCard(L40S_HIGH)).contains("GPU 2 (0000:c1:00.0, vgpu-configs.x[0])");
        assertThat(demands.unmatched()).isEmpty();
    }

    @Test
    void indexesCountCardsInAddressOrderAndFiltersNarrowThem() throws Exception {
        LayoutDemands demands = layout("""
                    - {devices: [0, 1], device-filter: "0x26B910DE", vgpu-devices: {L40S-12Q: 4}}
                    - {devices: [1], vgpu-devices: {H200X-141C: 1}}
                    - {devices: [2], device-filter: ["0x26B910DE"], vgpu-devices: {}}
                """).demands(host());

        assertThat(demands.describe()).containsExactly(
                "GPU 0 0000:41:00.0: 4 × \"L40S-12Q\" (vgpu-configs.x[0])",
                "GPU 1 0000:61:00.0: 1 × \"H200X-141C\" (vgpu-configs.x[1])",
                "GPU 2 0000:c1:00.0: no vGPUs (vgpu-configs.x[2])");
    }

    @Test
    void aCardNoEntryNamesIsNeverTouchedAndAnEntryThatNamesNoCardIsSaid() throws Exception {
        LayoutDemands demands = layout("""
                    - {devices: [1], vgpu-devices: {H200X-141C: 1}}
                    - {devices: [5], vgpu-devices: {L40S-4Q: 1}}
                    - {devices: all, device-filter: "0x233010DE", vgpu-devices: {L40S-4Q: 1}}
                """).demands(host());

        assertThat(demands.cards()).containsOnlyKeys(H200);
        assertThat(demands.describeCard(L40S_LOW)).isEmpty();
        assertThat(demands.unmatched()).containsExactly(
                "vgpu-configs.x[1] (for GPU 5) names no card of this host, which has 3 cards that can host"
                        + " vendor-VFIO vGPUs: GPU 0 0000:41:00.0 (0x26B910DE), GPU 1 0000:61:00.0 (0x233510DE),"
                        + " GPU 2 0000:c1:00.0 (0x26B910DE)",
                "vgpu-configs.x[2] (for every GPU with device id 0x233010DE) names no card of this host, which has 3"
                        + " cards that can host vendor-VFIO vGPUs: GPU 0 0000:41:00.0 (0x26B910DE), GPU 1"
                        + " 0000:61:00.0 (0x233510DE), GPU 2 0000:c1:00.0 (0x26B910DE)");
    }

    @Test
    void aCardTwoEntriesNameIsRefusedNamingBoth() throws Exception {
        VgpuLayout twice = layout("""
                    - {devices: all, vgpu-devices: {L40S-12Q: 4}}
                    - {devices: [2], vgpu-devices: {L40S-4Q: 12}}
                """);

        assertThatThrownBy(() -> twice.demands(host())).isInstanceOf(InvalidVgpuConfigException.class)
                .hasMessage("vgpu-configs.x[1]: card 0000:c1:00.0 (GPU 2) is named by vgpu-configs.x[0] too; which"
                        + " layout it should hold cannot be told: name each card in one entry only");
    }

    @Test
    void aHostWithoutCardsGetsNoDemand() throws Exception {
        LayoutDemands demands = layout("    - {devices: all, vgpu-devices: {L40S-12Q: 4}}\n")
                .demands(new HostFacts(List.of()));

        assertThat(demands.cards()).isEmpty();
        assertThat(demands.unmatched()).containsExactly("vgpu-configs.x[0] (for every GPU) names no card of this"
                + " host, which has 0 cards that can host vendor-VFIO vGPUs");
    }
}
