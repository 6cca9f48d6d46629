package dev.vgpu.sysfs.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vgpu.sysfs.internal.CreatableTypesCatalog.Entry;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CreatableTypesCatalogTest {

    @Test
    void parsesTheDriversFormat() {
        CreatableTypesCatalog catalog = CreatableTypesCatalog.parse(
                "ID    : vGPU Name\n1145  : NVIDIA L40S-1B\n1146  : NVIDIA L40S-2B\n2164  : NVIDIA L40S-3B\n");

        assertThat(catalog.entries()).containsExactly(new Entry(1145, "NVIDIA L40S-1B"),
                new Entry(1146, "NVIDIA L40S-2B"), new Entry(2164, "NVIDIA L40S-3B"));
        assertThat(catalog.rejected()).isEmpty();
        assertThat(catalog.isEmpty()).isFalse();
    }

    @ParameterizedTest(name = "header-only or empty: \"{0}\"")
    @ValueSource(strings = {"ID    : vGPU Name\n", "ID : vGPU Name", "", "\n\n", "  ID    : vGPU Name  \r\n\r\n"})
    void headerOnlyOrEmptyMeansNoTypes(String text) {
        CreatableTypesCatalog catalog = CreatableTypesCatalog.parse(text);

        assertThat(catalog.isEmpty()).isTrue();
        assertThat(catalog.rejected()).isEmpty();
    }

    @ParameterizedTest(name = "row \"{0}\"")
    @ValueSource(strings = {"1428 : NVIDIA H200X-141C", "1428:NVIDIA H200X-141C", "  1428\t:\tNVIDIA H200X-141C  \r",
        "1428      :      NVIDIA H200X-141C"})
    void toleratesPaddingTabsAndCrlf(String row) {
        assertThat(CreatableTypesCatalog.parse("ID    : vGPU Name\r\n" + row + "\n").entries())
                .containsExactly(new Entry(1428, "NVIDIA H200X-141C"));
    }

    @Test
    void withoutHeaderTheFirstLineIsARow() {
        assertThat(CreatableTypesCatalog.parse("1428 : NVIDIA H200X-141C\n1414 : NVIDIA H200X-1-18C").entries())
                .extracting(Entry::typeId).containsExactly(1428L, 1414L);
    }

    @Test
    void keepsInnerSpacesAndColonsOfNames() {
        assertThat(CreatableTypesCatalog.parse("7 : NVIDIA RTX Pro 6000 Blackwell DC-1-2Q\n8 : A : B\n").entries())
                .containsExactly(new Entry(7, "NVIDIA RTX Pro 6000 Blackwell DC-1-2Q"), new Entry(8, "A : B"));
    }

    @Test
    void rejectsNothingSilently() {
        CreatableTypesCatalog catalog = CreatableTypesCatalog.parse("ID    : vGPU Name\n1428 NVIDIA H200X-141C\n"
                + "abc : name\n12 :\n : nameless\n-3 : negative\n1414 : NVIDIA H200X-1-18C\nID : again\n"
                + "99999999999999999999 : too long\n");

        assertThat(catalog.entries()).containsExactly(new Entry(1414, "NVIDIA H200X-1-18C"));
        assertThat(catalog.rejected()).containsExactly("1428 NVIDIA H200X-141C", "abc : name", "12 :", ": nameless",
                "-3 : negative", "ID : again", "99999999999999999999 : too long");
    }

    @Test
    void keepsRepeatedIdsForTheCallerToJudge() {
        assertThat(CreatableTypesCatalog.parse("1 : A\n1 : B\n").entries()).containsExactly(new Entry(1, "A"),
                new Entry(1, "B"));
    }

    @Test
    void entriesAreValidated() {
        assertThatThrownBy(() -> new Entry(-1, "x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Entry(1, " ")).isInstanceOf(IllegalArgumentException.class);
        assertThat(new CreatableTypesCatalog(List.of(), List.of()).isEmpty()).isTrue();
    }
}
