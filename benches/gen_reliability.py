"""Generate reliability matrices for the calibench benchmark, from a fixed seed.

Each matrix is raters x units with 10% of the values missing. Units have a true value and
raters report it with some disagreement, so alpha is neither 0 nor 1. The same array is written
three times: as a wide CSV (`rater,u1,u2,...`, empty cell = missing) for `calibench alpha`, as a
long CSV (`unit,rater,value`, one row per rating given, unit by unit: the layout judge and
annotation exports arrive in), and as a .npy file for the Python `krippendorff` package, so every
side measures exactly the same data.

usage: gen_reliability.py KIND RATERS UNITS OUT_PREFIX
KIND: anchors (values in {0,25,50,75,100}), ordinal101 (integers 0..100), continuous (floats).
"""

import sys

import numpy as np

SEED = 20260421


def matrix(kind: str, raters: int, units: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    if kind == "anchors":
        truth = rng.integers(0, 5, size=units)
        step = rng.choice([-1, 0, 0, 0, 1], size=(raters, units))
        data = np.clip(truth + step, 0, 4) * 25.0
    elif kind == "ordinal101":
        truth = rng.integers(0, 101, size=units)
        data = np.clip(truth + rng.integers(-8, 9, size=(raters, units)), 0, 100).astype(float)
    elif kind == "continuous":
        truth = rng.uniform(0, 100, size=units)
        data = np.round(truth + rng.normal(0, 10, size=(raters, units)), 6)
    else:
        raise SystemExit(f"unknown kind {kind}")
    data[rng.random(size=(raters, units)) < 0.10] = np.nan
    return data


def write_csv(data: np.ndarray, path: str) -> None:
    raters, units = data.shape
    integral = np.all(np.isnan(data) | (data == np.round(data)))
    with open(path, "w") as f:
        f.write("rater," + ",".join(f"u{i}" for i in range(units)) + "\n")
        for r in range(raters):
            row = data[r]
            if integral:
                cells = ["" if np.isnan(v) else str(int(v)) for v in row.tolist()]
            else:
                cells = ["" if np.isnan(v) else repr(v) for v in row.tolist()]
            f.write(f"r{r}," + ",".join(cells) + "\n")


def write_long(data: np.ndarray, path: str) -> None:
    raters, units = data.shape
    integral = np.all(np.isnan(data) | (data == np.round(data)))
    with open(path, "w") as f:
        f.write("unit,rater,value\n")
        columns = data.T.tolist()
        for u in range(units):
            lines = []
            for r, v in enumerate(columns[u]):
                if v != v:  # NaN: a rating not given is no row
                    continue
                lines.append(f"u{u},r{r},{int(v) if integral else repr(v)}\n")
            f.write("".join(lines))


def main() -> None:
    kind, raters, units, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    data = matrix(kind, raters, units)
    write_csv(data, out + ".csv")
    write_long(data, out + "-long.csv")
    np.save(out + ".npy", data)


if __name__ == "__main__":
    main()
