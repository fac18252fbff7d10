"""The command line as the Python tests run it (SHARDPOINT_CLI, set by
ctest)."""
import os
import subprocess

CLI = os.environ.get("SHARDPOINT_CLI", "shardpoint")


def run(*args, code=0):
    """Run the command line; assert its exit code; return the CompletedProcess."""
    args = [str(a) for a in args]
    r = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert r.returncode == code, (
        f"shardpoint {' '.join(args)}\nexit {r.returncode}, expected {code}\n"
        f"stdout: {r.stdout[-2000:]}\nstderr: {r.stderr[-2000:]}")
    return r
