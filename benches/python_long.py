"""What a user does today with a long CSV (`unit,rater,value`): pandas reads it, pivots it to a
raters x units matrix, and the Python `krippendorff` package computes alpha. Timed end to end
from the file, as the benchmark times `calibench alpha FILE`.

usage: python_long.py LONG.csv LEVEL
Prints one line: `seconds=<read + pivot + alpha> alpha=<value>` (imports excluded, as the
process's wall time under /usr/bin/time includes them); a MemoryError is reported as such.
"""

import sys
import time

import krippendorff
import pandas as pd

start = time.perf_counter()
try:
    ratings = pd.read_csv(sys.argv[1], dtype={"unit": str, "rater": str})
    matrix = ratings.pivot(index="rater", columns="unit", values="value").to_numpy()
    value = krippendorff.alpha(reliability_data=matrix, level_of_measurement=sys.argv[2])
except MemoryError:
    print(f"seconds={time.perf_counter() - start:.3f} alpha=MemoryError")
    sys.exit(3)
print(f"seconds={time.perf_counter() - start:.3f} alpha={value:.9f}")
