set -e  # the sched_fairness microbenchmark, run from the repository root on the GPU machine (writes $OUT)
cd calibrate
nvcc -arch=sm_90 -O3 -o "$OUT/fair" sched_fairness.cu
cuobjdump -sass "$OUT/fair" > "$OUT/fair.sass"
"$OUT/fair" lg lds ffma4 ffma2 > "$OUT/fair.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/smi.txt"
date -u > "$OUT/date.txt"
nvcc --version | tail -2 >> "$OUT/date.txt"
rm "$OUT/fair"
head -3 "$OUT/fair.txt"; wc -l "$OUT/fair.txt"
