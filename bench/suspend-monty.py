#!/usr/bin/env python3
"""A peer's suspended evaluation: pydantic's Monty (PyPI `pydantic-monty`), a
sandboxed Python for agents, measured as bench/suspend-browser.mjs and
host/examples/suspend_wasm_bench.rs measure Arbores' engines.

    bench/suspend-monty [ROUNDS] [--json]    # makes its virtualenv, then runs this

The program is the closest Python to core/examples/suspend/small.scm: a
helper function and one call of an external function, which pauses the
sandbox and hands the call to the host:

    def greet(name):
        return "hello, " + name
    greet(search("user name"))

and for core/examples/suspend/larger.scm: a dataclass and three instances
of it, a string of 10,000 characters, sixteen one-line functions, a counter
closure, and `asyncio.gather` of three calls of `search` (the third inside
a helper coroutine), as the Scheme program's `par` of three. Monty pauses
at each external call on its own and the host answers each with a future,
so there "start until paused" takes four round trips (the feed and three
answers) until every task waits (a `FutureSnapshot`); Arbores' `par`
suspends once with all three calls.

Monty runs code only in worker subprocesses (`Monty` is a pool of them; a
session is one worker), so every figure here includes a round trip between
this process and a worker (a request written to it, its answer read back)
beside Monty's own work, where Arbores' figures are calls within one
process. Per round:

- start until paused: `session.feed_start(code)` until it returns the
  `FunctionSnapshot` of the call of `search` (sending the source, the
  worker parsing, compiling and running it, the snapshot sent back; for
  the larger program, until the `FutureSnapshot`, as above);
- dump: `snapshot.dump()` (the worker serializes its paused state; the
  bytes come back); the size is that of these bytes;
- load: `session.load_snapshot(bytes)` in another session, on the pool's
  other worker process, checked out just before (not timed:
  `load_snapshot` needs a fresh session), until it re-announces the paused
  call;
- resume: `snapshot.resume({'return_value': 'ok'})` to the end (the answer
  sent, the worker finishing, `MontyComplete` back; its output is checked;
  for the larger program one answer per pending call in one `resume`).

Beside them, for scale: checking a session out of the warm pool (with
`with`, the session's worker attached), and a trivial `feed_run('0')` as
the first feed of a session of its own (a round trip to the worker with
next to no work in it). The pool keeps two workers warm (spawned before
timing). Each figure is the median of ROUNDS (default 200), with the
fastest and slowest; `--json` prints one JSON object per program (what
bench/suspend reads).
"""
import json
import sys
import time

import pydantic_monty as pm

SMALL = '''
def greet(name):
    return "hello, " + name
greet(search("user name"))
'''

LARGER = '''
from dataclasses import dataclass
import asyncio
@dataclass
class Task:
    id: int
    title: str
    done: bool
tasks = [Task(1, "write", False), Task(2, "test", False), Task(3, "land", False)]
notes = "x" * 10000
''' + ''.join(f'def f{i}(x): return x + {i}\n' for i in range(16)) + '''
def make_counter():
    n = 0
    def counter():
        nonlocal n
        n += 1
        return n
    return counter
counter = make_counter()
async def third():
    return f3(len(await search("c")))
await asyncio.gather(search(tasks[0].title), search("b"), third())
'''

# name, source, calls it waits on, what it must give when each is answered 'ok'
PROGRAMS = [('small program', SMALL, 1, 'hello, ok'), ('larger session', LARGER, 3, ['ok', 'ok', 5])]


def start(session, source, calls):
    """Runs `source` until it waits on all its calls: the snapshot then."""
    snap = session.feed_start(source)
    if calls == 1:
        return snap
    # Each call of an external function pauses the sandbox on its own: the
    # host answers it with a future, and the sandbox goes on to the next,
    # until every task waits (a FutureSnapshot).
    for _ in range(calls):
        if not isinstance(snap, pm.FunctionSnapshot) or snap.function_name != 'search':
            raise SystemExit(f'the program did not pause at search: {snap!r}')
        snap = snap.resume({'future': ...})
    return snap


def check_paused(snap, calls):
    want = pm.FunctionSnapshot if calls == 1 else pm.FutureSnapshot
    if not isinstance(snap, want) or (calls == 1 and snap.function_name != 'search'):
        raise SystemExit(f'not paused as expected: {snap!r}')


def answer(snap, calls):
    if calls == 1:
        return snap.resume({'return_value': 'ok'})
    return snap.resume({i: {'return_value': 'ok'} for i in snap.pending_call_ids})


def spread(xs):
    s = sorted(xs)
    return [round(x * 1e6, 2) for x in (s[len(s) // 2], s[0], s[-1])]


def measure(pool, source, calls, want, rounds):
    keys = ['start', 'dump', 'load', 'resume', 'checkout', 'trivial_feed']
    times = {k: [] for k in keys}
    size = 0
    other_worker = 0
    clock = time.perf_counter
    for _ in range(rounds):
        with pool.checkout() as c:
            t = clock()
            c.feed_run('0')
            times['trivial_feed'].append(clock() - t)
        t = clock()
        a = pool.checkout()
        a.__enter__()
        times['checkout'].append(clock() - t)
        try:
            pid = a.worker_pid
            t = clock()
            snap = start(a, source, calls)
            times['start'].append(clock() - t)
            check_paused(snap, calls)
            t = clock()
            dumped = snap.dump()
            times['dump'].append(clock() - t)
            size = len(dumped)
            # Still holding `a`, so that `b` is the pool's other worker: the
            # dump resumes in another process.
            with pool.checkout() as b:
                other_worker += b.worker_pid != pid
                t = clock()
                loaded = b.load_snapshot(dumped)
                times['load'].append(clock() - t)
                check_paused(loaded, calls)
                t = clock()
                done = answer(loaded, calls)
                times['resume'].append(clock() - t)
                if not isinstance(done, pm.MontyComplete) or done.output != want:
                    raise SystemExit(f'resume: {done!r}')
        finally:
            a.__exit__(None, None, None)
    line = {'bytes': size, 'other_worker': other_worker}
    line.update({k: spread(v) for k, v in times.items()})
    return line


def main():
    args = sys.argv[1:]
    as_json = '--json' in args
    rounds = max(1, next((int(a) for a in args if a.isdigit()), 200))
    if not as_json:
        print(f'pydantic-monty {pm.__version__}, rounds: {rounds} (median, fastest .. slowest, µs)')
    with pm.Monty(min_processes=2, max_processes=2) as pool:
        for name, source, calls, want in PROGRAMS:
            line = {'face': 'monty', 'program': name, 'rounds': rounds, 'version': pm.__version__}
            line.update(measure(pool, source, calls, want, rounds))
            if as_json:
                print(json.dumps(line))
                continue
            print(f"{name}: dump {line['bytes']} bytes; loaded in another worker process "
                  f"{line['other_worker']} of {rounds} times")
            for k in ['start', 'dump', 'load', 'resume', 'checkout', 'trivial_feed']:
                m, lo, hi = line[k]
                print(f'  {k:<26} {m:.1f} ({lo:.1f} .. {hi:.1f})')


if __name__ == '__main__':
    main()
