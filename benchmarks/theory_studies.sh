#!/usr/bin/env bash
# Regenerate every study under benchmarks/results/theory/ (each study's README.md records its own command).
# Sized for a 2-core machine: about 31 minutes in all when these were made (on 2 cores shared with other
# jobs): eps 8.5 min, d-scaling-quadratic 6.5, delta-scaling 5, d-scaling 5, delta-scaling-hard 3, fixed-beta 2.5.
set -euo pipefail
cd "$(dirname "$0")/.."
export MPLBACKEND=Agg
for study in d-scaling d-scaling-quadratic d-scaling-linesearch delta-scaling delta-scaling-hard eps fixed-beta; do
    python -m theory.studies "$study" --workers 2
done
