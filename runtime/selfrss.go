package runtime

import (
	"os"
	"strconv"
	"strings"
)

// SelfPeakRSS is this process's own peak resident memory in bytes (VmHWM of
// /proc/self/status), 0 where that cannot be read (not Linux). The runner
// uses it to tell its own high-water mark from a child's in the kernel's
// accounting; the UI reports it in the automation file.
func SelfPeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}
