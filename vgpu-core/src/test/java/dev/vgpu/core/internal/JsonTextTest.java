package dev.vgpu.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTextTest {

    @Test
    void writesMapsInTheirOrderListsStringsNumbersAndBooleans() {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("b", List.of(1, 2L, true));
        doc.put("a", Map.of("x", "y"));
        assertThat(JsonText.write(doc)).isEqualTo("{\"b\":[1,2,true],\"a\":{\"x\":\"y\"}}");
    }

    @Test
    void escapesWhatWouldBreakTheStringOrItsLine() {
        assertThat(JsonText.write("q\" b\\ n\n r\r t\t nul\u0000 del\u007f ls\u2028 ps\u2029 ü"))
                .isEqualTo("\"q\\\" b\\\\ n\\n r\\r t\\t nul\\u0000 del\\u007f ls\\u2028 ps\\u2029 ü\"");
    }

    @Test
    void refusesWhatHasNoJsonFormHere() {
        assertThatThrownBy(() -> JsonText.write(Map.of(1, "a"))).hasMessageContaining("key must be a string");
        assertThatThrownBy(() -> JsonText.write(List.of(1.5))).hasMessageContaining("no JSON form for");
    }
}
