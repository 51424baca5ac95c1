package runtime

import "testing"

// TestSelfPeakRSS: with 64 MiB touched and alive, the process's peak RSS is
// at least that (half is wanted: the margin is for pages not yet counted);
// a unit error (kB read as bytes) or an unread file would show.
func TestSelfPeakRSS(t *testing.T) {
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	if got := SelfPeakRSS(); got < 32<<20 {
		t.Errorf("SelfPeakRSS() = %d with 64 MiB touched", got)
	}
	if buf[len(buf)-4096] != 1 {
		t.Fatal("lost the buffer")
	}
}
