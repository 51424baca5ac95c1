#!/usr/bin/env python3
"""Measure the real CodeLoom window on a project under Xvfb, from outside,
through the automation file (CODELOOM_AUTOMATION) and xdotool.

Usage: bench-gui-window.py BIN PROJECT [--shot FILE] [--runs N] [--display :N]
                           [--profile FILE] [--no-copy] [--no-warm]

--display uses a running X server instead of starting Xvfb; --profile writes
a CPU profile of the app's first 20 s in the last run (CODELOOM_CPUPROFILE);
--no-copy opens PROJECT itself (it must be a scratch copy: the app writes
.codeloom/ into it); --no-warm skips the warming run (the cache is warm).

The project is copied to a temporary folder and opened once to warm its
graph cache; then each run launches the app and reports:
  first_graph_s   launch -> the automation file first lists drawn nodes
  first_graph_cpu_s  the app's CPU time (user+system, from /proc) when the
                  file first listed nodes: on a loaded machine a steadier
                  measure of the work done than the wall clock
  nodes, edges    of the first view (edges hidden by the budget in brackets)
  median_node_px  median on-screen height of the drawn nodes
  stall_ms        the longest UI-goroutine stall the app's watchdog saw
  gap_ms          the longest gap between two rewrites of the automation file
                  (seen from outside; the file is rewritten every 0.5 s)
  click_code_s    a click on a node -> the code pane shows that node
  rss_peak_mb     the app's peak resident memory (VmHWM) at the end of the run
  auto_peak_rss_mb  the same as the automation file reports it (peak_rss_mb)
"""
import json, os, shutil, signal, statistics, subprocess, sys, tempfile, time

def main():
    args = sys.argv[1:]
    shot, runs, display, profile, copy = None, 1, None, None, True
    if "--display" in args:
        i = args.index("--display"); display = args[i + 1]; del args[i:i + 2]
    if "--profile" in args:
        i = args.index("--profile"); profile = os.path.abspath(args[i + 1]); del args[i:i + 2]
    if "--no-copy" in args:
        args.remove("--no-copy"); copy = False
    warm = True
    if "--no-warm" in args:  # the graph cache is warm already (e.g. codeloom index ran)
        args.remove("--no-warm"); warm = False
    if "--shot" in args:
        i = args.index("--shot"); shot = args[i + 1]; del args[i:i + 2]
    if "--runs" in args:
        i = args.index("--runs"); runs = int(args[i + 1]); del args[i:i + 2]
    binary, src = os.path.abspath(args[0]), args[1]
    tmp = tempfile.mkdtemp(prefix="codeloom-bench-")
    if copy:
        proj = os.path.join(tmp, os.path.basename(src.rstrip("/")) or "project")
        shutil.copytree(src, proj, symlinks=True, ignore=shutil.ignore_patterns(".codeloom", "__pycache__"))
    else:
        proj = os.path.abspath(src)
    if display:
        run_all(binary, proj, display, tmp, shot, runs, profile, warm)
        return
    # Xvfb with a display it picks itself.
    r, w = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(w), "-screen", "0", "1400x900x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stderr=subprocess.DEVNULL)
    os.close(w)
    got = b""
    while not got.endswith(b"\n"):
        chunk = os.read(r, 16)
        if not chunk:
            break
        got += chunk
    os.close(r)
    if not got.strip():
        sys.exit("bench-gui-window: Xvfb did not start")
    disp = ":" + got.decode().strip()
    try:
        run_all(binary, proj, disp, tmp, shot, runs, profile, warm)
    finally:
        xvfb.send_signal(signal.SIGTERM)
        xvfb.wait()

