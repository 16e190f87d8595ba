package instructions

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The byte loops of ValidID and decimalSyntax say what these expressions say.
var (
	idSyntax      = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
	onlyDots      = regexp.MustCompile(`^\.+$`)
	amountSyntax  = regexp.MustCompile(`^[0-9]{1,40}(\.[0-9]{1,40})?$`)
	syntaxSamples = []string{"", "a", "A-z_0.9:", "{a}", "a b", "a\x00", "é", strings.Repeat("a", 64), strings.Repeat("a", 65),
		"0", "1.", ".1", "1.5", "1..5", "-1", "+1", "1e3", " 1", "1 ", strings.Repeat("9", 40), strings.Repeat("9", 41),
		"1." + strings.Repeat("0", 40), "1." + strings.Repeat("0", 41), "0x10", "１", ".", "..", "...", ".a."}
)

func TestValidIDAndDecimalSyntax_AgreeWithTheirExpressions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "aZ09_.:-{} \x00\xff.1"
	samples := append([]string(nil), syntaxSamples...)
	for range 20000 {
		b := make([]byte, rng.IntN(70))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		samples = append(samples, string(b))
	}
	for _, s := range samples {
		if got, want := ValidID(s), idSyntax.MatchString(s) && !onlyDots.MatchString(s); got != want {
			t.Errorf("ValidID(%q) = %v, the expression says %v", s, got, want)
		}
		if got, want := decimalSyntax(s), amountSyntax.MatchString(s); got != want {
			t.Errorf("decimalSyntax(%q) = %v, the expression says %v", s, got, want)
		}
	}
}
