#!/bin/sh
# The capacity-live example's fake agent: it answers the query on stdin (a query file) with the
# trace that file holds, as a recorded agent would. See experiment.toml.
cat
