"""`tpevent bench --trace PATH` where PATH is a FIFO, or a link to one as /dev/stdout
is to a pipe (issue 47, item 1): the reader gets the whole trace as JSON and the FIFO
is still a FIFO (the trace used to be renamed over it, a regular file left in its place).

    check_trace_fifo.py TOOL DIR
"""
import json
import os
import stat
import subprocess
import sys
import threading


def read_fifo(path, into):
    with open(path, "rb") as f:  # waits for the writer
        into.append(f.read())


def release_reader(path):
    """Lets a reader still waiting in its open out (the tool never opened the FIFO)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def run(tool, fifo, target):
    got = []
    # A daemon: left waiting in its open where the FIFO was renamed over (then no
    # writer of this path ever reaches it), and the check fails rather than hangs.
    reader = threading.Thread(target=read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    command = [tool, "bench", "--device", "cpu:0", "--iterations", "20", "--trace", target]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if reader.is_alive():
        release_reader(fifo)
    reader.join(timeout=30)
    text = got[0] if got else b""
    failures = []
    if done.returncode != 0:
        failures.append(f"exit {done.returncode}: {done.stderr.strip()}")
    if not stat.S_ISFIFO(os.lstat(fifo).st_mode):
        failures.append(f"{fifo} is no longer a FIFO")
    try:
        events = json.loads(text)["traceEvents"]
        if not any(e.get("ph") == "X" for e in events):
            failures.append("the trace has no range")
    except (ValueError, KeyError) as error:
        failures.append(f"the reader got no trace ({len(text)} bytes): {error}")
    print(f"--trace {target}: {len(text)} bytes read, " + ("; ".join(failures) or "ok"))
    return failures


def main():
    tool, folder = sys.argv[1], sys.argv[2]
    os.makedirs(folder, exist_ok=True)
    fifo, link = os.path.join(folder, "bench.fifo"), os.path.join(folder, "bench.fifo.link")
    for path in (fifo, link):
        if os.path.lexists(path):
            os.unlink(path)
    os.mkfifo(fifo)
    os.symlink(fifo, link)
    failures = run(tool, fifo, fifo) + run(tool, fifo, link)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
