"""What a team would write instead of `calibench import inspect`: inspect_ai's own readers, each
sample's scores turned into (id, epoch, scorer, value) rows. `log` reads the whole log
(read_eval_log); `samples` iterates its samples (read_eval_log_samples).

Usage: python_inspect.py log|samples LOG.eval
"""

import sys

from inspect_ai.log import read_eval_log, read_eval_log_samples


def main() -> None:
    how, path = sys.argv[1], sys.argv[2]
    samples = read_eval_log(path).samples if how == "log" else read_eval_log_samples(path)
    rows = [(s.id, s.epoch, k, v.value) for s in samples for k, v in s.scores.items()]
    print(len(rows))


if __name__ == "__main__":
    main()