def run_all(binary, proj, disp, tmp, shot, runs, profile, warm=True):
    env = dict(os.environ, DISPLAY=disp, FYNE_SCALE="1", LANG="C.UTF-8",
               XDG_CONFIG_HOME=os.path.join(tmp, "config"), XDG_DATA_HOME=os.path.join(tmp, "data"))
    try:
        for run in range(0 if warm else 1, runs + 1):  # run 0 warms the graph cache
            e = env
            if profile and run == runs:
                e = dict(env, CODELOOM_CPUPROFILE=profile)
            r = one(binary, proj, e, tmp, shot if run == runs else None, warm=(run == 0))
            if run > 0 or r.get("error"):
                print(json.dumps(r), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

def cpu_s(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return round((int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK"), 2)
    except (OSError, IndexError, ValueError):
        return None

def peak_rss_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024)
    except OSError:
        pass
    return None

def read(state):
    try:
        with open(state) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def one(binary, proj, env, tmp, shot, warm):
    state = os.path.join(tmp, "state.json")
    if os.path.exists(state):
        os.remove(state)
    env = dict(env, CODELOOM_AUTOMATION=state)
    log = open(os.path.join(tmp, "app.log"), "w")
    t0 = time.time()
    app = subprocess.Popen([binary, "open", proj], env=env, stdout=log, stderr=log)
    res = {"project": os.path.basename(proj)}
    try:
        first, s = None, None
        last_mtime, gap = None, 0.0
        deadline = t0 + (600 if warm else float(os.environ.get("BENCH_DEADLINE", "120")))
        while time.time() < deadline:
            s = read(state)
            try:
                m = os.stat(state).st_mtime
                if last_mtime is not None and m != last_mtime:
                    gap = max(gap, m - last_mtime)
                last_mtime = m
            except OSError:
                pass
            if app.poll() is not None:
                res["error"] = "the app exited (see its log)"
                return res
            if s and s.get("nodes") and not s.get("indexing"):
                first = time.time() - t0
                first_cpu = cpu_s(app.pid)
                break
            time.sleep(0.02)
        if first is None:
            res["error"] = "no graph within the deadline"
            return res
        if warm:
            return res
        res["first_graph_s"] = round(first, 2)
        res["first_graph_cpu_s"] = first_cpu
        # Settle for 3 s, watching the rewrite gaps.
        end = time.time() + 3
        while time.time() < end:
            try:
                m = os.stat(state).st_mtime
                if m != last_mtime:
                    gap = max(gap, m - last_mtime)
                    last_mtime = m
            except OSError:
                pass
            time.sleep(0.02)
        s = read(state) or s
        hs = [n["h"] for n in s["nodes"]]
        res.update(nodes=s["node_count"], edges=s["edge_count"], hidden_edges=s.get("hidden_edges", 0),
                   fallback=s.get("layout_fallback", False), median_node_px=round(statistics.median(hs), 1),
                   view=s["view_title"])
        if shot:
            # The side tree follows the first graph: wait for it (30 s at most).
            end = time.time() + 30
            while time.time() < end and "tree_built" not in ((read(state) or {}).get("timings_ms") or {"tree_built": 0}):
                time.sleep(0.2)
            time.sleep(0.5)
            subprocess.run(["import", "-window", "root", shot], env=env, check=False)
        # Click the visible node nearest the graph's centre; time until its code shows.
        g = s["graph"]
        cx, cy = g["x"] + g["w"] / 2, g["y"] + g["h"] / 2
        inside = [n for n in s["nodes"] if g["x"] < n["x"] < g["x"] + g["w"] and g["y"] < n["y"] < g["y"] + g["h"]
                  and n["kind"] not in ("folder", "group", "") and not n["id"].startswith(("ext:", "rest:", "more:"))]
        if inside:
            n = min(inside, key=lambda n: (n["x"] - cx) ** 2 + (n["y"] - cy) ** 2)
            subprocess.run(["xdotool", "search", "--name", "CodeLoom", "windowactivate", "--sync"], env=env, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t1 = time.time()
            subprocess.run(["xdotool", "mousemove", str(int(n["x"])), str(int(n["y"])), "click", "1"], env=env, check=True)
            while time.time() - t1 < 10:
                s2 = read(state)
                if s2 and s2.get("code_node") == n["id"]:
                    res["click_code_s"] = round(time.time() - t1, 3)
                    break
                time.sleep(0.01)
            res["clicked"] = n["label"]
        time.sleep(1)
        s = read(state) or s
        res["stall_ms"] = s.get("stall_max_ms")
        res["stall_in"] = s.get("stall_what", "")
        res["gap_ms"] = round(gap * 1000)
        res["rss_peak_mb"] = peak_rss_mb(app.pid)
        res["auto_peak_rss_mb"] = s.get("peak_rss_mb")  # as the app reports it
        if s.get("timings_ms"):
            res["timings_ms"] = s["timings_ms"]
        if s.get("cpu_ms"):
            res["cpu_ms"] = s["cpu_ms"]

        return res
    finally:
        app.terminate()
        try:
            app.wait(10)
        except subprocess.TimeoutExpired:
            app.kill()
        log.close()
        if os.environ.get("BENCH_KEEP_LOG"):
            shutil.copy(os.path.join(tmp, "app.log"), os.environ["BENCH_KEEP_LOG"])

if __name__ == "__main__":
    main()
