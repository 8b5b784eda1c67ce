#!/usr/bin/env python3
"""The Python example adapter, made to stop answering: a hung adapter.

Usage: silent_adapter.py [N]

It answers hello and its first N-1 requests (default N = 50) as the example
adapter does, then reads its N-th request and every later one without ever
answering, until its standard input closes. Each process it is started as
counts on its own, so a restarted one answers N-1 requests again. The
conformance and fuzz commands must report it within their time budget, on
standard error, naming the request it stopped answering, and never pass.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import adapter  # noqa: E402


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    seen = 0
    for line in sys.stdin.buffer:
        ans = adapter.handle_line(line)
        if ans is None:
            continue
        if b'"hello"' not in line:
            seen += 1
            if seen >= n:
                continue  # silent from here on
        sys.stdout.write(adapter.json.dumps(ans, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
