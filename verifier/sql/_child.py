"""The query process (``python -m verifier.sql._child READ_FD WRITE_FD``): serves checked queries.

Started by ``verifier.sql._guard.QueryProcess``; holds the DuckDB connections that untrusted SQL
runs on (opened from ``ConnectionSpec`` factories, an LRU of ``CHILD_CONNECTIONS``) and serves
queries over the two pipe file descriptors it inherits until the parent closes them. Each query
runs under ``execute_checked``'s own interrupt at its limit; the parent kills this process when
that does not land, or when its RSS passes the budget. Not imported by the package.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any, Hashable

from verifier.sql._execute import QueryFailed, QueryTimeout, execute_checked
from verifier.sql._guard import CHILD_CONNECTIONS, LIMITS

_STARTED = pickle.dumps(("started", True))


def _serve(rfd: int, wfd: int) -> None:
    """The child's loop. Request: ``(key, factory | None, args | None, sql, limit, row_cap, kill_after)``
    (the factory only when the caller's mirror says the connection is not open). When it opens
    a connection it first sends ``("started", opened)``; then the reply: ``("ok", QueryResult)``
    or ``("err", "timeout" | "failed", message)``."""
    rx, tx = Connection(rfd, writable=False), Connection(wfd, readable=False)
    cons: OrderedDict[Hashable, Any] = OrderedDict()
    cap = LIMITS.result_bytes_cap
    tx.send_bytes(pickle.dumps(("ready",)))
    while True:
        try:
            key, factory, args, sql, limit, row_cap, kill_after = pickle.loads(rx.recv_bytes())
        except EOFError:
            return
        if key not in cons:
            try:
                if factory is None:
                    raise QueryFailed(sql, "the query process lost the connection")
                cons[key] = factory(*args)
            except Exception as exc:  # noqa: BLE001 - a connection that cannot be opened
                tx.send_bytes(pickle.dumps(("started", False)))
                message = exc.message if isinstance(exc, QueryFailed) else f"{type(exc).__name__}: {str(exc)[:300]}"
                tx.send_bytes(pickle.dumps(("err", "failed", message)))
                continue
            while len(cons) > CHILD_CONNECTIONS:
                _, old = cons.popitem(last=False)
                old.close()
            tx.send_bytes(_STARTED)
        cons.move_to_end(key)
        obj = cons[key]
        try:
            # a kernel timer ends this process at the kill deadline (SIGALRM, default action:
            # terminate), even when the caller is not scheduled in time to kill it
            signal.setitimer(signal.ITIMER_REAL, kill_after)
            try:
                res = execute_checked(getattr(obj, "con", obj), sql, time_limit_s=limit, row_cap=row_cap)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            data = pickle.dumps(("ok", res), pickle.HIGHEST_PROTOCOL)
            if len(data) > cap:
                data = pickle.dumps(("err", "failed", f"the result is {len(data) / 2**20:.0f} MiB; at most {cap / 2**20:.0f} MiB are returned"))
        except QueryTimeout:
            data = pickle.dumps(("err", "timeout", ""))
        except QueryFailed as exc:
            data = pickle.dumps(("err", "failed", exc.message))
        except Exception as exc:  # noqa: BLE001 - a value that cannot be fetched or pickled
            data = pickle.dumps(("err", "failed", f"{type(exc).__name__}: {str(exc)[:300]}"))
        del obj
        tx.send_bytes(data)


if __name__ == "__main__":
    os.dup2(2, 1)  # stray prints from native code go to stderr, never into the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's; the child ends with its pipe
    signal.signal(signal.SIGALRM, signal.SIG_DFL)  # the kill deadline (see _serve)
    _serve(int(sys.argv[1]), int(sys.argv[2]))
