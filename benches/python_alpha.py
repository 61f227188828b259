"""Time the Python `krippendorff` package on a .npy matrix (raters x units, NaN = missing).

usage: python_alpha.py MATRIX.npy LEVEL
Runs the alpha call three times and prints one line: `seconds=<fastest call> alpha=<value>`;
a MemoryError is reported as such.
"""

import sys
import time

import krippendorff
import numpy as np

data = np.load(sys.argv[1])
level = sys.argv[2]
best = float("inf")
for _ in range(3):
    start = time.perf_counter()
    try:
        value = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    except MemoryError:
        print(f"seconds={time.perf_counter() - start:.3f} alpha=MemoryError")
        sys.exit(3)
    best = min(best, time.perf_counter() - start)
print(f"seconds={best:.3f} alpha={value:.9f}")
