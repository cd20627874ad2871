"""Runs one command for tests/conftest.py's early start of the CUDA simulator suite, and writes
its exit status where the tests can find it.

``python tests/cudasim_supervise.py DIR TIMEOUT COMMAND...`` runs COMMAND with its stdout and
stderr in ``DIR/output.log`` and, once it is done, writes its exit status to ``DIR/rc``
(through a temporary file and a rename, so a reader never sees half of it): a number, or
``timeout`` when it ran past TIMEOUT seconds and was killed. If this process's parent (the
pytest run that started it) goes away first, the command is killed and DIR removed.
"""
import os
import shutil
import subprocess
import sys
import time


def main(argv):
    rundir, timeout, command = argv[0], float(argv[1]), argv[2:]
    parent = os.getppid()
    with open(os.path.join(rundir, "output.log"), "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            try:
                rc = str(proc.wait(timeout=1.0))
                break
            except subprocess.TimeoutExpired:
                pass
            if os.getppid() != parent:  # orphaned: nobody will read the result
                proc.kill()
                proc.wait()
                rc = None
                break
            if time.monotonic() >= deadline:
                proc.kill()
                proc.wait()
                rc = "timeout"
                break
    if rc is None:
        shutil.rmtree(rundir, ignore_errors=True)
        return 1
    tmp = os.path.join(rundir, "rc.tmp")
    with open(tmp, "w") as fh:
        fh.write(rc)
    os.replace(tmp, os.path.join(rundir, "rc"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
