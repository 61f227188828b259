"""What a user does today with a wide CSV (`rater,<unit1>,<unit2>,...`, one row per rater, an
empty cell for a missing value): pandas reads it and the Python `krippendorff` package computes
alpha on the raters x units matrix. Timed end to end from the file, as the benchmark times
`calibench alpha FILE`.

usage: python_wide.py WIDE.csv LEVEL
Prints one line: `seconds=<read + alpha> alpha=<value>` (imports excluded, as the process's
wall time under /usr/bin/time includes them); a MemoryError is reported as such.
"""

import sys
import time

import krippendorff
import pandas as pd

start = time.perf_counter()
try:
    matrix = pd.read_csv(sys.argv[1], index_col=0).to_numpy(dtype=float)
    value = krippendorff.alpha(reliability_data=matrix, level_of_measurement=sys.argv[2])
except MemoryError:
    print(f"seconds={time.perf_counter() - start:.3f} alpha=MemoryError")
    sys.exit(3)
print(f"seconds={time.perf_counter() - start:.3f} alpha={value:.9f}")
