"""Entry point of a query process (``python -m verifier.sql._child READ_FD WRITE_FD``).

Started by ``verifier.sql._guard.QueryProcess``; serves checked queries over the two pipe file
descriptors it inherits until the parent closes them. Not imported by the package.
"""

import os
import signal
import sys

if __name__ == "__main__":
    os.dup2(2, 1)  # stray prints from native code go to stderr, never into the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the parent's; the child ends with its pipe
    from verifier.sql._guard import _serve

    _serve(int(sys.argv[1]), int(sys.argv[2]))
