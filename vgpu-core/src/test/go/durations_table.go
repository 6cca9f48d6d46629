// Prints the expected-value tables of DurationsTest.java as Java source lines: every value, every
// Duration.String() output and every error message comes from Go's own time package.
// Regenerate with any Go toolchain (the tables were made with Go 1.19.8, Debian golang-1.19-go):
//
//	go run vgpu-core/src/test/go/durations_table.go
//
// Not part of the Maven build.
package main

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
)

func jq(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		default:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func main() {
	valid := []string{
		"0", "+0", "-0", "5s", "30s", "1478s", "-5s", "+5s", "5.0s", "5.6s", "5.s", ".5s", "1.0s", "1.00s", "1.004s",
		"1.0040s", "100.00100s", "10ns", "11us", "12\u00b5s", "12\u03bcs", "13ms", "14s", "15m", "16h", "3h30m", "10.5s4m",
		"-2m3.4s", "1h2m3s4ms5us6ns", "39h9m14.425s", "52763797000ns", "0.3333333333333333333h",
		"9007199254740993ns", "9223372036854775807ns", "9223372036854775.807us", "9223372036s854ms775us807ns",
		"-9223372036854775808ns", "-9223372036854775.808us", "-9223372036s854ms775us808ns",
		"-2562047h47m16.854775808s", "0.100000000000000000000h", "0.830103483285477580700h",
		"1.0000000000000000001s", "0.9999999999999999999s", "1.5h", "1h2m3.5s", "1m1m", "300ms", "2h45m", "-1.5h",
		"00010s", "1.s", "1h1h1h", "0s", "0.0s", "-0s", "+.5s", "0.000000001s", "0.0000000009s", "1.9999999999s",
		"1.5\u00b5s", "0.5ns", "2562047h47m16.854775807s", "0.9223372036854775808ns", "0.92233720368547758089h",
		"0.922337203685477580h", "9223372036854775808ns9223372036854775808ns",
	}
	for _, in := range valid {
		d, err := time.ParseDuration(in)
		if err != nil {
			panic(in)
		}
		fmt.Printf("                valid(%s, %dL, %s),\n", jq(in), int64(d), jq(d.String()))
	}
	fmt.Println("----")
	invalid := []string{
		"", "3", "-", "+", "s", ".", "-.", ".s", "+.s", "1d", "30", "30 s", " 30s", "30s ", "30S", "1e3s", "1H",
		"1sec", "1w", "0x10s", "1_000s", "--5s", "+-5s", "5s-", "1.2.3s", "1..2s", "5\x00s", "5s\n", "\t5s",
		"\u00b5s", "1\u00b5", "1\u03bc", "1us5", "9223372036854775810ns", "9223372036854775808ns", "-9223372036854775809ns",
		"9223372036854776us", "3000000h", "9223372036854775.808us", "9223372036854ms775us808ns",
		"99999999999999999999s", "1\"s", "1\\s", "1\u65e5", "1\u00a0s", "\u0663s", "\uFFFD", "1s\x7f",
		"-9223372036854775808ns1ns", "2562047h47m16.854775808s", "2562048h", "-2562048h", "1s\U0001F642",
	}
	for _, in := range invalid {
		_, err := time.ParseDuration(in)
		if err == nil {
			panic(in)
		}
		fmt.Printf("                invalid(%s, %s),\n", jq(in), jq(err.Error()))
	}
}
