"""What merely parsing a corpus costs in Python: every line of a JSON Lines file through orjson,
nothing kept. benches/bench.sh times it beside `calibench run` on the same file, so the ratio
holds on any machine. Usage: python_parse.py FILE"""
import sys

import orjson

n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        orjson.loads(line)
        n += 1
print(f"parsed {n} lines", file=sys.stderr)
