"""The threads around a backward graph: each task's ``TaskThreads``, and the worker pool that
helps run the ready nodes (see ``engine.py``).

Workers are daemon ``threading.Thread`` objects, started on first need and kept for the life of
the process. A worker sleeps on the pool's condition until an owner (a thread inside
``execute``) *shares* its GraphTask, meaning more than one node is ready; it then takes ready nodes
from the newest shared task that has one (a reentrant task is newer than the task that waits on
it) until that task has none left, and goes back to sleep. The number of workers wanted is
``get_num_interop_threads() - 1``: the owner is always one of the threads.

Note [engine busy count]: ``_config.engine_busy`` counts the threads doing backward work now
(owners not waiting on their task, and attached workers). The device layer reads it through
``_config.parallel_kernels()`` to choose serial kernels while several threads run nodes, so
kernel threads and engine workers do not oversubscribe the cores. It is only changed here, under
``_busy_lock``: once per backward call for an owner, and when a worker attaches to or leaves a
task, or an owner sleeps; never per node.
"""
from __future__ import annotations

import os
import threading

from .. import _config

_busy_lock = threading.Lock()


class _ThreadState(threading.local):
    in_engine = False  # this thread is an owner or a worker (a nested execute is reentrant)


_tls = _ThreadState()


def adjust_busy(delta: int) -> None:
    with _busy_lock:
        _config.engine_busy += delta


def enter() -> bool:
    """Called by ``execute`` on entry; True when this is the thread's outermost engine call."""
    if _tls.in_engine:
        return False
    _tls.in_engine = True
    adjust_busy(1)
    return True


def leave() -> None:
    _tls.in_engine = False
    adjust_busy(-1)


class TaskThreads:
    """How threads share one GraphTask (Note [threaded engine] in ``engine.py``): whether it is
    shared, who is inside, and the statistics of the hand-off rule that decides (Note [hand-off
    rule]). Only the owner reads and writes it while the task is not shared; once shared, every
    field but the statistics changes under ``lock``."""

    __slots__ = ("shared", "published", "running", "owner_waiting", "lock", "cond", "pending",
                 "timed", "time_sum", "quiet")

    def __init__(self):
        self.shared = False  # other threads may run nodes: every change under ``lock``
        self.published = False  # listed in the worker pool
        self.running = 0  # nodes being run now (shared mode)
        self.owner_waiting = False
        self.lock = self.cond = None  # made when the task is first shared
        self.pending: list = []  # nodes made ready beside others, not yet checked for hand-off
        self.timed = 0  # nodes the owner timed while others were ready
        self.time_sum = 0.0
        self.quiet = 0  # nodes left to run untimed and unchecked (Note [hand-off rule])

    def share(self) -> None:
        """From now on other threads may run the task's nodes."""
        if self.lock is None:
            self.lock = threading.Lock()
            self.cond = threading.Condition(self.lock)
        with self.lock:
            self.shared = True

    def wait(self, done) -> None:
        """The owner sleeps on the task's condition (``lock`` held) until ``done()``; it does
        not count as busy meanwhile (Note [engine busy count])."""
        if done():
            return
        adjust_busy(-1)
        self.owner_waiting = True
        try:
            while not done():
                self.cond.wait()
        finally:
            self.owner_waiting = False
            adjust_busy(1)


class Pool:
    """Shared tasks and the worker threads that help them (one pool per process)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)  # idle workers
        self.park = threading.Condition(self.lock)  # surplus workers (interop threads lowered)
        self.tasks: list = []  # shared GraphTasks, oldest first
        self.threads: list = []
        self.idle = 0  # workers asleep in ``cond.wait``
        self.wakeups = 0  # notifications sent and not yet consumed by a waking worker

    def request(self, task) -> None:
        """Publish ``task`` (if needed) and wake one idle worker, starting one if none is
        idle and fewer than wanted exist."""
        threads = task.threads
        if (threads.published and self.idle <= self.wakeups
                and len(self.threads) >= _config.NUM_INTEROP_THREADS - 1):
            return  # nobody to wake (read without the lock: a missed wake-up costs speed only)
        with self.lock:
            if not threads.published:
                threads.published = True
                self.tasks.append(task)
            if self.idle > self.wakeups:
                self.wakeups += 1
                self.cond.notify()
            elif len(self.threads) < _config.NUM_INTEROP_THREADS - 1:
                t = threading.Thread(target=self._loop, args=(len(self.threads),),
                                     name=f"jitgrad-engine-{len(self.threads)}", daemon=True)
                self.threads.append(t)
                t.start()

    def withdraw(self, task) -> None:
        """Called by the owner when its task is over."""
        with self.lock:
            task.threads.published = False
            try:
                self.tasks.remove(task)
            except ValueError:
                pass

    def resize(self) -> None:
        """After ``set_num_interop_threads``: wake every worker, so that surplus ones park and
        parked ones that are wanted again come back."""
        with self.lock:
            self.cond.notify_all()
            self.park.notify_all()

    def _pick(self):
        """The newest shared task that has a ready node and no error, or None. Reads the task's
        fields without its lock: a hint, checked again under the lock in ``engine.run_nodes``."""
        for task in reversed(self.tasks):
            if task.threads.shared and task.error is None and task.ready:
                return task
        return None

    def _loop(self, index: int) -> None:
        run_nodes = run_shared_task
        _tls.in_engine = True
        while True:
            with self.lock:
                while index >= _config.NUM_INTEROP_THREADS - 1:
                    self.park.wait()
                task = self._pick()
                while task is None:
                    self.idle += 1
                    try:
                        self.cond.wait()
                    finally:
                        self.idle -= 1
                        if self.wakeups:
                            self.wakeups -= 1
                    if index >= _config.NUM_INTEROP_THREADS - 1:
                        break
                    task = self._pick()
                if task is None:
                    continue
            adjust_busy(1)
            try:
                run_nodes(task, owner=False)
            except BaseException:  # pragma: no cover - run_nodes records node errors itself
                pass
            finally:
                adjust_busy(-1)
                task = None


POOL = Pool()

#: what a worker runs a shared task with: ``engine.run_nodes(task, owner=False)``, registered
#: by the engine module at import (the engine builds on this module, not the other way round)
run_shared_task = None


def set_task_runner(run) -> None:
    global run_shared_task
    run_shared_task = run


def _after_fork_in_child() -> None:
    """Threads do not survive ``fork``: the child starts with a fresh pool and counts."""
    global POOL, _busy_lock
    POOL = Pool()
    _busy_lock = threading.Lock()
    _config.engine_busy = 0
    _tls.in_engine = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
