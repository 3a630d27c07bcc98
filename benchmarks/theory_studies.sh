#!/usr/bin/env bash
# Regenerate every study under benchmarks/results/theory/ (each study's README.md records its own command).
# Sized for a 2-core machine: roughly 30-40 minutes in all, most of it in d-scaling and delta-scaling.
set -euo pipefail
cd "$(dirname "$0")/.."
export MPLBACKEND=Agg
for study in d-scaling d-scaling-quadratic d-scaling-linesearch delta-scaling delta-scaling-hard eps fixed-beta; do
    python -m theory.studies "$study" --workers 2
done
