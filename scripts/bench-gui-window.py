#!/usr/bin/env python3
"""Measure the real CodeLoom window on a project under Xvfb, from outside,
through the automation file (CODELOOM_AUTOMATION) and xdotool.

Usage: bench-gui-window.py BIN PROJECT [--shot FILE] [--runs N]

The project is copied to a temporary folder and opened once to warm its
graph cache; then each run launches the app and reports:
  first_graph_s   launch -> the automation file first lists drawn nodes
  nodes, edges    of the first view (edges hidden by the budget in brackets)
  median_node_px  median on-screen height of the drawn nodes
  stall_ms        the longest UI-goroutine stall the app's watchdog saw
  gap_ms          the longest gap between two rewrites of the automation file
                  (seen from outside; the file is rewritten every 0.5 s)
  click_code_s    a click on a node -> the code pane shows that node
"""
import json, os, shutil, signal, statistics, subprocess, sys, tempfile, time

def main():
    args = sys.argv[1:]
    shot, runs = None, 1
    if "--shot" in args:
        i = args.index("--shot"); shot = args[i + 1]; del args[i:i + 2]
    if "--runs" in args:
        i = args.index("--runs"); runs = int(args[i + 1]); del args[i:i + 2]
    binary, src = os.path.abspath(args[0]), args[1]
    tmp = tempfile.mkdtemp(prefix="codeloom-bench-")
    proj = os.path.join(tmp, os.path.basename(src.rstrip("/")) or "project")
    shutil.copytree(src, proj, symlinks=True, ignore=shutil.ignore_patterns(".codeloom", "__pycache__"))
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
    env = dict(os.environ, DISPLAY=disp, FYNE_SCALE="1", LANG="C.UTF-8",
               XDG_CONFIG_HOME=os.path.join(tmp, "config"), XDG_DATA_HOME=os.path.join(tmp, "data"))
    try:
        for run in range(runs + 1):  # run 0 warms the graph cache
            r = one(binary, proj, env, tmp, shot if run == runs else None, warm=(run == 0))
            if run > 0:
                print(json.dumps(r))
    finally:
        xvfb.send_signal(signal.SIGTERM)
        xvfb.wait()
        shutil.rmtree(tmp, ignore_errors=True)

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
        deadline = t0 + (600 if warm else 120)
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
                break
            time.sleep(0.02)
        if first is None:
            res["error"] = "no graph within the deadline"
            return res
        if warm:
            return res
        res["first_graph_s"] = round(first, 2)
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
