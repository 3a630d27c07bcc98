# Interleaved same-sitting A/B of our default: the code before (/tmp/ov/base) and after (/tmp/ov/after).
. /work/main/.venv/bin/activate
for round in 1 2 3; do
  for cell in "784 1" "3072 32" "150528 1"; do
    for tree in base after; do
      echo "$tree $cell $(cd /tmp/ov/$tree && python -m benchmarks.overhead --child ours-sign-growing $cell) $(cut -d' ' -f1 /proc/loadavg)"
    done
  done
done
