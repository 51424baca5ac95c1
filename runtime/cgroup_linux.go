//go:build linux

package runtime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// procsRefused reports whether the pids cgroup refused a fork.
func (sb *sandbox) procsRefused() bool {
	if sb.cgroup == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(sb.cgroup, "pids.events"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "max" && f[1] != "0" {
			return true
		}
	}
	return false
}

// makePidsCgroup creates a pids cgroup below the runner's own one with
// pids.max = procs and returns its directory.
func makePidsCgroup(id string, procs int) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("pids cgroup: %w", err)
	}
	var bases []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case strings.Contains(","+parts[1]+",", ",pids,"):
			bases = append(bases, filepath.Join("/sys/fs/cgroup/pids", parts[2]))
		case parts[1] == "" && parts[0] == "0":
			bases = append(bases, filepath.Join("/sys/fs/cgroup", parts[2]))
		}
	}
	var lastErr error = errors.New("no pids controller mounted")
	for _, base := range bases {
		removeStaleCgroups(base, os.Geteuid())
		dir := filepath.Join(base, cgroupName(os.Geteuid(), os.Getpid(), id))
		if err := os.Mkdir(dir, 0o755); err != nil {
			lastErr = err
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(procs)), 0o644); err != nil {
			os.Remove(dir)
			lastErr = err
			continue
		}
		return dir, nil
	}
	return "", fmt.Errorf("pids cgroup: %w", lastErr)
}

// cgroupName names a run's cgroup after the runner's user and process, so
// that stale-cgroup cleanup can tell its own from any other program's.
func cgroupName(uid, pid int, id string) string {
	return fmt.Sprintf("codeloom-u%d-p%d-%s", uid, pid, id)
}

// parseCgroupName returns the user and runner pid a cgroupName encodes.
func parseCgroupName(name string) (uid, pid int, ok bool) {
	rest, found := strings.CutPrefix(name, "codeloom-u")
	if !found {
		return 0, 0, false
	}
	f := strings.SplitN(rest, "-", 3)
	if len(f) != 3 || !strings.HasPrefix(f[1], "p") || len(f[2]) != 24 {
		return 0, 0, false
	}
	uid, err1 := strconv.Atoi(f[0])
	pid, err2 := strconv.Atoi(f[1][1:])
	if err1 != nil || err2 != nil || pid <= 0 {
		return 0, 0, false
	}
	return uid, pid, true
}

// removeStaleCgroups removes the empty run cgroups that runners of user uid
// left when they died mid-run: named by cgroupName for that user, owned by
// that user, and whose runner process is gone (a live runner may be setting
// one up). Other programs' cgroups, even named codeloom-*, are left alone.
func removeStaleCgroups(base string, uid int) {
	old, _ := filepath.Glob(filepath.Join(base, "codeloom-u*"))
	for _, dir := range old {
		u, pid, ok := parseCgroupName(filepath.Base(dir))
		if !ok || u != uid {
			continue
		}
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue
		}
		if processAlive(pid) || len(cgroupPids(dir)) > 0 {
			continue
		}
		_ = os.Remove(dir) // fails harmlessly if in use
	}
}

// processAlive reports whether process pid exists (a pid reused by another
// process counts as alive: the cgroup then waits for a later cleanup).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func cgroupPids(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
